//! `Content-Digest` (RFC 9530): a body's digest written, and a received
//! value checked against a body.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256, Sha512};

/// Why a `Content-Digest` value does not vouch for a body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DigestError {
    /// The value is not an RFC 8941 dictionary.
    #[error("Content-Digest is not a structured dictionary")]
    Malformed,
    /// It holds neither a sha-256 nor a sha-512 member: nothing to check.
    #[error("Content-Digest has no sha-256 or sha-512 member")]
    NothingCheckable,
    /// This algorithm's member is not the body's digest.
    #[error("Content-Digest {0} does not match the body")]
    Mismatch(String),
}

/// `Content-Digest: sha-256=:...:` (RFC 9530) of a body.
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
}

/// Whether a `Content-Digest` value is the body's (spaces in the value
/// ignored).
pub fn digest_matches(value: &str, body: &[u8]) -> bool {
    value.replace(' ', "") == content_digest(body)
}

/// Checks a `Content-Digest` field value (RFC 9530: a dictionary of
/// algorithm to byte sequence) against a body: every sha-256 and sha-512
/// member must be the body's, and at least one must be there.
pub fn check_content_digest(value: &str, body: &[u8]) -> Result<(), DigestError> {
    let dict = sfv::Parser::new(value)
        .parse::<sfv::Dictionary>()
        .map_err(|_| DigestError::Malformed)?;
    let mut checked = 0;
    for (alg, entry) in &dict {
        let sfv::ListEntry::Item(item) = entry else {
            continue;
        };
        let Some(bytes) = item.bare_item.as_byte_sequence() else {
            continue;
        };
        let want: Vec<u8> = match alg.as_str() {
            "sha-256" => Sha256::digest(body).to_vec(),
            "sha-512" => Sha512::digest(body).to_vec(),
            _ => continue,
        };
        if *bytes != want {
            return Err(DigestError::Mismatch(alg.as_str().to_owned()));
        }
        checked += 1;
    }
    if checked == 0 {
        return Err(DigestError::NothingCheckable);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_checked_and_each_failure_named() {
        let body = b"{\"keys\":[]}";
        assert_eq!(check_content_digest(&content_digest(body), body), Ok(()));
        assert_eq!(
            check_content_digest(&content_digest(b"other"), body),
            Err(DigestError::Mismatch("sha-256".into()))
        );
        assert_eq!(
            check_content_digest("md5=:AAAA:", body),
            Err(DigestError::NothingCheckable)
        );
        assert_eq!(
            check_content_digest("(((", body),
            Err(DigestError::Malformed)
        );
    }
}
