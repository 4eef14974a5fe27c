//! Raw request text, as a verifying server or `mannerly verify` receives
//! it, through `Message::parse_http` and then the verifier: no input may
//! panic, a parsed request keeps every header line it read, and nothing
//! verifies without a real signature.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_botauth::{
    verify_request, KeyPair, Message, Outcome, StaticKeys, UnixMillis, VerifyConfig,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for scheme in ["https", "http", "gopher"] {
        let Ok(msg) = Message::parse_http(&text, scheme) else {
            continue;
        };
        assert!(
            msg.headers.len() < text.lines().count().max(1),
            "headers come from lines after the first"
        );
        assert!(msg.target_uri.starts_with("http://") || msg.target_uri.starts_with("https://"));
        let keys = StaticKeys::new(vec![KeyPair::from_seed([7; 32]).public_jwk()]);
        let outcome = verify_request(
            &msg,
            &keys,
            &VerifyConfig::at(UnixMillis::from_secs(1_800_000_000)),
        );
        assert!(
            !matches!(outcome, Outcome::Verified { .. }),
            "random text verified"
        );
    }
});
