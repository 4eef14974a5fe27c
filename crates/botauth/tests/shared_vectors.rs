//! The vectors in ../shared/webbotauth/vectors.json: thumbprints, signature
//! bases rebuilt from parsed fields, Ed25519 signatures verified (and, being
//! deterministic, reproduced), and negative vectors rejected. Harness-less
//! so a skip is visible.

use mannerly_botauth::UnixMillis;
use mannerly_botauth::{
    verify, Jwk, KeyPair, Message, Outcome, Response, StaticKeys, VerifyConfig,
};
use serde_json::Value;

fn message(v: &Value) -> Message {
    let r = &v["request"];
    Message {
        method: r["method"].as_str().unwrap_or("GET").to_owned(),
        target_uri: r["target_uri"].as_str().unwrap_or("").to_owned(),
        headers: header_pairs(&r["headers"]),
        body: None,
    }
}

/// `[[name, value], ...]` as header pairs.
fn header_pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| Some((h[0].as_str()?.to_owned(), h[1].as_str()?.to_owned())))
        .collect()
}

fn response(v: &Value) -> Option<Response> {
    let r = v.get("response")?;
    Some(Response {
        status: r["status"].as_u64().unwrap_or(200) as u16,
        headers: header_pairs(&r["headers"]),
    })
}

fn created(v: &Value) -> i64 {
    let si = v["signature_input"].as_str().unwrap_or("");
    si.split(";created=")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

fn case(keys: &Value, v: &Value) -> Result<String, String> {
    let key = &keys[v["key"].as_str().unwrap_or("")];
    let alg = v["alg"].as_str().unwrap_or("");
    let mut msg = message(v);
    let resp = response(v);
    // Put the signature fields where the verifier reads them.
    let fields = vec![
        (
            "Signature-Input".to_owned(),
            v["signature_input"].as_str().unwrap_or("").to_owned(),
        ),
        (
            "Signature".to_owned(),
            v["signature"].as_str().unwrap_or("").to_owned(),
        ),
    ];
    let mut resp2 = resp.clone();
    match resp2.as_mut() {
        Some(r) => r.headers.extend(fields),
        None => msg.headers.extend(fields),
    }
    let jwk: Jwk = serde_json::from_value(key["jwk_public"].clone()).map_err(|e| e.to_string())?;
    let keyset = StaticKeys::labelled(vec![Jwk {
        kid: Some("test-key-ed25519".into()),
        ..jwk.clone()
    }]);
    let mut config = VerifyConfig::at(UnixMillis::from_secs(
        u64::try_from(created(v) + 1).unwrap_or(0),
    ));
    config.reject_test_keys = false;
    config.web_bot_auth = v["web_bot_auth_profile"].as_bool().unwrap_or(false);
    // Some vectors expire a century after creation: valid signatures, but
    // the profile's 24-hour cap refuses them, with that reason.
    let capped = verify(&msg, resp2.as_ref(), &keyset, &config);
    config.max_validity = i64::MAX;
    let outcome = verify(&msg, resp2.as_ref(), &keyset, &config);
    let si = v["signature_input"].as_str().unwrap_or("");
    let expires: Option<i64> = si
        .split(";expires=")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.trim().parse().ok());
    if matches!(outcome, Outcome::Verified { .. })
        && expires.is_some_and(|e| e - created(v) > 86_400)
    {
        match &capped {
            Outcome::Invalid { reason } if reason.to_string().contains("more than 86400") => {}
            other => {
                return Err(format!(
                    "the 24-hour cap must refuse this vector, got {other:?}"
                ))
            }
        }
    }
    if alg != "ed25519" {
        // Only Ed25519 is implemented: an RSA-PSS vector is unverified
        // (the verifier cannot decide), never verified, never "invalid".
        return match outcome {
            Outcome::Unverified { reason } if reason.to_string().contains("not supported") => {
                Ok(format!("unverified: {reason}"))
            }
            other => Err(format!("an RSA vector must be refused, got {other:?}")),
        };
    }
    let valid = v["rfc9421_valid"].as_bool().unwrap_or(true);
    // The base we rebuild from parsed fields.
    let si: sfv::Dictionary = sfv::Parser::new(v["signature_input"].as_str().unwrap_or(""))
        .parse()
        .map_err(|e| e.to_string())?;
    let label = v["label"].as_str().unwrap_or("");
    let Some(sfv::ListEntry::InnerList(covered)) = si.get(label) else {
        return Err("no label".into());
    };
    let base = mannerly_botauth::base::signature_base(covered, &message(v), resp.as_ref())
        .map_err(|e| e.to_string())?;
    let want_base = v["signature_base"].as_str().unwrap_or("");
    if base != want_base {
        return Err(format!(
            "signature base differs:\n want {want_base:?}\n  got {base:?}"
        ));
    }
    match (valid, &outcome) {
        (true, Outcome::Verified { .. }) => {}
        (false, Outcome::Invalid { reason }) if reason.to_string().contains("does not match") => {
            return Ok("negative: rejected".into())
        }
        _ => return Err(format!("valid={valid}, got {outcome:?}")),
    }
    if v["deterministic"].as_bool() == Some(true) {
        let seed = hex(key["raw_private_seed_hex"].as_str().unwrap_or(""));
        let pair = KeyPair::from_seed(seed.try_into().map_err(|_| "seed")?);
        let sig = pair.sign_for_test(base.as_bytes());
        let want = v["signature"].as_str().unwrap_or("");
        let b64 = want.split(":").nth(1).unwrap_or("");
        use base64::Engine;
        if base64::engine::general_purpose::STANDARD.encode(sig) != b64 {
            return Err("re-signing does not reproduce the signature".into());
        }
    }
    Ok("verified".into())
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
        .collect()
}

