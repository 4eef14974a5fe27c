//! §5.3: an origin asking for a signature. `Accept-Signature` (RFC 9421
//! §5.1) names the components and parameters it wants; the answer to an
//! unsigned or refused request is 403, to a replayed one 429.
//!
//! ```
//! use mannerly_botauth::accept::{challenge, SignatureRequest};
//! use mannerly_botauth::Outcome;
//! let ask = SignatureRequest::web_bot_auth("sig1");
//! let c = challenge(&Outcome::Unsigned, &ask).unwrap().unwrap();
//! assert_eq!(c.status, 403);
//! assert_eq!(
//!     c.accept_signature,
//!     r#"sig1=("@authority" "signature-agent";key="sig1");created;expires;keyid;tag="web-bot-auth""#
//! );
//! ```

use sfv::{BareItem, Dictionary, FieldType, InnerList, Item, Key, ListEntry, Parameters};

use crate::{Error, Outcome, Rejection};

/// What an origin asks a signer for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureRequest {
    /// The label the signature is to carry (`sig1`).
    pub label: String,
    /// Components to cover besides `@authority` and the agent's member
    /// (`@method`, `@path`, ...).
    pub components: Vec<String>,
    /// A nonce the signer must use (after a replay), if any.
    pub nonce: Option<String>,
}

impl SignatureRequest {
    /// The profile's minimum: `@authority`, the agent's member, `created`,
    /// `expires`, `keyid`, `tag="web-bot-auth"`.
    pub fn web_bot_auth(label: &str) -> SignatureRequest {
        SignatureRequest {
            label: label.to_owned(),
            components: Vec::new(),
            nonce: None,
        }
    }
}

/// An origin's answer to a request it will not take as signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// 403, or 429 when a signature or nonce was replayed.
    pub status: u16,
    /// The `Accept-Signature` field value.
    pub accept_signature: String,
}

fn key(s: &str) -> Result<Key, Error> {
    Key::from_string(s.to_owned()).map_err(|(e, _)| Error::Field(format!("`{s}`: {e}")))
}

fn string(s: &str) -> Result<BareItem, Error> {
    sfv::String::from_string(s.to_owned())
        .map(BareItem::String)
        .map_err(|(e, _)| Error::Field(format!("`{s}`: {e}")))
}

/// The `Accept-Signature` value for `ask`.
pub fn accept_signature(ask: &SignatureRequest) -> Result<String, Error> {
    let mut items = vec![Item::new(string("@authority")?)];
    let mut agent = Parameters::new();
    agent.insert(key("key")?, string(&ask.label)?);
    items.push(Item {
        bare_item: string("signature-agent")?,
        params: agent,
    });
    for c in &ask.components {
        items.push(Item::new(string(&c.to_ascii_lowercase())?));
    }
    let mut params = Parameters::new();
    for flag in ["created", "expires", "keyid"] {
        params.insert(key(flag)?, BareItem::Boolean(true));
    }
    if let Some(n) = &ask.nonce {
        params.insert(key("nonce")?, string(n)?);
    }
    params.insert(key("tag")?, string("web-bot-auth")?);
    let mut d = Dictionary::new();
    d.insert(
        key(&ask.label)?,
        ListEntry::InnerList(InnerList { items, params }),
    );
    d.serialize()
        .ok_or_else(|| Error::Field("empty Accept-Signature".into()))
}

/// What an origin that requires signatures answers: `None` when the
/// request verified, or when it is unverified (a key nobody could fetch:
/// a new signature would not help, and what to do is the origin's policy);
/// 429 for a replay (ask with a fresh nonce); 403 otherwise.
pub fn challenge(outcome: &Outcome, ask: &SignatureRequest) -> Result<Option<Challenge>, Error> {
    let status = match outcome {
        Outcome::Verified { .. } | Outcome::Unverified { .. } => return Ok(None),
        Outcome::Invalid {
            reason: Rejection::Replayed | Rejection::ReplayCacheFull,
        } => 429,
        _ => 403,
    };
    Ok(Some(Challenge {
        status,
        accept_signature: accept_signature(ask)?,
    }))
}
