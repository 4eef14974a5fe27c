//! The operator side: the key directory at
//! `/.well-known/http-message-signatures-directory`, served as
//! `application/http-message-signatures-directory+json` and signed with
//! every key in it (rotation publishes old and new keys together).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};

use crate::base::Response;
use crate::verify::Rejection;
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

/// Whether a `Content-Digest` value is the body's (spaces in the value
/// ignored).
pub(crate) fn digest_matches(value: &str, body: &[u8]) -> bool {
    value.replace(' ', "") == content_digest(body)
}

/// `Content-Digest: sha-256=:...:` (RFC 9530) of a body.
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
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

/// Why a fetched key directory was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DirectoryProblem {
    /// The `Signature-Agent` value is not a URL.
    #[error("not a URL: {0}")]
    NotAUrl(String),
    /// Directories are fetched over https only.
    #[error("not https: directories are fetched over https only")]
    NotHttps,
    /// The URL has no host.
    #[error("no host")]
    NoHost,
    /// The host name did not resolve.
    #[error("cannot resolve {host}: {detail}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        detail: String,
    },
    /// The host resolves to an address a verifier must not contact.
    #[error("{host} resolves to {addr}, not a public address a verifier may contact: refused")]
    PrivateAddress {
        /// The host.
        host: String,
        /// The refused address.
        addr: std::net::IpAddr,
    },
    /// The request failed (connection, TLS, timeout).
    #[error("fetch failed: {0}")]
    Fetch(String),
    /// A redirect: verifiers never follow one.
    #[error("HTTP {0}: the directory redirects, and verifiers must not follow redirects")]
    Redirect(u16),
    /// Any other status than 200.
    #[error("HTTP {0}")]
    Status(u16),
    /// The body is over the size limit.
    #[error("larger than {0} bytes")]
    TooLarge(usize),
    /// The body is not a JWKS document.
    #[error("not a JWKS document: {0}")]
    NotJwks(String),
    /// More keys than the limit.
    #[error("{found} keys, more than {max}")]
    TooManyKeys {
        /// Keys in the document.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// No `Content-Digest` header.
    #[error("the directory response has no Content-Digest")]
    NoDigest,
    /// `Content-Digest` does not match the body.
    #[error("Content-Digest does not match the body")]
    DigestMismatch,
    /// No `Signature-Input` or `Signature`.
    #[error("the directory is not signed")]
    Unsigned,
    /// A signature header is not a structured-field dictionary.
    #[error("{header}: {detail}")]
    MalformedSignature {
        /// `Signature-Input` or `Signature`.
        header: &'static str,
        /// The parser's error.
        detail: String,
    },
    /// One of the directory's signatures did not verify.
    #[error("directory signature {label}: {rejection}")]
    BadSignature {
        /// The signature's label.
        label: String,
        /// Why it was refused.
        rejection: Box<Rejection>,
    },
    /// A signature over a body does not cover what it must (a directory's:
    /// Appendix B.1; a card's: the registry draft, §3.1.3).
    #[error("signature {label} does not cover {missing}")]
    ProofCoverage {
        /// The signature's label.
        label: String,
        /// The component it leaves out.
        missing: &'static str,
    },
    /// A listed key did not sign the directory.
    #[error("key {0} is listed but did not sign the directory")]
    UnprovenKey(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
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
