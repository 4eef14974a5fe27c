//! The server side: check a request's Web Bot Auth signature.

use std::borrow::Cow;
use std::sync::LazyLock;

use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sfv::{BareItem, Dictionary, FieldType, InnerList, ListEntry, Parser};

use crate::base::{signature_base, Message, Response};
use crate::keys::RFC9421_TEST_KEY_X;
use crate::UnixMillis;

mod agent;
mod lookup;
mod nonce;
mod outcome;

pub use crate::error::Rejection;
pub use agent::agent_identifier;
pub use lookup::{KeyLookup, ReadyKey, StaticKeys};
pub use nonce::{NonceCache, NonceCheck};
pub use outcome::Outcome;

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
    /// Accept Web Bot Auth signatures on plain http requests (§6.1 says an
    /// origin should refuse them); off by default.
    pub allow_http: bool,
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
            allow_http: false,
        }
    }
}

fn malformed(header: &'static str, detail: impl Into<String>) -> Rejection {
    Rejection::MalformedHeader {
        header,
        detail: detail.into(),
    }
}

/// Verifies a request's Web Bot Auth signatures (see [`verify`]).
pub fn verify_request(msg: &Message, keys: &dyn KeyLookup, config: &VerifyConfig) -> Outcome {
    verify(msg, None, keys, config)
}

/// One signature's outcome, by its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The signature's label (`sig1`).
    pub label: String,
    /// What its check concluded.
    pub outcome: Outcome,
}

/// Verifies a request's, or with `resp` a response's, signatures, and
/// sums them up: a request carrying any invalid signature is invalid; else
/// it is verified if one signature verified; else unverified. Each
/// signature is checked on its own ([`verify_each`]).
pub fn verify(
    msg: &Message,
    resp: Option<&Response>,
    keys: &dyn KeyLookup,
    config: &VerifyConfig,
) -> Outcome {
    summarise(verify_each(msg, resp, keys, config))
}

/// The outcome of a request from its signatures' verdicts.
pub fn summarise(verdicts: Vec<Verdict>) -> Outcome {
    let rank = |o: &Outcome| match o {
        Outcome::Invalid { .. } => 0,
        Outcome::Verified { .. } => 1,
        Outcome::Unverified { .. } => 2,
        _ => 3,
    };
    verdicts
        .into_iter()
        .map(|v| v.outcome)
        .min_by_key(rank)
        .unwrap_or(Outcome::Unsigned)
}

/// A directory fetcher's first pass: the agents a request's signatures
/// name (each once, in order), and each signature's verdict with no key
/// found. The fetcher then gets those agents' keys and verifies again.
pub fn named_agents(msg: &Message, config: &VerifyConfig) -> (Vec<Verdict>, Vec<String>) {
    struct Capture(std::sync::Mutex<Vec<String>>);
    impl KeyLookup for Capture {
        fn lookup(&self, _keyid: &str, agent: Option<&str>) -> Option<crate::Jwk> {
            if let Some(a) = agent {
                let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
                if !seen.iter().any(|s| s == a) {
                    seen.push(a.to_owned());
                }
            }
            None
        }
    }
    let capture = Capture(std::sync::Mutex::new(Vec::new()));
    let first = verify_each(msg, None, &capture, config);
    let agents = capture.0.into_inner().unwrap_or_else(|p| p.into_inner());
    (first, agents)
}

/// Verifies each signature on its own, against its own covered components
/// and its own key (§5.2.2). Outside the profile only the first signature
/// is read; in it, every one tagged `web-bot-auth`. An unsigned message
/// gives no verdicts; a broken signature header, one invalid verdict.
pub fn verify_each(
    msg: &Message,
    resp: Option<&Response>,
    keys: &dyn KeyLookup,
    config: &VerifyConfig,
) -> Vec<Verdict> {
    let headers = resp.map_or(&msg.headers, |r| &r.headers);
    let fail = |label: &str, reason: Rejection| {
        vec![Verdict {
            label: label.to_owned(),
            outcome: reason.outcome(),
        }]
    };
    let (inputs, sigs) = match signature_fields(headers) {
        Ok(Some(fields)) => fields,
        Ok(None) => return Vec::new(),
        Err(reason) => return fail("", reason),
    };
    let chosen = choose(&inputs, config);
    if chosen.is_empty() {
        let reason = Rejection::NoSignature {
            web_bot_auth: config.web_bot_auth,
        };
        return fail("", reason);
    }
    chosen
        .into_iter()
        .map(|(label, covered)| {
            let one = One {
                label,
                covered,
                inputs: &inputs,
                sigs: &sigs,
            };
            let outcome = match checked(&one, msg, resp, keys, config) {
                Ok(outcome) => outcome,
                Err(reason) => reason.outcome(),
            };
            Verdict {
                label: label.to_owned(),
                outcome,
            }
        })
        .collect()
}

/// One signature to check, and the dictionaries it came from.
struct One<'a> {
    label: &'a str,
    covered: &'a InnerList,
    inputs: &'a Dictionary,
    sigs: &'a Dictionary,
}

