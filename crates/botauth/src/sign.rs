//! The crawler side: add `Signature-Agent`, `Signature-Input` and
//! `Signature` to an outgoing request.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sfv::{BareItem, Dictionary, FieldType, InnerList, Integer, Item, Key, ListEntry, Parameters};

use crate::base::{signature_base, Message};
use crate::{Error, KeyPair, UnixMillis};

/// How the `Signature-Agent` header names the key directory: the URL of
/// the JWK Set, which verifiers fetch as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentForm {
    /// `Signature-Agent: sig1="https://crawler.example/.well-known/..."`:
    /// one member keyed to the signature's label, covered as
    /// `"signature-agent";key="sig1"` (the editor's copy, §5.2.1; the form
    /// signers must send).
    Dictionary {
        /// The JWK Set's URL.
        url: String,
    },
    /// The legacy bare string of draft -00: `Signature-Agent:
    /// "https://..."`, for verifiers that know nothing newer.
    Legacy {
        /// The JWK Set's URL.
        url: String,
    },
    /// No `Signature-Agent` header.
    None,
}

impl AgentForm {
    /// The dictionary form.
    pub fn dictionary(url: &str) -> AgentForm {
        AgentForm::Dictionary { url: url.into() }
    }
}

/// What to sign and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignConfig {
    /// The signature's label in the dictionaries (`sig1`).
    pub label: String,
    /// How `Signature-Agent` names the key directory.
    pub agent: AgentForm,
    /// Covered components besides `@authority` and the agent:
    /// `@method`, `@path`, `@target-uri`, `content-digest`, or identifiers
    /// with parameters such as `"@query-param";name="q"` and, to cover
    /// another signature, `"signature";key="agent"`. A message that
    /// already carries signatures keeps them: the headers returned are
    /// added beside them, and their lines combine into one dictionary.
    pub extra_components: Vec<String>,
    /// When the signature is made (`created`, in whole seconds on the wire).
    pub created: UnixMillis,
    /// Seconds until `expires` (60; at most 86,400).
    pub validity: i64,
    /// A random 64-byte nonce, base64.
    pub nonce: bool,
    /// The `tag` parameter (`web-bot-auth`).
    pub tag: String,
}

impl SignConfig {
    /// Defaults for a signature made at `created`: label `sig1`, 60 s
    /// validity, a nonce, `tag="web-bot-auth"`.
    pub fn new(created: UnixMillis, agent: AgentForm) -> SignConfig {
        SignConfig {
            label: "sig1".into(),
            agent,
            extra_components: Vec::new(),
            created,
            validity: 60,
            nonce: true,
            tag: "web-bot-auth".into(),
        }
    }
}

fn key(s: &str) -> Result<Key, Error> {
    Key::from_string(s.to_owned())
        .map_err(|(e, _)| Error::Field(format!("`{s}` is not a structured-field key: {e}")))
}

fn string(s: &str) -> Result<BareItem, Error> {
    sfv::String::from_string(s.to_owned())
        .map(BareItem::String)
        .map_err(|(e, _)| Error::Field(format!("`{s}` is not a structured-field string: {e}")))
}

fn int(n: i64) -> Result<BareItem, Error> {
    Integer::try_from(n)
        .map(BareItem::Integer)
        .map_err(|e| Error::Field(format!("{n}: {e}")))
}

/// A component to cover: a bare name (`@method`, `content-digest`), or a
/// serialised identifier with parameters (`"signature";key="sig1"`,
/// `"@query-param";name="q"`).
fn component(c: &str) -> Result<Item, Error> {
    if c.starts_with('"') {
        return sfv::Parser::new(c.as_bytes())
            .parse::<Item>()
            .map_err(|e| Error::Field(format!("component {c}: {e}")));
    }
    Ok(Item::new(string(&c.to_ascii_lowercase())?))
}

/// Signs `msg`: returns the headers to add (`Signature-Agent` when the
/// form has one, `Signature-Input`, `Signature`), serialised canonically.
pub fn sign_request(
    pair: &KeyPair,
    msg: &Message,
    config: &SignConfig,
) -> Result<Vec<(String, String)>, Error> {
    if !(1..=86_400).contains(&config.validity) {
        return Err(Error::Validity(config.validity));
    }
    let mut headers = Vec::new();
    let mut items = vec![Item::new(string("@authority")?)];
    let agent_value = match &config.agent {
        AgentForm::Dictionary { url } => {
            let member = &config.label;
            let mut d = Dictionary::new();
            d.insert(key(member)?, ListEntry::Item(Item::new(string(url)?)));
            let mut params = Parameters::new();
            params.insert(key("key")?, string(member)?);
            items.push(Item {
                bare_item: string("signature-agent")?,
                params,
            });
            d.serialize()
        }
        AgentForm::Legacy { url } => {
            items.push(Item::new(string("signature-agent")?));
            Some(Item::new(string(url)?).serialize())
        }
        AgentForm::None => None,
    };
    if let Some(v) = &agent_value {
        headers.push(("Signature-Agent".to_owned(), v.clone()));
    }
    for c in &config.extra_components {
        items.push(component(c)?);
    }
    let mut params = Parameters::new();
    let created = i64::try_from(config.created.as_secs()).unwrap_or(i64::MAX);
    params.insert(key("created")?, int(created)?);
    params.insert(
        key("expires")?,
        int(created.saturating_add(config.validity))?,
    );
    params.insert(key("keyid")?, string(&pair.keyid())?);
    params.insert(key("alg")?, string("ed25519")?);
    if config.nonce {
        let mut n = [0u8; 64];
        rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut n);
        params.insert(key("nonce")?, string(&STANDARD.encode(n))?);
    }
    params.insert(key("tag")?, string(&config.tag)?);
    let covered = InnerList { items, params };
    let mut with_agent = msg.clone();
    with_agent.headers.extend(headers.iter().cloned());
    let base = signature_base(&covered, &with_agent, None)?;
    let sig = pair.sign(base.as_bytes());
    let mut input = Dictionary::new();
    input.insert(key(&config.label)?, ListEntry::InnerList(covered));
    headers.push((
        "Signature-Input".to_owned(),
        input
            .serialize()
            .ok_or_else(|| Error::Field("empty Signature-Input".into()))?,
    ));
    let mut sigdict = Dictionary::new();
    sigdict.insert(
        key(&config.label)?,
        ListEntry::Item(Item::new(BareItem::ByteSequence(sig.to_vec()))),
    );
    headers.push((
        "Signature".to_owned(),
        sigdict
            .serialize()
            .ok_or_else(|| Error::Field("empty signature".into()))?,
    ));
    Ok(headers)
}

/// Signs a reqwest request in place (adds the three headers).
pub fn sign_reqwest(
    pair: &KeyPair,
    req: &mut reqwest::Request,
    config: &SignConfig,
) -> Result<(), Error> {
    let headers = sign_request(pair, &Message::from_reqwest(req), config)?;
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| Error::Field(e.to_string()))?;
        let value =
            reqwest::header::HeaderValue::from_str(&v).map_err(|e| Error::Field(e.to_string()))?;
        req.headers_mut().insert(name, value);
    }
    Ok(())
}
