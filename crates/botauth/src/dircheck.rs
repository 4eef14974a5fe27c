//! The operator's check of a whole directory response, without I/O:
//! fetch the directory as a verifier would, then hand the answer to
//! [`check_directory`]. The entry rules it reports are
//! [`usable_entries`]'s, the ones a verifier applies.

use crate::base::Response;
use crate::digest::digest_matches;
pub use crate::directory::{is_well_known, usable_entries, EntryProblem, REGISTERED_ALGS};
use crate::directory::{verify_directory, Jwks, DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH};
use crate::{DirectoryProblem, Jwk, ProofError, UnixMillis};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Breaks a MUST: verifiers will refuse the directory or a key.
    Must,
    /// Breaks a SHOULD or a RECOMMENDED: verifiers may work, but worse.
    Should,
}

/// One thing wrong with a directory, for its operator.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Whether it breaks a MUST or a SHOULD.
    pub severity: Severity,
    /// What it concerns: `path`, `status`, `redirect`, `media-type`,
    /// `body`, `kid`, `alg`, `key-type`, `signature`, `cache`.
    pub topic: &'static str,
    /// What is wrong, and what to do.
    pub detail: String,
}

fn finding(severity: Severity, topic: &'static str, detail: impl Into<String>) -> Finding {
    Finding {
        severity,
        topic,
        detail: detail.into(),
    }
}

/// Every problem of the directory response fetched from `url` (GET, no
/// redirects followed), as a verifier at `now` would meet it.
pub fn check_directory(
    url: &str,
    response: &Response,
    body: &[u8],
    now: UnixMillis,
) -> Vec<Finding> {
    use Severity::{Must, Should};
    let mut out = Vec::new();
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
    };
    let well_known = is_well_known(url);
    if !url.starts_with("https://") {
        out.push(finding(
            Must,
            "path",
            "not https: directories are served over https (§5.5.1)",
        ));
    }
    if !well_known {
        let why = format!("not at {DIRECTORY_PATH}: the URL names no domain, only itself (§4.5); kid is then the operator's own label");
        out.push(finding(Should, "path", why));
    }
    match response.status {
        200 => {}
        s @ 300..=399 => {
            let to = header("location").unwrap_or_default();
            let why = format!("HTTP {s} to {to:?}: verifiers do not follow redirects (§5.5); serve the directory at this URL");
            out.push(finding(Must, "redirect", why));
            return out;
        }
        s => {
            let why =
                format!("HTTP {s}: verifiers treat anything but 200 as a discovery failure (§5.5)");
            out.push(finding(Must, "status", why));
            return out;
        }
    }
    check_media_type(header("content-type"), well_known, &mut out);
    let doc: Jwks = match serde_json::from_slice(body) {
        Ok(d) => d,
        Err(e) => {
            out.push(finding(Must, "body", format!("not a JWK Set: {e}")));
            return out;
        }
    };
    if doc.keys.is_empty() {
        out.push(finding(Must, "body", "the JWK Set has no keys"));
    }
    check_keys(url, &doc.keys, &mut out);
    check_proof(
        url,
        response,
        body,
        now,
        header("signature-input").is_some(),
        &mut out,
    );
    check_cache(&header, &mut out);
    out
}

fn check_media_type(ct: Option<String>, well_known: bool, out: &mut Vec<Finding>) {
    let essence = ct.as_deref().map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    if essence.as_deref() == Some(DIRECTORY_MEDIA_TYPE) {
        return;
    }
    let got = ct.unwrap_or_else(|| "none".into());
    let (severity, why) = match well_known {
        true => (Severity::Must, format!("Content-Type {got}: the well-known directory is served as {DIRECTORY_MEDIA_TYPE} (§5.5.1)")),
        false => (Severity::Should, format!("Content-Type {got}; {DIRECTORY_MEDIA_TYPE} tells verifiers what it is")),
    };
    out.push(finding(severity, "media-type", why));
}

fn check_keys(url: &str, keys: &[Jwk], out: &mut Vec<Finding>) {
    let (_, dropped) = usable_entries(url, keys.to_vec());
    for p in dropped {
        let topic = match p {
            EntryProblem::KidNotThumbprint { .. } => "kid",
            EntryProblem::UnregisteredAlg { .. } | EntryProblem::SharedSecret { .. } => "alg",
            _ => "key-type",
        };
        out.push(finding(Severity::Must, topic, p.to_string()));
    }
    for (i, k) in keys.iter().enumerate() {
        if k.alg.is_none() {
            let why = format!(
                "key {i}: no alg; name it (ed25519) so verifiers need not guess from the key type"
            );
            out.push(finding(Severity::Should, "alg", why));
        }
        if !(k.kty == "OKP" && k.crv == "Ed25519") {
            let why = format!(
                "key {i}: kty {} crv {}: not Ed25519, which every Web Bot Auth verifier implements",
                k.kty, k.crv
            );
            out.push(finding(Severity::Should, "key-type", why));
        } else if k.verifying_key().is_err() {
            out.push(finding(
                Severity::Must,
                "key-type",
                format!("key {i}: x is not a valid Ed25519 public key"),
            ));
        }
    }
}