/// One signature's checks, each refusal as the error.
fn checked(
    one: &One<'_>,
    msg: &Message,
    resp: Option<&Response>,
    keys: &dyn KeyLookup,
    config: &VerifyConfig,
) -> Result<Outcome, Rejection> {
    let headers = resp.map_or(&msg.headers, |r| &r.headers);
    let (label, covered) = (one.label, one.covered);
    if config.web_bot_auth && !config.allow_http && msg.target_uri.starts_with("http:") {
        return Err(Rejection::InsecureTransport);
    }
    let sig_bytes = signature_bytes(one.sigs, label)?;
    let p = &covered.params;
    let string = |n: &str| {
        p.get(n)
            .and_then(|v| v.as_string())
            .map(|s| s.as_str().to_owned())
    };
    let keyid = string("keyid").ok_or(Rejection::NoKeyId)?;
    let window = check_times(covered, config)?;
    let raw_agent = field(headers, "signature-agent");
    let agent = agent::claimed(covered, label, raw_agent.as_deref(), config.web_bot_auth)?;
    let covers = |name: &str| {
        covered
            .items
            .iter()
            .any(|i| i.bare_item.as_string().is_some_and(|s| s.as_str() == name))
    };
    if config.web_bot_auth && !covers("@authority") && !covers("@target-uri") {
        return Err(Rejection::AuthorityNotCovered);
    }
    check_chain(covered, one.inputs)?;
    let base = signature_base(covered, msg, resp).map_err(Rejection::Base)?;
    if let Some(alg) = string("alg") {
        if alg != "ed25519" {
            return Err(Rejection::UnsupportedAlgorithm(alg));
        }
    }
    let Some(ready) = keys.resolve(&keyid, agent.as_deref()) else {
        return Err(match (&agent, keys.needs_agent()) {
            (None, true) => Rejection::NoAgent,
            _ => Rejection::UnknownKey(keyid),
        });
    };
    check_signature(&ready, &base, sig_bytes, config)?;
    if covers("content-digest") && resp.is_none() {
        check_body(msg)?;
    }
    let thumbprint = ready.thumbprint.clone();
    check_nonce(string("nonce"), &thumbprint, window, config)?;
    // Attributed to the URL only when the key came from it (§4.4).
    let claimed = agent.as_deref().and_then(agent_identifier);
    let agent = claimed.filter(|id| ready.source.as_deref() == Some(id.as_str()));
    Ok(Outcome::Verified {
        agent,
        keyid,
        thumbprint,
        label: label.to_owned(),
    })
}

/// A covered `Content-Digest` against the body, when the message has one:
/// a signature over the digest of another body does not vouch for this.
fn check_body(msg: &Message) -> Result<(), Rejection> {
    let (Some(body), Some(value)) = (&msg.body, msg.field("content-digest")) else {
        return Ok(());
    };
    use crate::digest::DigestError;
    match crate::digest::check_content_digest(&value, body) {
        Ok(()) => Ok(()),
        Err(DigestError::Mismatch(alg)) => Err(Rejection::ContentDigestMismatch(alg)),
        Err(DigestError::Malformed | DigestError::NothingCheckable) => {
            Err(Rejection::ContentDigestUnchecked(value))
        }
    }
}

/// §5.2.2: a signature covering `"signature";key=X` also covers
/// `"signature-input";key=X` and every component X lists.
fn check_chain(covered: &InnerList, inputs: &Dictionary) -> Result<(), Rejection> {
    let ids: Vec<String> = covered.items.iter().map(|i| i.serialize()).collect();
    for item in &covered.items {
        if item.bare_item.as_string().map(|s| s.as_str()) != Some("signature") {
            continue;
        }
        let Some(inner) = item.params.get("key").and_then(|k| k.as_string()) else {
            continue;
        };
        let inner = inner.as_str();
        let mut needed = vec![format!("\"signature-input\";key=\"{inner}\"")];
        if let Some(ListEntry::InnerList(il)) = inputs.get(inner) {
            needed.extend(il.items.iter().map(|i| i.serialize()));
        }
        if let Some(missing) = needed.into_iter().find(|n| !ids.contains(n)) {
            return Err(Rejection::Chain {
                label: inner.to_owned(),
                missing,
            });
        }
    }
    Ok(())
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

/// The signatures to verify: those tagged `web-bot-auth` (in the
/// profile), else the first; by label.
fn choose<'a>(inputs: &'a Dictionary, config: &VerifyConfig) -> Vec<(&'a str, &'a InnerList)> {
    let tagged = |il: &InnerList| {
        il.params
            .get("tag")
            .and_then(|t| t.as_string())
            .is_some_and(|s| s.as_str() == "web-bot-auth")
    };
    let all = inputs.iter().filter_map(|(k, v)| match v {
        ListEntry::InnerList(il) => Some((k.as_str(), il)),
        ListEntry::Item(_) => None,
    });
    match config.web_bot_auth {
        true => all.filter(|(_, il)| tagged(il)).collect(),
        false => all.take(1).collect(),
    }
}

/// The bytes of the `Signature` member `label`.
fn signature_bytes<'a>(sigs: &'a Dictionary, label: &str) -> Result<&'a [u8], Rejection> {
    let Some(ListEntry::Item(sig_item)) = sigs.get(label) else {
        return Err(malformed("Signature", format!("has no member {label}")));
    };
    let BareItem::ByteSequence(sig_bytes) = &sig_item.bare_item else {
        let why = format!("member {label} is not a byte sequence");
        return Err(malformed("Signature", why));
    };
    Ok(sig_bytes.as_slice())
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
