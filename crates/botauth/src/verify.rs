//! The server side: check a request's Web Bot Auth signature.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use std::borrow::Cow;

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
    /// Replay protection is on and the signature has no nonce.
    #[error("no nonce: replay protection is on, and a signature without one could be replayed until it expires")]
    NoNonce,
    /// The nonce cache is full of live nonces (overall, or this key's
    /// share): the signature is refused rather than a live nonce forgotten.
    #[error("the replay cache is full of nonces still valid; refused rather than forget one (try again when they expire)")]
    ReplayCacheFull,
    /// No `Signature-Agent`, so no directory to find the key in.
    #[error("no Signature-Agent to find the key directory")]
    NoAgent,
}

/// Where verifying keys come from.
pub trait KeyLookup {
    /// The key with this `keyid`, from the directory at `agent` if given.
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk>;

    /// The key ready to verify with: its curve point decoded and its
    /// thumbprint computed. The default does that work on every call from
    /// [`lookup`](Self::lookup); a lookup that keeps keys (such as
    /// [`StaticKeys`]) does it once and hands out the result.
    fn resolve(&self, keyid: &str, agent: Option<&str>) -> Option<Arc<ReadyKey>> {
        self.lookup(keyid, agent)
            .map(|jwk| Arc::new(ReadyKey::new(jwk)))
    }
}

/// A key with the work verification needs done once: the Ed25519 point
/// decoded (and checked) and the RFC 7638 thumbprint computed.
#[derive(Debug, Clone)]
pub struct ReadyKey {
    /// The key as published.
    pub jwk: Jwk,
    /// The verifying key, or why the JWK is not a usable Ed25519 key.
    pub key: Result<VerifyingKey, String>,
    /// The RFC 7638 thumbprint.
    pub thumbprint: String,
}

impl ReadyKey {
    /// Decodes the key and computes its thumbprint.
    pub fn new(jwk: Jwk) -> ReadyKey {
        ReadyKey {
            key: jwk.verifying_key().map_err(|e| e.to_string()),
            thumbprint: jwk.thumbprint(),
            jwk,
        }
    }
}

/// A fixed set of keys, found by thumbprint (decoded and hashed once, when
/// the set is made).
#[derive(Debug, Clone, Default)]
pub struct StaticKeys {
    keys: Vec<Arc<ReadyKey>>,
    by_label: bool,
}

impl StaticKeys {
    /// Keys to verify with, found by their RFC 7638 thumbprint only, which
    /// is computed from the key itself. A key's `kid` is only its
    /// publisher's claim: a directory could label its own key with another
    /// crawler's thumbprint, so `kid` is never used to find a key here.
    pub fn new(keys: Vec<Jwk>) -> StaticKeys {
        StaticKeys {
            keys: keys
                .into_iter()
                .map(|k| Arc::new(ReadyKey::new(k)))
                .collect(),
            by_label: false,
        }
    }

    /// Keys the verifier labelled itself (RFC 9421's `test-key-ed25519`):
    /// found by thumbprint, or by their `kid`. Never for keys that came
    /// from someone else, such as a key directory.
    pub fn labelled(keys: Vec<Jwk>) -> StaticKeys {
        StaticKeys {
            by_label: true,
            ..StaticKeys::new(keys)
        }
    }
}

impl StaticKeys {
    /// The keys, as given.
    pub fn jwks(&self) -> impl Iterator<Item = &Jwk> {
        self.keys.iter().map(|k| &k.jwk)
    }
}

impl KeyLookup for StaticKeys {
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk> {
        self.resolve(keyid, agent).map(|k| k.jwk.clone())
    }

