//! Arbitrary Signature-Input, Signature and Signature-Agent values (split
//! at 0xFF bytes) through the verifier: it must never panic, and never
//! verify without a real signature.

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
});
