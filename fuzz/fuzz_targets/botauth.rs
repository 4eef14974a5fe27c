//! Arbitrary Signature-Input, Signature and Signature-Agent values (split
//! at 0xFF bytes) through the verifier: it must never panic, and never
//! verify without a real signature. The whole input is also read as a
//! Signature Agent Card and as a key directory's body (with the split
//! parts as its signature headers), and as a Signature-Agent URL.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_botauth::{verify_request, KeyPair, Message, Outcome, StaticKeys, VerifyConfig};

fuzz_target!(|data: &[u8]| {
    let mut parts = data
        .split(|&b| b == 0xFF)
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let input = parts.next().unwrap_or_default();
    let sig = parts.next().unwrap_or_default();
    let agent = parts.next().unwrap_or_default();
    let msg = Message::new("GET", "https://example.com/x")
        .header("Signature-Input", &input)
        .header("Signature", &sig)
        .header("Signature-Agent", &agent);
    let keys = StaticKeys::new(vec![KeyPair::from_seed([1; 32]).public_jwk()]);
    let outcome = verify_request(
        &msg,
        &keys,
        &VerifyConfig::at(mannerly_botauth::UnixMillis::from_secs(1_800_000_000)),
    );
    assert!(
        !matches!(outcome, Outcome::Verified { .. }),
        "random bytes verified"
    );
    let now = mannerly_botauth::UnixMillis::from_secs(1_800_000_000);
    let response = mannerly_botauth::Response {
        status: 200,
        headers: vec![
            ("Signature-Input".into(), input.clone()),
            ("Signature".into(), sig.clone()),
            ("Content-Digest".into(), agent.clone()),
        ],
    };
    let url = "https://crawler.example/.well-known/http-message-signatures-directory";
    let _ = mannerly_botauth::dircheck::check_directory(url, &response, data, now);
    let from = mannerly_botauth::card::Fetched {
        url: Some("https://crawler.example/bot"),
        response: Some(&response),
        jwks_uri_keys: None,
        now,
    };
    let _ = mannerly_botauth::card::check_card(data, &from);
    let _ = mannerly_botauth::agent_identifier(&agent);
    let text = String::from_utf8_lossy(data);
    let _ = mannerly_botauth::jafar::check(&text, Some(&input), now);
    if let Ok(base) = url::Url::parse("https://crawler.example/bot") {
        let _ = mannerly_botauth::crawler_page::facts(&text, &base, &[&sig], "ExampleBot");
    }
});