    fn resolve(&self, keyid: &str, _agent: Option<&str>) -> Option<Arc<ReadyKey>> {
        self.keys
            .iter()
            .find(|k| k.thumbprint == keyid)
            .or_else(|| {
                self.keys
                    .iter()
                    .find(|k| self.by_label && k.jwk.kid.as_deref() == Some(keyid))
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
    /// Remember nonces and refuse a second use (see [`NonceCache`] for
    /// the policy).
    pub replay: Option<NonceCache>,
    /// With `replay` set, accept signatures without a nonce (they can be
    /// replayed until they expire); off by default.
    pub allow_nonceless: bool,
}

/// What the nonce cache holds: (key, nonce) to expiry, the same in
/// expiry order, and nonces held per key.
#[derive(Debug, Default)]
struct Nonces {
    by_nonce: HashMap<(String, String), UnixMillis>,
    by_time: BTreeSet<(UnixMillis, String, String)>,
    per_key: HashMap<String, usize>,
}

/// Nonces seen, per key, each kept until its signature expires (then a
/// replay is refused as expired anyway).
///
/// # Policy
///
/// - A nonce is remembered per signing key (its thumbprint): one key's
///   nonces never collide with, or push out, another's.
/// - A live nonce is never forgotten. When the cache holds `capacity` live
///   nonces, or a key holds its share (`per_key`), a new signature is
///   refused ([`NonceCheck::Full`], [`Rejection::ReplayCacheFull`]) until
///   some expire: an attacker with a valid key of their own can fill only
///   their own share, never evict a victim's nonce to replay it.
/// - A signature without a nonce cannot be replay-checked: with replay
///   protection on it is refused ([`Rejection::NoNonce`]) unless
///   [`VerifyConfig::allow_nonceless`] is set, in which case it may be
///   replayed until it expires (60 s for signatures this crate makes).
#[derive(Debug)]
pub struct NonceCache {
    inner: Mutex<Nonces>,
    capacity: usize,
    per_key: usize,
}

/// The answer of [`NonceCache::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceCheck {
    /// Not seen before: remembered until it expires.
    Fresh,
    /// Seen before, for the same key, and not expired: a replay.
    Replayed,
    /// No room without forgetting a live nonce: refuse the signature.
    Full,
}

impl NonceCache {
    /// A cache of at most `capacity` live nonces (at least 1), each key
    /// holding at most an eighth of them (at least 1).
    pub fn new(capacity: usize) -> NonceCache {
        let capacity = capacity.max(1);
        NonceCache::with_per_key(capacity, capacity / 8)
    }

    /// A cache of at most `capacity` live nonces, at most `per_key` of them
    /// for any one key.
    pub fn with_per_key(capacity: usize, per_key: usize) -> NonceCache {
        NonceCache {
            inner: Mutex::new(Nonces::default()),
            capacity: capacity.max(1),
            per_key: per_key.max(1),
        }
    }

    /// Records `key`'s nonce, valid until `expires`: whether it is fresh,
    /// a replay, or refused for want of room (see the policy above).
    pub fn insert(
        &self,
        key: &str,
        nonce: &str,
        expires: UnixMillis,
        now: UnixMillis,
    ) -> NonceCheck {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let n = &mut *g;
        // Only expired nonces go.
        while let Some((t, k, v)) = n.by_time.first().cloned() {
            if t >= now {
                break;
            }
            n.by_time.remove(&(t, k.clone(), v.clone()));
            n.by_nonce.remove(&(k.clone(), v));
            if let Some(c) = n.per_key.get_mut(&k) {
                *c -= 1;
                if *c == 0 {
                    n.per_key.remove(&k);
                }
            }
        }
        let id = (key.to_owned(), nonce.to_owned());
        if n.by_nonce.contains_key(&id) {
            return NonceCheck::Replayed;
        }
        let held = n.per_key.get(key).copied().unwrap_or(0);
        if n.by_nonce.len() >= self.capacity || held >= self.per_key {
            return NonceCheck::Full;
        }
        n.by_time.insert((expires, id.0.clone(), id.1.clone()));
        n.by_nonce.insert(id, expires);
        *n.per_key.entry(key.to_owned()).or_default() += 1;
        NonceCheck::Fresh
    }

    /// Nonces held.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .by_nonce
            .len()
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
            allow_nonceless: false,
        }
    }
}

fn malformed(header: &'static str, detail: impl Into<String>) -> Rejection {
    Rejection::MalformedHeader {
        header,
        detail: detail.into(),
    }
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
    match checked(msg, resp, keys, config) {
        Ok(outcome) => outcome,
        Err(reason) => Outcome::Invalid { reason },
    }
}

