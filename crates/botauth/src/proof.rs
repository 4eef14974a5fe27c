//! A response that signs its own body: `Content-Digest` (RFC 9530) and one
//! signature per key covering `"@authority";req` and `content-digest`. Key
//! directories prove possession of their keys this way (the editor's copy,
//! Appendix B.1), and Signature Agent Cards may be signed the same way.

use sfv::{BareItem, Dictionary, FieldType, InnerList, Integer, Item, Key, ListEntry, Parameters};

use crate::base::{signature_base, Message, Response};
pub use crate::digest::{check_content_digest, content_digest, digest_matches};
use crate::{Error, KeyPair, ProofError, StaticKeys, UnixMillis};

fn k(s: &str) -> Result<Key, Error> {
    Key::from_string(s.to_owned()).map_err(|(e, _)| Error::Field(e.to_string()))
}

fn s(v: &str) -> Result<BareItem, Error> {
    sfv::String::from_string(v.to_owned())
        .map(BareItem::String)
        .map_err(|(e, _)| Error::Field(e.to_string()))
}

/// A 200 response to a GET of `url` carrying `headers`, `Content-Digest`
/// of `body`, and a signature by each key (labelled `binding0`,
/// `binding1`, ...), made at `created` and valid for `validity` seconds
/// (at least 1; not capped at a day: a proof is meant to outlive the lists
/// that carry it, Appendix C.8).
pub fn sign_body(
    pairs: &[KeyPair],
    url: &str,
    headers: Vec<(String, String)>,
    body: &[u8],
    (created, validity): (UnixMillis, i64),
    tag: &str,
) -> Result<Response, Error> {
    if pairs.is_empty() {
        return Err(Error::NoKeys);
    }
    if validity < 1 {
        return Err(Error::Validity(validity));
    }
    let created = i64::try_from(created.as_secs()).unwrap_or(i64::MAX);
    let request = Message::new("GET", url);
    let mut response = Response {
        status: 200,
        headers,
    };
    response
        .headers
        .push(("Content-Digest".into(), content_digest(body)));
    let int = |n: i64| {
        Integer::try_from(n)
            .map(BareItem::Integer)
            .map_err(|e| Error::Field(e.to_string()))
    };
    let mut inputs = Dictionary::new();
    let mut sigs = Dictionary::new();
    for (i, pair) in pairs.iter().enumerate() {
        let mut authority = Parameters::new();
        authority.insert(k("req")?, BareItem::Boolean(true));
        let items = vec![
            Item {
                bare_item: s("@authority")?,
                params: authority,
            },
            Item::new(s("content-digest")?),
        ];
        let mut params = Parameters::new();
        params.insert(k("created")?, int(created)?);
        params.insert(k("expires")?, int(created.saturating_add(validity))?);
        params.insert(k("keyid")?, s(&pair.keyid())?);
        params.insert(k("alg")?, s("ed25519")?);
        params.insert(k("tag")?, s(tag)?);
        let covered = InnerList { items, params };
        let base = signature_base(&covered, &request, Some(&response))?;
        let label = k(&format!("binding{i}"))?;
        let sig = BareItem::ByteSequence(pair.sign(base.as_bytes()).to_vec());
        sigs.insert(label.clone(), ListEntry::Item(Item::new(sig)));
        inputs.insert(label, ListEntry::InnerList(covered));
    }
    let serialise = |d: Dictionary| d.serialize().ok_or_else(|| Error::Field("empty".into()));
    response
        .headers
        .push(("Signature-Input".into(), serialise(inputs)?));
    response
        .headers
        .push(("Signature".into(), serialise(sigs)?));
    Ok(response)
}