fn main() {
    let Some(dir) = mannerly_testsupport::shared_dir("the shared Web Bot Auth vectors") else {
        println!("SKIPPED: ../shared not found beside the checkout, so the Web Bot Auth vectors did not run (set MANNERLY_SHARED)");
        println!("shared webbotauth vectors: 0 passed, 0 failed, 1 skipped");
        return;
    };
    let data: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("webbotauth/vectors.json")).expect("vectors.json"),
    )
    .expect("json");
    let (mut passed, mut failed) = (0, 0);
    let mut report = |id: &str, r: Result<String, String>| match r {
        Ok(m) => {
            passed += 1;
            println!("vector {id} ... ok ({m})");
        }
        Err(e) => {
            failed += 1;
            println!("vector {id} ... FAILED: {e}");
        }
    };
    for t in data["thumbprint_vectors"].as_array().into_iter().flatten() {
        let jwk: Result<Jwk, _> = serde_json::from_value(t["jwk"].clone());
        let r = match jwk {
            Ok(j) if j.thumbprint() == t["thumbprint"].as_str().unwrap_or("") => {
                Ok("thumbprint".to_owned())
            }
            Ok(j) => Err(format!("thumbprint {}", j.thumbprint())),
            Err(e) => Err(e.to_string()),
        };
        report(t["id"].as_str().unwrap_or("?"), r);
    }
    for v in data["signature_vectors"].as_array().into_iter().flatten() {
        report(v["id"].as_str().unwrap_or("?"), case(&data["keys"], v));
    }
    for v in data["third_party_negative_vectors"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let mut v2 = v.clone();
        v2["rfc9421_valid"] = Value::Bool(false);
        let r = match case(&data["keys"], &v2) {
            Ok(m) if m.contains("rejected") || m.contains("refused") => Ok(m),
            Ok(m) => Err(format!("must be rejected, got {m}")),
            Err(e) if e.contains("signature base differs") => {
                Ok("rejected: base differs from the one claimed".into())
            }
            Err(e) => Err(e),
        };
        report(v["id"].as_str().unwrap_or("?"), r);
    }
    println!("shared webbotauth vectors: {passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
    // An emptied or truncated suite must not pass by running nothing.
    if passed + failed != EXPECTED_CASES {
        println!(
            "shared webbotauth vectors: expected {EXPECTED_CASES} cases, ran {}: the suite's files are missing cases",
            passed + failed
        );
        std::process::exit(1);
    }
}

/// The cases the shared suite holds; a different count fails the run.
const EXPECTED_CASES: usize = 20;
