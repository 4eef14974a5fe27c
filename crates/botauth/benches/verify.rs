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

    // Batch verification (ed25519-dalek's `verify_batch`) of 64 distinct
    // messages, as a server holding many requests might.
    let batch_msgs: Vec<Vec<u8>> = (0..64)
        .map(|i| format!("{}{i}", String::from_utf8_lossy(base)).into_bytes())
        .collect();
    let batch_sigs: Vec<Signature> = batch_msgs.iter().map(|m| raw_key.sign(m)).collect();
    let batch_keys = vec![vk; 64];
    let batch_refs: Vec<&[u8]> = batch_msgs.iter().map(Vec::as_slice).collect();

    // Rounds interleave the loops and keep each one's best, so a busy
    // machine slows neither side alone for long.
    // Everything but the curve: the same request against a key set without
    // its key stops after parsing, the checks and the signature base.
    let other = StaticKeys::new(vec![KeyPair::from_seed([8; 32]).public_jwk()]);
    assert!(matches!(
        verify_request(&signed, &other, &vc),
        Outcome::Invalid { .. }
    ));
    let mut best = (f64::MAX, f64::MAX, f64::MAX);
    let mut around = f64::MAX;
    for _ in 0..7 {
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
        let t = Instant::now();
        for _ in 0..N / 64 {
            black_box(
                ed25519_dalek::verify_batch(black_box(&batch_refs), &batch_sigs, &batch_keys)
                    .is_ok(),
            );
        }
        best.2 = best
            .2
            .min(t.elapsed().as_secs_f64() * N as f64 / ((N / 64 * 64) as f64));
        let t = Instant::now();
        for _ in 0..N {
            black_box(verify_request(black_box(&signed), &other, &vc));
        }
        around = around.min(t.elapsed().as_secs_f64());
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
    println!(
        "everything but the curve: {:.1} µs per request (parsing, checks, signature base)",
        around * 1e6 / N as f64
    );
    println!(
        "raw verify_batch of 64:  {:>9.0} verifications/s ({:.1} µs each, {:.2}x single)",
        N as f64 / best.2,
        best.2 * 1e6 / N as f64,
        best.1 / best.2
    );
}