/// [`verify`], each check's refusal as the error.
fn checked(
    msg: &Message,
    resp: Option<&Response>,
    keys: &dyn KeyLookup,
    config: &VerifyConfig,
) -> Result<Outcome, Rejection> {
    let headers = resp.map_or(&msg.headers, |r| &r.headers);
    let Some((inputs, sigs)) = signature_fields(headers)? else {
        return Ok(Outcome::Unsigned);
    };
    let (label, covered, sig_bytes) = choose(&inputs, &sigs, config)?;
    let p = &covered.params;
    let string = |n: &str| {
        p.get(n)
            .and_then(|v| v.as_string())
            .map(|s| s.as_str().to_owned())
    };
    if let Some(alg) = string("alg") {
        if alg != "ed25519" {
            return Err(Rejection::UnsupportedAlgorithm(alg));
        }
    }
    let keyid = string("keyid").ok_or(Rejection::NoKeyId)?;
    let window = check_times(covered, config)?;
    let agent = covered_agent(covered, field(headers, "signature-agent"), config)?;
    let covers = |name: &str| {
        covered
            .items
            .iter()
            .any(|i| i.bare_item.as_string().is_some_and(|s| s.as_str() == name))
    };
    if config.web_bot_auth && !covers("@authority") {
        return Err(Rejection::AuthorityNotCovered);
    }
    let base = signature_base(covered, msg, resp).map_err(|e| Rejection::Base(e.to_string()))?;
    let Some(ready) = keys.resolve(&keyid, agent.as_deref()) else {
        return Err(Rejection::UnknownKey(keyid));
    };
    check_signature(&ready, &base, sig_bytes, config)?;
    let thumbprint = ready.thumbprint.clone();
    check_nonce(string("nonce"), &thumbprint, window, config)?;
    Ok(Outcome::Verified {
        agent,
        keyid,
        thumbprint,
        label,
    })
}

/// A field's lines joined with ", " (RFC 9110 §5.3); borrowed when there
/// is one line, as there nearly always is.
fn field<'a>(headers: &'a [(String, String)], name: &str) -> Option<Cow<'a, str>> {
    let mut lines = headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str());
    let first = lines.next()?;
    match lines.next() {
        None => Some(Cow::Borrowed(first)),
        Some(second) => {
            let mut joined = format!("{first}, {second}");
            for l in lines {
                joined.push_str(", ");
                joined.push_str(l);
            }
            Some(Cow::Owned(joined))
        }
    }
}

/// `Signature-Input` and `Signature` parsed; `None` when neither is there
/// (unsigned).
fn signature_fields(
    headers: &[(String, String)],
) -> Result<Option<(Dictionary, Dictionary)>, Rejection> {
    let (input, sig) = match (
        field(headers, "signature-input"),
        field(headers, "signature"),
    ) {
        (None, None) => return Ok(None),
        (Some(i), Some(s)) => (i, s),
        (Some(_), None) => {
            return Err(Rejection::HalfSigned {
                present: "Signature-Input",
                missing: "Signature",
            })
        }
        (None, Some(_)) => {
            return Err(Rejection::HalfSigned {
                present: "Signature",
                missing: "Signature-Input",
            })
        }
    };
    let dictionary = |name: &'static str, text: &str| {
        Parser::new(text.as_bytes())
            .parse::<Dictionary>()
            .map_err(|e| malformed(name, format!("is not a structured-field dictionary: {e}")))
    };
    let inputs = dictionary("Signature-Input", &input)?;
    let sigs = dictionary("Signature", &sig)?;
    Ok(Some((inputs, sigs)))
}

/// The signature to verify: the Web Bot Auth one (tagged `web-bot-auth`),
/// else the first; its label, covered components and bytes.
fn choose<'a>(
    inputs: &'a Dictionary,
    sigs: &'a Dictionary,
    config: &VerifyConfig,
) -> Result<(String, &'a InnerList, &'a [u8]), Rejection> {
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
        .find(|(_, il)| !config.web_bot_auth || tag_of(il).as_deref() == Some("web-bot-auth"));
    let Some((label, covered)) = chosen else {
        return Err(Rejection::NoSignature {
            web_bot_auth: config.web_bot_auth,
        });
    };
    let Some(ListEntry::Item(sig_item)) = sigs.get(label.as_str()) else {
        return Err(malformed("Signature", format!("has no member {label}")));
    };
    let BareItem::ByteSequence(sig_bytes) = &sig_item.bare_item else {
        let why = format!("member {label} is not a byte sequence");
        return Err(malformed("Signature", why));
    };
    Ok((label, covered, sig_bytes.as_slice()))
}

