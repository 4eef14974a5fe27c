//! Key directories: the document at
//! `/.well-known/http-message-signatures-directory` (or any JWK Set URL),
//! served as `application/http-message-signatures-directory+json` and
//! signed with every key in it (rotation publishes old and new keys
//! together); its possession proof checked; and which of its entries a
//! verifier uses (§5.5.1).
//!
//! A survey of live directories found `kid`s that are not the key's
//! thumbprint and keys without `alg`; a verifier ([`crate::client`]) drops
//! entries whose `kid` or `alg` is wrong rather than guess, and the
//! operator's check ([`crate::dircheck`]) reports them.

use crate::base::Response;
use crate::digest::content_digest;
use crate::keys::RFC9421_TEST_KEY_X;
pub use crate::{DirectoryProblem, ProofError};
use crate::{Error, Jwk, KeyPair, UnixMillis};

/// The well-known path (note the plural "signatures").
pub const DIRECTORY_PATH: &str = "/.well-known/http-message-signatures-directory";
/// The `tag` of a directory's possession proof.
pub const DIRECTORY_TAG: &str = "http-message-signatures-directory";
/// The directory's media type.
pub const DIRECTORY_MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";

/// The JWKS document: `{"keys":[...]}` with the public keys only.
pub fn directory_document(keys: &[Jwk]) -> String {
    let keys: Vec<Jwk> = keys
        .iter()
        .map(|k| Jwk {
            d: None,
            ..k.clone()
        })
        .collect();
    serde_json::to_string(&Jwks { keys }).unwrap_or_else(|_| "{\"keys\":[]}".into())
}

/// The signed directory response for a GET of the directory at `origin`
/// (e.g. `https://crawler.example`): status 200, Content-Type,
/// Content-Digest, Signature-Input and Signature (one member per key,
/// labelled `binding0`, `binding1`, ...), and the body.
pub fn signed_directory(
    pairs: &[KeyPair],
    origin: &str,
    created: UnixMillis,
    validity: i64,
) -> Result<(Response, String), Error> {
    let body = directory_document(&pairs.iter().map(KeyPair::public_jwk).collect::<Vec<_>>());
    let request = format!("{}{DIRECTORY_PATH}", origin.trim_end_matches('/'));
    let response = crate::proof::sign_body(
        pairs,
        &request,
        vec![
            ("Content-Type".into(), DIRECTORY_MEDIA_TYPE.into()),
            // Kept no longer than the proof holds, and at most a day.
            (
                "Cache-Control".into(),
                format!("max-age={}", validity.clamp(1, 86_400)),
            ),
            (
                "ETag".into(),
                format!("\"{}\"", &content_digest(body.as_bytes())[9..25]),
            ),
        ],
        body.as_bytes(),
        (created, validity),
        DIRECTORY_TAG,
    )?;
    Ok((response, body))
}

/// A key directory document.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Jwks {
    /// The keys, public parts only.
    pub keys: Vec<Jwk>,
}

/// Checks a fetched directory response's possession proof (Appendix B.1):
/// the body's digest, and a valid `http-message-signatures-directory`
/// signature, covering `"@authority";req` and `content-digest`, by every
/// key listed. `origin` is the URL fetched, or its origin. Returns the
/// keys. A verifier may use a directory's keys without a valid proof
/// ([`crate::client`] does); the proof is what binds them to the domain.
pub fn verify_directory(
    origin: &str,
    response: &Response,
    body: &[u8],
    now: UnixMillis,
) -> Result<Vec<Jwk>, DirectoryProblem> {
    let doc: Jwks =
        serde_json::from_slice(body).map_err(|e| DirectoryProblem::NotJwks(e.to_string()))?;
    // The request that fetched it: a URL as given, or an origin's
    // well-known path. Only its authority is covered.
    let request = match url::Url::parse(origin) {
        Ok(u) if u.path().len() > 1 => origin.to_owned(),
        _ => format!("{}{DIRECTORY_PATH}", origin.trim_end_matches('/')),
    };
    let keys = crate::StaticKeys::new(doc.keys.clone());
    let need = (Some(DIRECTORY_TAG), crate::proof::DIRECTORY_COVERS);
    let proven = crate::proof::verify_body(&request, response, body, &keys, now, need)?;
    for k in &doc.keys {
        if !proven.contains(&k.thumbprint()) {
            return Err(DirectoryProblem::UnprovenKey(k.thumbprint()));
        }
    }
    Ok(doc.keys)
}

/// The HTTP Signature Algorithms registry (RFC 9421 §6.2.2).
pub const REGISTERED_ALGS: &[&str] = &[
    "rsa-pss-sha512",
    "rsa-v1_5-sha256",
    "hmac-sha256",
    "ecdsa-p256-sha256",
    "ecdsa-p384-sha384",
    "ed25519",
];

