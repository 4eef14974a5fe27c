//! What a gate reads from strangers and operators: a policy file's text
//! (before the first NUL byte) and a forward-auth request's headers (after
//! it, `Name: value` lines). No input may panic; a policy's error names a
//! line of its text; the identity header holds only safe characters;
//! nothing verifies without a real signature; `/robots.txt` is always
//! allowed.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mannerly_audit::{Catalogue, Checked, Identity as Checks};
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::{verify_request, KeyPair, Outcome, StaticKeys, UnixMillis, VerifyConfig};
use mannerly_gate::forwarded::Original;
use mannerly_gate::{Asked, Gate, Policy, Verdict, Visitor};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let policy_text = String::from_utf8_lossy(&data[..split]);
    let policy = match Policy::parse(&policy_text, Path::new("/nonexistent/p.toml")) {
        Ok(p) => p,
        Err(e) => {
            assert!(e.line >= 1 && e.line <= policy_text.lines().count() + 1, "{e}");
            Policy::sensible()
        }
    };
    let mut headers = hyper::HeaderMap::new();
    let rest = data.get(split + 1..).unwrap_or(&[]);
    for line in String::from_utf8_lossy(rest).lines() {
        let Some((n, v)) = line.split_once(": ") else { continue };
        if let (Ok(n), Ok(v)) = (
            hyper::header::HeaderName::from_bytes(n.as_bytes()),
            hyper::header::HeaderValue::from_str(v),
        ) {
            headers.append(n, v);
        }
    }
    let trusted = IpRanges::from_cidrs(&["127.0.0.0/8"]).expect("cidr");
    for peer in ["127.0.0.1", "192.0.2.1"] {
        let original = Original::read("GET", "/", &headers, peer.parse().expect("ip"), &trusted);
        let msg = original.message(&headers);
        let keys = StaticKeys::new(vec![KeyPair::from_seed([7; 32]).public_jwk()]);
        let mut config = VerifyConfig::at(UnixMillis::from_secs(1_800_000_000));
        config.allow_http = true;
        let outcome = verify_request(&msg, &keys, &config);
        assert!(!matches!(outcome, Outcome::Verified { .. }), "random headers verified");
        let ua = headers.get("user-agent").and_then(|v| v.to_str().ok()).unwrap_or("");
        let signature = match outcome {
            Outcome::Invalid { .. } => Some(Checks::Spoofed),
            _ => None,
        };
        let id = Visitor::of(
            Catalogue::builtin().classify(ua),
            Checked {
                signature,
                ..Checked::default()
            },
        );
        assert!(id
            .header()
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-;=".contains(&b)));
        let mut gate = Gate::new(policy.clone());
        for target in [original.uri.as_str(), "/robots.txt"] {
            let asked = Asked {
                target,
                client: original.client,
                user_agent: ua,
            };
            let d = gate.decide(id.clone(), asked, UnixMillis::from_secs(1_800_000_000));
            if target == "/robots.txt" {
                assert_eq!(d.verdict, Verdict::Allow);
            }
        }
    }
});