/// `created` and `expires` against the clock and the caps; the instant
/// until which a nonce must be remembered, in seconds.
fn check_times(covered: &InnerList, config: &VerifyConfig) -> Result<i64, Rejection> {
    let int = |n: &str| {
        covered
            .params
            .get(n)
            .and_then(|v| v.as_integer())
            .map(i64::from)
    };
    let (created, expires) = (int("created"), int("expires"));
    if config.web_bot_auth && (created.is_none() || expires.is_none()) {
        return Err(Rejection::MissingTimestamps);
    }
    let now = i64::try_from(config.now.as_secs()).unwrap_or(i64::MAX);
    if let Some(c) = created {
        if c > now.saturating_add(config.max_skew) {
            return Err(Rejection::CreatedInFuture { created: c, now });
        }
    }
    if let Some(e) = expires {
        if e < now {
            return Err(Rejection::Expired { expires: e, now });
        }
        if let Some(c) = created {
            if e.saturating_sub(c) > config.max_validity {
                return Err(Rejection::ValidityTooLong {
                    secs: e.saturating_sub(c),
                    max: config.max_validity,
                });
            }
            if e < c {
                return Err(Rejection::ExpiresBeforeCreated);
            }
        }
    }
    Ok(expires.unwrap_or(now.saturating_add(config.max_validity)))
}

/// The key directory URL the signature covers through `Signature-Agent`
/// (`raw`: the header), if it covers one.
fn covered_agent(
    covered: &InnerList,
    raw: Option<Cow<'_, str>>,
    config: &VerifyConfig,
) -> Result<Option<String>, Rejection> {
    let agent_item = covered.items.iter().find(|i| {
        i.bare_item
            .as_string()
            .is_some_and(|s| s.as_str() == "signature-agent")
    });
    let item = match (agent_item, raw.as_deref()) {
        (Some(item), Some(raw)) => (item, raw),
        (Some(_), None) => {
            let why = "signature-agent is covered but the header is missing";
            return Err(Rejection::SignatureAgent(why));
        }
        (None, Some(_)) if config.web_bot_auth => {
            let why = "Signature-Agent is present but not covered by the signature";
            return Err(Rejection::SignatureAgent(why));
        }
        (None, _) => return Ok(None),
    };
    let (item, raw) = item;
    let url = match item.params.get("key").and_then(|k| k.as_string()) {
        Some(member) => Parser::new(raw.as_bytes())
            .parse::<Dictionary>()
            .ok()
            .and_then(|d| match d.get(member.as_str()) {
                Some(ListEntry::Item(i)) => i.bare_item.as_string().map(|s| s.as_str().to_owned()),
                _ => None,
            }),
        None => Parser::new(raw.as_bytes())
            .parse::<sfv::Item>()
            .ok()
            .and_then(|i| i.bare_item.as_string().map(|s| s.as_str().to_owned())),
    };
    let why = "Signature-Agent does not hold the covered member as a string";
    url.map(Some).ok_or(Rejection::SignatureAgent(why))
}

/// The signature against the key: a usable key, not the RFC 9421 test
/// key when those are refused, 64 bytes, and a match.
fn check_signature(
    ready: &ReadyKey,
    base: &str,
    sig_bytes: &[u8],
    config: &VerifyConfig,
) -> Result<(), Rejection> {
    let key: VerifyingKey = match &ready.key {
        Ok(k) => *k,
        Err(e) => return Err(Rejection::BadKey(e.clone())),
    };
    // Compared as key bytes, not text: `x` with `=` padding or other
    // spellings decodes to the same key.
    if config.reject_test_keys && Some(key.as_bytes()) == RFC9421_TEST_KEY.as_ref() {
        return Err(Rejection::TestKey);
    }
    let Ok(sig_arr) = <[u8; 64]>::try_from(sig_bytes) else {
        return Err(Rejection::SignatureLength);
    };
    key.verify(base.as_bytes(), &Signature::from_bytes(&sig_arr))
        .map_err(|_| Rejection::BadSignature)
}

/// Replay protection, when on: the nonce is new for this key, and kept
/// until `until` (seconds).
fn check_nonce(
    nonce: Option<String>,
    thumbprint: &str,
    until: i64,
    config: &VerifyConfig,
) -> Result<(), Rejection> {
    let Some(cache) = &config.replay else {
        return Ok(());
    };
    let Some(nonce) = nonce else {
        return match config.allow_nonceless {
            true => Ok(()),
            false => Err(Rejection::NoNonce),
        };
    };
    let until = UnixMillis::from_secs(u64::try_from(until).unwrap_or(0));
    match cache.insert(thumbprint, &nonce, until, config.now) {
        NonceCheck::Fresh => Ok(()),
        NonceCheck::Replayed => Err(Rejection::Replayed),
        NonceCheck::Full => Err(Rejection::ReplayCacheFull),
    }
}

/// The public key of RFC 9421's test key pair, as bytes (decoded once).
static RFC9421_TEST_KEY: LazyLock<Option<[u8; 32]>> = LazyLock::new(|| {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(RFC9421_TEST_KEY_X)
        .ok()?
        .try_into()
        .ok()
});
