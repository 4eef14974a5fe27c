//! The server side: check a request's Web Bot Auth signature.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sfv::{BareItem, Dictionary, InnerList, ListEntry, Parser};

use crate::base::{signature_base, Message, Response};
use crate::keys::{Jwk, RFC9421_TEST_KEY_X};
use crate::UnixMillis;

/// The result of verification. The three outcomes stay distinct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A valid signature by `keyid`; `agent` is the key directory URL the
    /// `Signature-Agent` header named, if any.
    Verified {
        /// The key directory URL the `Signature-Agent` header named, if any.
        agent: Option<String>,
        /// The signature's `keyid`.
        keyid: String,
        /// The RFC 7638 thumbprint of the key that verified the signature,
        /// computed from the key (what identifies the signer).
        thumbprint: String,
        /// The signature's label (`sig1`).
        label: String,
    },
    /// Signed, but not acceptably: the reason says which check failed.
    Invalid {
        /// Which check failed.
        reason: Rejection,
    },
    /// No signature at all.
    Unsigned,
}

/// Why a signature was refused. Match on the variant (a server maps them
/// to status codes, bindings to exception classes); the display is the
/// reason for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// One of `Signature-Input` and `Signature` without the other.
    #[error("{present} without {missing}")]
    HalfSigned {
        /// The header present.
        present: &'static str,
        /// The header missing.
        missing: &'static str,
    },
    /// A signature header is not what RFC 9421 says it must be.
    #[error("{header} {detail}")]
    MalformedHeader {
        /// The header.
        header: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// No signature with `tag="web-bot-auth"` (or none at all, outside
    /// the profile).
    #[error("{}", if *.web_bot_auth { "no signature with tag=\"web-bot-auth\"" } else { "no signature in Signature-Input" })]
    NoSignature {
        /// Whether the Web Bot Auth profile was required.
        web_bot_auth: bool,
    },
    /// An algorithm other than Ed25519.
    #[error("alg {0} is not supported (Ed25519 only)")]
    UnsupportedAlgorithm(String),
    /// No `keyid` parameter.
    #[error("no keyid")]
    NoKeyId,
    /// The profile requires `created` and `expires`.
    #[error("created and expires are required")]
    MissingTimestamps,
    /// `created` is later than now (plus the allowed skew).
    #[error("created {created} is in the future (now {now})")]
    CreatedInFuture {
        /// `created`, Unix seconds.
        created: i64,
        /// Now, Unix seconds.
        now: i64,
    },
    /// `expires` has passed.
    #[error("expired at {expires} (now {now})")]
    Expired {
        /// `expires`, Unix seconds.
        expires: i64,
        /// Now, Unix seconds.
        now: i64,
    },
    /// `expires - created` is longer than allowed.
    #[error("expires {secs} s after created, more than {max}")]
    ValidityTooLong {
        /// The signature's validity.
        secs: i64,
        /// The longest accepted.
        max: i64,
    },
    /// `expires` is before `created`.
    #[error("expires before created")]
    ExpiresBeforeCreated,
    /// The `Signature-Agent` header and what the signature covers disagree.
    #[error("{0}")]
    SignatureAgent(&'static str),
    /// The profile requires `@authority` to be covered.
    #[error("@authority is not covered")]
    AuthorityNotCovered,
    /// The signature base could not be built from the message.
    #[error("{0}")]
    Base(String),
    /// No key with this `keyid` (in the directory the agent names).
    #[error("unknown key {0}")]
    UnknownKey(String),
    /// The RFC 9421 test key, refused in production mode.
    #[error("the RFC 9421 test key is refused in production mode")]
    TestKey,
    /// The key found is unusable.
    #[error("{0}")]
    BadKey(String),
    /// The signature is not 64 bytes.
    #[error("the signature is not 64 bytes")]
    SignatureLength,
    /// The signature does not verify.
    #[error("the signature does not match the signature base")]
    BadSignature,
    /// The nonce was seen before.
    #[error("nonce replayed")]
    Replayed,
    /// No `Signature-Agent`, so no directory to find the key in.
    #[error("no Signature-Agent to find the key directory")]
    NoAgent,
    /// The key directory could not be used.
    #[error("{0}")]
    Directory(crate::client::DirectoryError),
}

/// Where verifying keys come from.
pub trait KeyLookup {
    /// The key with this `keyid`, from the directory at `agent` if given.
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk>;
}

/// A fixed set of keys, found by thumbprint.
#[derive(Debug, Clone, Default)]
pub struct StaticKeys {
    keys: Vec<Jwk>,
    by_label: bool,
}

impl StaticKeys {
    /// Keys to verify with, found by their RFC 7638 thumbprint only, which
    /// is computed from the key itself. A key's `kid` is only its
    /// publisher's claim: a directory could label its own key with another
    /// crawler's thumbprint, so `kid` is never used to find a key here.
    pub fn new(keys: Vec<Jwk>) -> StaticKeys {
        StaticKeys {
            keys,
            by_label: false,
        }
    }

    /// Keys the verifier labelled itself (RFC 9421's `test-key-ed25519`):
    /// found by thumbprint, or by their `kid`. Never for keys that came
    /// from someone else, such as a key directory.
    pub fn labelled(keys: Vec<Jwk>) -> StaticKeys {
        StaticKeys {
            keys,
            by_label: true,
        }
    }
}

impl KeyLookup for StaticKeys {
    fn lookup(&self, keyid: &str, _agent: Option<&str>) -> Option<Jwk> {
        self.keys
            .iter()
            .find(|k| k.thumbprint() == keyid)
            .or_else(|| {
                self.keys
                    .iter()
                    .find(|k| self.by_label && k.kid.as_deref() == Some(keyid))
            })
            .cloned()
    }
}

/// The checks to apply.
#[derive(Debug)]
pub struct VerifyConfig {
    /// The current time (pinned in tests).
    pub now: UnixMillis,
    /// How far in the future `created` may be (0).
    pub max_skew: i64,
    /// Longest `expires - created` accepted (86,400).
    pub max_validity: i64,
    /// Require `tag="web-bot-auth"` and the profile's covered components.
    pub web_bot_auth: bool,
    /// Refuse the RFC 9421 test keys (production mode).
    pub reject_test_keys: bool,
    /// Remember nonces and refuse a second use.
    pub replay: Option<NonceCache>,
}

/// Nonce to expiry, and (expiry, nonce) in order for eviction.
type Nonces = (HashMap<String, UnixMillis>, BTreeSet<(UnixMillis, String)>);

/// Nonces seen, each kept until its signature expires (then a replay would
/// be refused as expired anyway), and at most `capacity` of them.
#[derive(Debug)]
pub struct NonceCache {
    inner: Mutex<Nonces>,
    capacity: usize,
}

impl NonceCache {
    /// A cache of at most `capacity` nonces (at least 1).
    pub fn new(capacity: usize) -> NonceCache {
        NonceCache {
            inner: Mutex::new((HashMap::new(), BTreeSet::new())),
            capacity: capacity.max(1),
        }
    }

    /// Records a nonce valid until `expires`; `false` if it was seen.
    pub fn insert(&self, nonce: &str, expires: UnixMillis, now: UnixMillis) -> bool {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (by_nonce, by_time) = &mut *g;
        while let Some((t, n)) = by_time.first().cloned() {
            if t >= now && by_nonce.len() < self.capacity {
                break;
            }
            by_time.remove(&(t, n.clone()));
            by_nonce.remove(&n);
        }
        if by_nonce.contains_key(nonce) {
            return false;
        }
        by_nonce.insert(nonce.to_owned(), expires);
        by_time.insert((expires, nonce.to_owned()));
        true
    }

    /// Nonces held.
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).0.len()
    }

    /// Whether no nonce is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl VerifyConfig {
    /// Production defaults at time `now`.
    pub fn at(now: UnixMillis) -> VerifyConfig {
        VerifyConfig {
            now,
            max_skew: 0,
            max_validity: 86_400,
            web_bot_auth: true,
            reject_test_keys: true,
            replay: None,
        }
    }
}

