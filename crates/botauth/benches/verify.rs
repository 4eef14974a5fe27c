//! Verifications per second, next to raw ed25519-dalek verification of the
//! same signature base in the same run (the cost of everything around the
//! curve: parsing structured fields, rebuilding the base, the checks).
//!
//! Run: `cargo bench -p mannerly-botauth --bench verify`

use std::hint::black_box;
use std::time::Instant;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier};
use mannerly_botauth::UnixMillis;
use mannerly_botauth::{
    sign_request, verify_request, AgentForm, KeyPair, Message, Outcome, SignConfig, StaticKeys,
    VerifyConfig,
};

const N: usize = 20_000;
const T: i64 = 1_800_000_000;

/// Unix seconds as the crate's instant type.
fn secs(s: i64) -> UnixMillis {
    UnixMillis::from_secs(u64::try_from(s).unwrap_or(0))
}

fn main() {
    let pair = KeyPair::from_seed([9; 32]);
    let msg = Message::new("GET", "https://example.com/catalog/item?id=42");
    let mut config = SignConfig::new(secs(T), AgentForm::dictionary("https://crawler.example"));
    config.extra_components = vec!["@method".into(), "@path".into()];
    let mut signed = msg.clone();
    signed
        .headers
        .extend(sign_request(&pair, &msg, &config).expect("sign"));
    signed
        .headers
        .push(("User-Agent".into(), "ExampleBot/1.0".into()));
    let keys = StaticKeys::new(vec![pair.public_jwk()]);
    let vc = VerifyConfig::at(secs(T + 1));
    assert!(matches!(
        verify_request(&signed, &keys, &vc),
        Outcome::Verified { .. }
    ));

    let raw_key = SigningKey::from_bytes(&[9; 32]);
    let base = b"\"@authority\": example.com\n\"signature-agent\";key=\"agent1\": \"https://crawler.example\"\n\"@method\": GET\n\"@path\": /catalog/item\n\"@signature-params\": (...)";
    let sig: Signature = raw_key.sign(base);
    let vk = raw_key.verifying_key();

    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..N {
            black_box(verify_request(black_box(&signed), &keys, &vc));
        }
        best.0 = best.0.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..N {
            black_box(vk.verify(black_box(base), &sig).is_ok());
        }
        best.1 = best.1.min(t.elapsed().as_secs_f64());
    }
    println!(
        "mannerly verify_request: {:>9.0} verifications/s ({:.1} µs each)",
        N as f64 / best.0,
        best.0 * 1e6 / N as f64
    );
    println!(
        "raw ed25519-dalek:       {:>9.0} verifications/s ({:.1} µs each)",
        N as f64 / best.1,
        best.1 * 1e6 / N as f64
    );
    println!(
        "ratio: mannerly runs at {:.0}% of raw ed25519 speed",
        100.0 * best.1 / best.0
    );
}