/// The digest, whether or not the directory is signed, then the proof:
/// each fault reported once.
fn check_proof(
    url: &str,
    response: &Response,
    body: &[u8],
    now: UnixMillis,
    signed: bool,
    out: &mut Vec<Finding>,
) {
    let digest = response
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-digest"));
    let digest_ok = digest.is_none_or(|(_, d)| digest_matches(d, body));
    if !digest_ok {
        let why = "Content-Digest does not match the body";
        out.push(finding(Severity::Must, "signature", why));
    }
    if !signed {
        let why = "unsigned: a signature by each key, covering \"@authority\";req and content-digest, proves possession (Appendix B.1, RECOMMENDED)";
        out.push(finding(Severity::Should, "signature", why));
        return;
    }
    match verify_directory(url, response, body, now) {
        Ok(_) | Err(DirectoryProblem::Proof(ProofError::DigestMismatch)) => {}
        Err(e) => out.push(finding(
            Severity::Must,
            "signature",
            format!("the directory's signature fails: {e}"),
        )),
    }
}

fn check_cache(header: &dyn Fn(&str) -> Option<String>, out: &mut Vec<Finding>) {
    let cc = header("cache-control")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let max_age = cc
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age=")?.parse::<u64>().ok());
    if cc.contains("no-store") || cc.contains("no-cache") {
        let why = format!("Cache-Control {cc:?}: verifiers would refetch on every request; give a max-age (Appendix C.4)");
        out.push(finding(Severity::Should, "cache", why));
    } else if max_age.is_none() && header("expires").is_none() {
        let why = "no Cache-Control max-age or Expires: verifiers cannot tell how long to keep the keys (Appendix C.4)";
        out.push(finding(Severity::Should, "cache", why));
    }
    if header("etag").is_none() && header("last-modified").is_none() {
        let why = "no ETag or Last-Modified: verifiers cannot refresh with a conditional request (Appendix C.2)";
        out.push(finding(Severity::Should, "cache", why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::signed_directory;
    use crate::keys::RFC9421_TEST_KEY_X;
    use crate::KeyPair;

    const ORIGIN: &str = "https://crawler.example";
    const WELL_KNOWN: &str =
        "https://crawler.example/.well-known/http-message-signatures-directory";

    #[test]
    fn entries_are_dropped_each_for_its_reason() {
        let good = KeyPair::generate().public_jwk();
        let mut label = KeyPair::generate().public_jwk();
        label.kid = Some("2026-key".into());
        let mut hmac = KeyPair::generate().public_jwk();
        hmac.alg = Some("hmac-sha256".into());
        let mut test_key = KeyPair::generate().public_jwk();
        test_key.x = RFC9421_TEST_KEY_X.into();
        test_key.kid = None;
        let keys = vec![good.clone(), label.clone(), hmac, test_key];
        let (kept, dropped) = usable_entries(WELL_KNOWN, keys.clone());
        assert_eq!(kept, vec![good.clone()]);
        let kinds: Vec<String> = dropped.iter().map(|p| p.to_string()).collect();
        assert!(
            kinds[0].contains("is not the key's RFC 7638 thumbprint"),
            "{kinds:?}"
        );
        assert!(kinds[1].contains("shared secret"), "{kinds:?}");
        assert!(kinds[2].contains("test key"), "{kinds:?}");
        // Elsewhere than the well-known path, kid is the operator's label.
        let (kept, _) = usable_entries("https://crawler.example/jwks.json", vec![good, label]);
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn a_wrong_digest_is_reported_once_signed_or_not() {
        let pair = KeyPair::generate();
        let now = UnixMillis::from_secs(1_800_000_000);
        let (signed, body) =
            signed_directory(std::slice::from_ref(&pair), ORIGIN, now, 3600).expect("sign");
        let tampered = body.replace("\"keys\"", "\"keys\" ");
        let unsigned = Response {
            status: 200,
            headers: signed
                .headers
                .iter()
                .filter(|(k, _)| !k.starts_with("Signature"))
                .cloned()
                .collect(),
        };
        for response in [&signed, &unsigned] {
            let findings = check_directory(WELL_KNOWN, response, tampered.as_bytes(), now);
            let digest = findings
                .iter()
                .filter(|f| f.detail.contains("Content-Digest does not match"))
                .count();
            assert_eq!(digest, 1, "{findings:?}");
        }
    }

    #[test]
    fn a_proof_must_cover_authority_and_digest() {
        let pair = KeyPair::generate();
        let now = UnixMillis::from_secs(1_800_000_000);
        let (response, body) =
            signed_directory(std::slice::from_ref(&pair), ORIGIN, now, 3600).expect("sign");
        assert!(verify_directory(WELL_KNOWN, &response, body.as_bytes(), now).is_ok());
        // The same signature relabelled as covering content-digest alone.
        let mut narrowed = response.clone();
        for (k, v) in narrowed.headers.iter_mut() {
            if k == "Signature-Input" {
                *v = v.replace("\"@authority\";req ", "");
            }
        }
        let e = verify_directory(WELL_KNOWN, &narrowed, body.as_bytes(), now).expect_err("refused");
        assert!(
            e.to_string().contains("does not cover \"@authority\";req"),
            "{e}"
        );
        let findings = check_directory(WELL_KNOWN, &narrowed, body.as_bytes(), now);
        assert!(findings
            .iter()
            .any(|f| f.topic == "signature" && f.severity == Severity::Must));
    }
}