fn header(response: &Response, name: &str) -> Option<String> {
    response
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

/// What a signature over a body must cover: a directory's proof
/// `"@authority";req` and `content-digest` (Appendix B.1), a card's
/// `content-digest` (the registry draft, §3.1.3).
pub const DIRECTORY_COVERS: &[&str] = &["\"@authority\";req", "\"content-digest\""];
/// What a Signature Agent Card's signature must cover.
pub const CARD_COVERS: &[&str] = &["\"content-digest\""];

/// Checks a signed body fetched from `url`: the digest matches, and every
/// signature (with `tag`, when given) covers `covers` and verifies with
/// one of `keys` at `now`. Returns the thumbprints of the keys that signed.
/// Unknown keys and algorithms this crate does not implement prove
/// nothing, and refuse nothing.
pub fn verify_body(
    url: &str,
    response: &Response,
    body: &[u8],
    keys: &StaticKeys,
    now: UnixMillis,
    (tag, covers): (Option<&str>, &[&'static str]),
) -> Result<Vec<String>, ProofError> {
    let digest = header(response, "content-digest").ok_or(ProofError::NoDigest)?;
    if !digest_matches(&digest, body) {
        return Err(ProofError::DigestMismatch);
    }
    let malformed = |header: &'static str| {
        move |e: sfv::Error| ProofError::MalformedSignature {
            header,
            detail: e.to_string(),
        }
    };
    let input = header(response, "signature-input").ok_or(ProofError::Unsigned)?;
    let inputs: Dictionary = sfv::Parser::new(&input)
        .parse()
        .map_err(malformed("Signature-Input"))?;
    let sig = header(response, "signature").ok_or(ProofError::Unsigned)?;
    let sigs: Dictionary = sfv::Parser::new(&sig)
        .parse()
        .map_err(malformed("Signature"))?;
    let request = Message::new("GET", url);
    let mut proven = Vec::new();
    for (label, entry) in &inputs {
        let (ListEntry::InnerList(il), Some(sig)) = (entry, sigs.get(label.as_str())) else {
            continue;
        };
        let its_tag = il.params.get("tag").and_then(|t| t.as_string());
        if tag.is_some_and(|t| its_tag.map(|x| x.as_str()) != Some(t)) {
            continue;
        }
        if let Some(missing) = covers
            .iter()
            .find(|id| !il.items.iter().any(|i| i.serialize() == **id))
        {
            return Err(ProofError::Coverage {
                label: label.as_str().to_owned(),
                missing,
            });
        }
        if let Some(p) = one_signature(label, il, sig, &request, response, keys, now)? {
            proven.push(p);
        }
    }
    Ok(proven)
}

/// One signature over the body: the thumbprint of its key when it
/// verifies, `None` when it cannot be decided, an error when it fails.
fn one_signature(
    label: &Key,
    il: &InnerList,
    sig: &ListEntry,
    request: &Message,
    response: &Response,
    keys: &StaticKeys,
    now: UnixMillis,
) -> Result<Option<String>, ProofError> {
    let mut one_in = Dictionary::new();
    one_in.insert(label.clone(), ListEntry::InnerList(il.clone()));
    let mut one_sig = Dictionary::new();
    one_sig.insert(label.clone(), sig.clone());
    let mut r = response.clone();
    r.headers.retain(|(k, _)| {
        !k.eq_ignore_ascii_case("signature-input") && !k.eq_ignore_ascii_case("signature")
    });
    r.headers.push((
        "Signature-Input".into(),
        one_in.serialize().unwrap_or_default(),
    ));
    r.headers
        .push(("Signature".into(), one_sig.serialize().unwrap_or_default()));
    let mut config = crate::VerifyConfig::at(now);
    config.web_bot_auth = false;
    config.reject_test_keys = false;
    // Not held to the 24 h request cap; a `created` in the future is still
    // refused (Appendix B.1).
    config.max_validity = i64::MAX;
    match crate::verify(request, Some(&r), keys, &config) {
        crate::Outcome::Verified { thumbprint, .. } => Ok(Some(thumbprint)),
        crate::Outcome::Invalid { reason } => Err(ProofError::BadSignature {
            label: label.as_str().to_owned(),
            rejection: Box::new(reason),
        }),
        _ => Ok(None),
    }
}