fn invalid(reason: Rejection) -> Outcome {
    Outcome::Invalid { reason }
}

fn malformed(header: &'static str, detail: impl Into<String>) -> Outcome {
    invalid(Rejection::MalformedHeader {
        header,
        detail: detail.into(),
    })
}

/// Verifies a request's Web Bot Auth signature.
pub fn verify_request(msg: &Message, keys: &dyn KeyLookup, config: &VerifyConfig) -> Outcome {
    verify(msg, None, keys, config)
}

/// Verifies a request's, or with `resp` a response's, signature.
pub fn verify(
    msg: &Message,
    resp: Option<&Response>,
    keys: &dyn KeyLookup,
    config: &VerifyConfig,
) -> Outcome {
    let headers = resp.map_or(&msg.headers, |r| &r.headers);
    let get = |n: &str| {
        let v: Vec<&str> = headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.as_str())
            .collect();
        (!v.is_empty()).then(|| v.join(", "))
    };
    let (input, sig) = match (get("signature-input"), get("signature")) {
        (None, None) => return Outcome::Unsigned,
        (Some(i), Some(s)) => (i, s),
        (Some(_), None) => {
            return invalid(Rejection::HalfSigned {
                present: "Signature-Input",
                missing: "Signature",
            })
        }
        (None, Some(_)) => {
            return invalid(Rejection::HalfSigned {
                present: "Signature",
                missing: "Signature-Input",
            })
        }
    };
    let inputs: Dictionary = match Parser::new(&input).parse() {
        Ok(d) => d,
        Err(e) => {
            return malformed(
                "Signature-Input",
                format!("is not a structured-field dictionary: {e}"),
            )
        }
    };
    let sigs: Dictionary = match Parser::new(&sig).parse() {
        Ok(d) => d,
        Err(e) => {
            return malformed(
                "Signature",
                format!("is not a structured-field dictionary: {e}"),
            )
        }
    };
    // The Web Bot Auth signature, else the first.
    let tag_of = |il: &InnerList| {
        il.params
            .get("tag")
            .and_then(|t| t.as_string())
            .map(|s| s.as_str().to_owned())
    };
    let chosen = inputs
        .iter()
        .filter_map(|(k, v)| match v {
            ListEntry::InnerList(il) => Some((k.as_str().to_owned(), il)),
            ListEntry::Item(_) => None,
        })
        .find(|(_, il)| !config.web_bot_auth || tag_of(il).as_deref() == Some("web-bot-auth"))
        .map(|(k, il)| (k, il.clone()));
    let Some((label, covered)) = chosen else {
        return invalid(Rejection::NoSignature {
            web_bot_auth: config.web_bot_auth,
        });
    };
    let Some(ListEntry::Item(sig_item)) = sigs.get(label.as_str()) else {
        return malformed("Signature", format!("has no member {label}"));
    };
    let BareItem::ByteSequence(sig_bytes) = &sig_item.bare_item else {
        return malformed(
            "Signature",
            format!("member {label} is not a byte sequence"),
        );
    };
    let p = &covered.params;
    let int = |n: &str| p.get(n).and_then(|v| v.as_integer()).map(i64::from);
    let string = |n: &str| {
        p.get(n)
            .and_then(|v| v.as_string())
            .map(|s| s.as_str().to_owned())
    };
    if let Some(alg) = string("alg") {
        if alg != "ed25519" {
            return invalid(Rejection::UnsupportedAlgorithm(alg));
        }
    }
    let Some(keyid) = string("keyid") else {
        return invalid(Rejection::NoKeyId);
    };
    let created = int("created");
    let expires = int("expires");
    if config.web_bot_auth && (created.is_none() || expires.is_none()) {
        return invalid(Rejection::MissingTimestamps);
    }
    let now = i64::try_from(config.now.as_secs()).unwrap_or(i64::MAX);
    if let Some(c) = created {
        if c > now.saturating_add(config.max_skew) {
            return invalid(Rejection::CreatedInFuture { created: c, now });
        }
    }
    if let Some(e) = expires {
        if e < now {
            return invalid(Rejection::Expired { expires: e, now });
        }
        if let Some(c) = created {
            if e.saturating_sub(c) > config.max_validity {
                return invalid(Rejection::ValidityTooLong {
                    secs: e.saturating_sub(c),
                    max: config.max_validity,
                });
            }
            if e < c {
                return invalid(Rejection::ExpiresBeforeCreated);
            }
        }
    }
    let names: Vec<String> = covered
        .items
        .iter()
        .filter_map(|i| i.bare_item.as_string().map(|s| s.as_str().to_owned()))
        .collect();
    // The agent the signature covers.
    let agent_item = covered.items.iter().find(|i| {
        i.bare_item
            .as_string()
            .is_some_and(|s| s.as_str() == "signature-agent")
    });
    let agent = match (agent_item, get("signature-agent")) {
        (Some(item), Some(raw)) => {
            let url = match item.params.get("key").and_then(|k| k.as_string()) {
                Some(member) => Parser::new(&raw)
                    .parse::<Dictionary>()
                    .ok()
                    .and_then(|d| match d.get(member.as_str()) {
                        Some(ListEntry::Item(i)) => {
                            i.bare_item.as_string().map(|s| s.as_str().to_owned())
                        }
                        _ => None,
                    }),
                None => Parser::new(&raw)
                    .parse::<sfv::Item>()
                    .ok()
                    .and_then(|i| i.bare_item.as_string().map(|s| s.as_str().to_owned())),
            };
            match url {
                Some(u) => Some(u),
                None => {
                    return invalid(Rejection::SignatureAgent(
                        "Signature-Agent does not hold the covered member as a string",
                    ))
                }
            }
        }
        (Some(_), None) => {
            return invalid(Rejection::SignatureAgent(
                "signature-agent is covered but the header is missing",
            ))
        }
        (None, Some(_)) if config.web_bot_auth => {
            return invalid(Rejection::SignatureAgent(
                "Signature-Agent is present but not covered by the signature",
            ))
        }
        (None, _) => None,
    };
    if config.web_bot_auth && !names.iter().any(|n| n == "@authority") {
        return invalid(Rejection::AuthorityNotCovered);
    }
    let base = match signature_base(&covered, msg, resp) {
        Ok(b) => b,
        Err(e) => return invalid(Rejection::Base(e.to_string())),
    };
    let Some(jwk) = keys.lookup(&keyid, agent.as_deref()) else {
        return invalid(Rejection::UnknownKey(keyid));
    };
    let key: VerifyingKey = match jwk.verifying_key() {
        Ok(k) => k,
        Err(e) => return invalid(Rejection::BadKey(e.to_string())),
    };
    // Compared as key bytes, not text: `x` with `=` padding or other
    // spellings decodes to the same key.
    if config.reject_test_keys && Some(key.as_bytes()) == rfc9421_test_key().as_ref() {
        return invalid(Rejection::TestKey);
    }
    let Ok(sig_arr) = <[u8; 64]>::try_from(sig_bytes.as_slice()) else {
        return invalid(Rejection::SignatureLength);
    };
    if key
        .verify(base.as_bytes(), &Signature::from_bytes(&sig_arr))
        .is_err()
    {
        return invalid(Rejection::BadSignature);
    }
    if let (Some(cache), Some(nonce)) = (&config.replay, string("nonce")) {
        let until = expires.unwrap_or(now.saturating_add(config.max_validity));
        let until = UnixMillis::from_secs(u64::try_from(until).unwrap_or(0));
        if !cache.insert(&nonce, until, config.now) {
            return invalid(Rejection::Replayed);
        }
    }
    Outcome::Verified {
        agent,
        keyid,
        thumbprint: jwk.thumbprint(),
        label,
    }
}

/// The public key of RFC 9421's test key pair, as bytes.
fn rfc9421_test_key() -> Option<[u8; 32]> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(RFC9421_TEST_KEY_X)
        .ok()?
        .try_into()
        .ok()
}