/// Why a directory entry is not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// At the well-known path, `kid` must be the key's thumbprint.
    #[error("key {index}: kid {kid:?} is not the key's RFC 7638 thumbprint {thumbprint}")]
    KidNotThumbprint {
        /// The entry's position in `keys`.
        index: usize,
        /// The `kid` published.
        kid: String,
        /// The thumbprint computed from the key.
        thumbprint: String,
    },
    /// `alg` is not in the HTTP Signature Algorithms registry.
    #[error("key {index}: alg {alg:?} is not an HTTP Signature Algorithm (RFC 9421 §6.2.2 names {registered})", registered = REGISTERED_ALGS.join(", "))]
    UnregisteredAlg {
        /// The entry's position.
        index: usize,
        /// The `alg` published.
        alg: String,
    },
    /// A shared-secret algorithm, forbidden by §6.4.
    #[error("key {index}: hmac-sha256 is a shared secret, which Web Bot Auth forbids (§6.4)")]
    SharedSecret {
        /// The entry's position.
        index: usize,
    },
    /// The entry publishes a private key (`d`).
    #[error("key {index}: the entry publishes its private part (d): anyone can sign as this key; replace it")]
    PrivatePart {
        /// The entry's position.
        index: usize,
    },
    /// The RFC 9421 test key (§6.8).
    #[error("key {index}: the RFC 9421 test key, which production verifiers refuse (§6.8)")]
    TestKey {
        /// The entry's position.
        index: usize,
    },
}

/// The entries a verifier uses from a directory fetched at `url`, and the
/// problems of those it drops. `kid` is held to the thumbprint only at
/// the well-known path; elsewhere it is the operator's own label (§5.5).
pub fn usable_entries(url: &str, keys: Vec<Jwk>) -> (Vec<Jwk>, Vec<EntryProblem>) {
    let well_known = is_well_known(url);
    let mut kept = Vec::with_capacity(keys.len());
    let mut dropped = Vec::new();
    for (index, key) in keys.into_iter().enumerate() {
        match entry_problem(index, &key, well_known) {
            Some(p) => dropped.push(p),
            None => kept.push(key),
        }
    }
    (kept, dropped)
}

fn entry_problem(index: usize, key: &Jwk, well_known: bool) -> Option<EntryProblem> {
    if key.d.is_some() {
        return Some(EntryProblem::PrivatePart { index });
    }
    if key.kty == "OKP" && key.x.trim_end_matches('=') == RFC9421_TEST_KEY_X {
        return Some(EntryProblem::TestKey { index });
    }
    if let Some(alg) = &key.alg {
        if alg == "hmac-sha256" || key.kty == "oct" {
            return Some(EntryProblem::SharedSecret { index });
        }
        if !REGISTERED_ALGS.contains(&alg.as_str()) {
            let alg = alg.clone();
            return Some(EntryProblem::UnregisteredAlg { index, alg });
        }
    }
    let thumbprint = key.thumbprint();
    match &key.kid {
        Some(kid) if well_known && *kid != thumbprint => Some(EntryProblem::KidNotThumbprint {
            index,
            kid: kid.clone(),
            thumbprint,
        }),
        _ => None,
    }
}

/// Whether `url`'s path is the well-known directory path.
pub fn is_well_known(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| u.path() == DIRECTORY_PATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rotated_directory_is_signed_by_both_keys() {
        let (old, new) = (KeyPair::generate(), KeyPair::generate());
        let (resp, body) = signed_directory(
            &[old.clone(), new.clone()],
            "https://crawler.example",
            UnixMillis::from_secs(1_800_000_000),
            300,
        )
        .expect("sign");
        assert!(body.contains(&old.public_jwk().x) && body.contains(&new.public_jwk().x));
        assert!(!body.contains("\"d\""), "no private parts");
        let keys = verify_directory(
            "https://crawler.example",
            &resp,
            body.as_bytes(),
            UnixMillis::from_secs(1_800_000_010),
        )
        .expect("verifies");
        assert_eq!(keys.len(), 2);
        let si = resp
            .headers
            .iter()
            .find(|(k, _)| k == "Signature-Input")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert!(
            si.contains("(\"@authority\";req \"content-digest\")")
                && si.contains("tag=\"http-message-signatures-directory\""),
            "{si}"
        );
        // Tampered body, other origin, expired: refused. (The tamper edits
        // a literal every document has; random key text may lack a letter.)
        let tampered = body.replace("Ed25519", "Ed25518");
        assert_ne!(tampered, body);
        assert!(verify_directory(
            "https://crawler.example",
            &resp,
            tampered.as_bytes(),
            UnixMillis::from_secs(1_800_000_010)
        )
        .is_err());
        assert!(verify_directory(
            "https://impostor.example",
            &resp,
            body.as_bytes(),
            UnixMillis::from_secs(1_800_000_010)
        )
        .is_err());
        assert!(verify_directory(
            "https://crawler.example",
            &resp,
            body.as_bytes(),
            UnixMillis::from_secs(1_800_000_400)
        )
        .is_err());
        // A listed key that did not sign.
        let (resp1, _) = signed_directory(
            std::slice::from_ref(&old),
            "https://crawler.example",
            UnixMillis::from_secs(1_800_000_000),
            300,
        )
        .expect("sign");
        let both = directory_document(&[old.public_jwk(), new.public_jwk()]);
        let mut r = resp1.clone();
        for h in r.headers.iter_mut().filter(|(k, _)| k == "Content-Digest") {
            h.1 = content_digest(both.as_bytes());
        }
        // (Rewriting the digest also breaks the one signature: refused either way.)
        let err = verify_directory(
            "https://crawler.example",
            &r,
            both.as_bytes(),
            UnixMillis::from_secs(1_800_000_010),
        )
        .expect_err("a rewritten digest is refused");
        let err = err.to_string();
        assert!(
            err.contains("did not sign") || err.contains("does not match"),
            "{err}"
        );
    }
}
