//! Signing and verification, standing without ../shared: round trips, and
//! each kind of tampering rejected with its own reason.

use mannerly_botauth::UnixMillis;
use mannerly_botauth::{
    sign_request, verify_request, AgentForm, Jwk, KeyPair, Message, NonceCache, NonceCheck,
    Outcome, SignConfig, StaticKeys, VerifyConfig,
};

const T: i64 = 1_800_000_000;

/// Unix seconds as the crate's instant type.
fn secs(s: i64) -> UnixMillis {
    UnixMillis::from_secs(u64::try_from(s).unwrap_or(0))
}

fn signed(key: &KeyPair, agent: AgentForm, extra: &[&str]) -> Message {
    let msg = Message::new("GET", "https://example.com/page?q=1");
    let mut config = SignConfig::new(secs(T), agent);
    config.extra_components = extra.iter().map(|s| s.to_string()).collect();
    let mut m = msg.clone();
    m.headers
        .extend(sign_request(key, &msg, &config).expect("sign"));
    m
}

/// The reason of an invalid or unverified outcome.
fn reason(o: Outcome) -> String {
    match o {
        Outcome::Invalid { reason } | Outcome::Unverified { reason } => reason.to_string(),
        other => panic!("expected Invalid or Unverified, got {other:?}"),
    }
}

const DIR: &str = "https://crawler.example/.well-known/http-message-signatures-directory";

fn set(m: &mut Message, name: &str, value: &str) {
    for h in m
        .headers
        .iter_mut()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
    {
        h.1 = value.to_owned();
    }
}

#[test]
fn round_trip_in_both_agent_forms() {
    let key = KeyPair::generate();
    let keys = StaticKeys::from_directory(DIR, vec![key.public_jwk()]);
    for agent in [
        AgentForm::dictionary(DIR),
        AgentForm::Legacy { url: DIR.into() },
    ] {
        let m = signed(&key, agent, &["@method", "@path"]);
        match verify_request(&m, &keys, &VerifyConfig::at(secs(T + 5))) {
            Outcome::Verified { agent, keyid, .. } => {
                assert_eq!(agent.as_deref(), Some(DIR));
                assert_eq!(keyid, key.keyid());
            }
            other => panic!("{other:?}"),
        }
    }
    let si = signed(&key, AgentForm::dictionary("https://crawler.example"), &[])
        .field("signature-input")
        .expect("si");
    assert!(si.starts_with("sig1=(\"@authority\" \"signature-agent\";key=\"sig1\");created=1800000000;expires=1800000060;keyid=\""), "{si}");
    assert!(si.ends_with(";tag=\"web-bot-auth\""), "{si}");
}

#[test]
fn tampering_is_caught_with_its_own_reason() {
    let key = KeyPair::generate();
    let keys = StaticKeys::new(vec![key.public_jwk()]);
    let ok = signed(&key, AgentForm::dictionary("https://crawler.example"), &[]);
    let at = VerifyConfig::at(secs(T + 5));

    let mut m = ok.clone();
    m.target_uri = "https://evil.example/page?q=1".into();
    assert!(reason(verify_request(&m, &keys, &at)).contains("does not match"));

    let mut m = ok.clone();
    set(
        &mut m,
        "signature-agent",
        "sig1=\"https://impostor.example\"",
    );
    assert!(reason(verify_request(&m, &keys, &at)).contains("does not match"));

    assert!(
        reason(verify_request(&ok, &keys, &VerifyConfig::at(secs(T + 61))))
            .starts_with("expired at")
    );
    assert!(
        reason(verify_request(&ok, &keys, &VerifyConfig::at(secs(T - 1))))
            .contains("in the future")
    );

    let other = StaticKeys::new(vec![KeyPair::generate().public_jwk()]);
    assert!(reason(verify_request(&ok, &other, &at)).starts_with("unknown key"));

    // A key whose `kid` claims the signer's thumbprint is not the signer's
    // key: it is not even found (before, it was found by its `kid`, and a
    // directory could make `verify` report another crawler's keyid).
    let mut impostor = KeyPair::generate().public_jwk();
    impostor.kid = Some(key.keyid());
    assert!(
        reason(verify_request(
            &ok,
            &StaticKeys::new(vec![impostor.clone()]),
            &at
        ))
        .starts_with("unknown key"),
        "a key labelled with another's thumbprint"
    );
    // What verified is reported by the thumbprint of the key that did.
    match verify_request(&ok, &StaticKeys::new(vec![key.public_jwk()]), &at) {
        Outcome::Verified {
            thumbprint, keyid, ..
        } => {
            assert_eq!(thumbprint, key.keyid());
            assert_eq!(keyid, key.keyid());
        }
        other => panic!("{other:?}"),
    }

    let replay = VerifyConfig {
        replay: Some(NonceCache::new(1000)),
        ..VerifyConfig::at(secs(T + 5))
    };
    assert!(matches!(
        verify_request(&ok, &keys, &replay),
        Outcome::Verified { .. }
    ));
    assert_eq!(
        reason(verify_request(&ok, &keys, &replay)),
        "nonce replayed"
    );

    let mut m = ok.clone();
    m.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("signature"));
    assert_eq!(
        reason(verify_request(&m, &keys, &at)),
        "Signature-Input without Signature"
    );

    assert_eq!(
        verify_request(&Message::new("GET", "https://example.com/"), &keys, &at),
        Outcome::Unsigned
    );
}

#[test]
fn validity_over_a_day_and_test_keys_are_refused() {
    let key = KeyPair::generate();
    let msg = Message::new("GET", "https://example.com/");
    let mut config = SignConfig::new(secs(T), AgentForm::None);
    config.validity = 86_401;
    assert!(
        sign_request(&key, &msg, &config).is_err(),
        "the signer refuses too"
    );

    // The RFC 9421 test key, in production mode.
    let seed: [u8; 32] = [
        0x9f, 0x83, 0x62, 0xf8, 0x7a, 0x48, 0x4a, 0x95, 0x4e, 0x6e, 0x74, 0x0c, 0x5b, 0x4c, 0x0e,
        0x84, 0x22, 0x91, 0x39, 0xa2, 0x0a, 0xa8, 0xab, 0x56, 0xff, 0x66, 0x58, 0x6f, 0x6a, 0x7d,
        0x29, 0xc5,
    ];
    let test_key = KeyPair::from_seed(seed);
    let m = signed(
        &test_key,
        AgentForm::dictionary("https://crawler.example"),
        &[],
    );
    let keys = StaticKeys::new(vec![test_key.public_jwk()]);
    assert!(reason(verify_request(&m, &keys, &VerifyConfig::at(secs(T + 1)))).contains("test key"));
    // The same key spelled with base64 padding is the same key (before, the
    // refusal compared text and let it through).
    let mut padded = test_key.public_jwk();
    padded.x.push('=');
    let keys_padded = StaticKeys::labelled(vec![Jwk {
        kid: Some(test_key.keyid()),
        ..padded
    }]);
    assert!(reason(verify_request(
        &m,
        &keys_padded,
        &VerifyConfig::at(secs(T + 1))
    ))
    .contains("test key"));
    let lab = VerifyConfig {
        reject_test_keys: false,
        ..VerifyConfig::at(secs(T + 1))
    };
    assert!(matches!(
        verify_request(&m, &keys, &lab),
        Outcome::Verified { .. }
    ));
}

#[test]
fn an_uncovered_signature_agent_is_refused() {
    let key = KeyPair::generate();
    let keys = StaticKeys::new(vec![key.public_jwk()]);
    let unsigned_agent = signed(&key, AgentForm::None, &[]);
    let mut m = unsigned_agent.clone();
    m.headers.push((
        "Signature-Agent".into(),
        "sig1=\"https://x.example\"".into(),
    ));
    assert!(
        reason(verify_request(&m, &keys, &VerifyConfig::at(secs(T + 1)))).contains("not covered")
    );
    // A member keyed to another label names nothing for this signature:
    // it verifies, attributed to its key alone (§5.2.2, §4.3).
    let mut m = unsigned_agent;
    m.headers.push((
        "Signature-Agent".into(),
        "other=\"https://x.example\"".into(),
    ));
    match verify_request(&m, &keys, &VerifyConfig::at(secs(T + 1))) {
        Outcome::Verified { agent, .. } => assert_eq!(agent, None),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_nonce_cache_forgets_expired_nonces_and_is_bounded() {
    let c = NonceCache::with_per_key(3, 2);
    assert_eq!(c.insert("k1", "a", secs(100), secs(10)), NonceCheck::Fresh);
    assert_eq!(
        c.insert("k1", "a", secs(100), secs(20)),
        NonceCheck::Replayed
    );
    // Nonces are per key: another key's "a" is its own.
    assert_eq!(c.insert("k2", "a", secs(100), secs(20)), NonceCheck::Fresh);
    assert_eq!(c.insert("k1", "b", secs(200), secs(20)), NonceCheck::Fresh);
    // k1 holds its share: it cannot push anything out.
    assert_eq!(c.insert("k1", "c", secs(300), secs(20)), NonceCheck::Full);
    assert_eq!(
        c.insert("k1", "a", secs(100), secs(30)),
        NonceCheck::Replayed
    );
    // Full overall: a new key is refused too, and nothing live is lost.
    assert_eq!(c.insert("k3", "x", secs(300), secs(30)), NonceCheck::Full);
    assert_eq!(c.len(), 3);
    // Once k1's "a" and k2's "a" expire (at 100), there is room again.
    assert_eq!(c.insert("k3", "x", secs(300), secs(150)), NonceCheck::Fresh);
    assert_eq!(c.insert("k1", "c", secs(300), secs(150)), NonceCheck::Fresh);
    assert_eq!(c.len(), 3);
}

#[test]
fn a_flood_of_nonces_cannot_evict_a_victims_nonce() {
    // Before: when the cache was full the oldest nonces went, live or not,
    // and nonces were not scoped per key, so an attacker with a valid key
    // of their own could flood nonces to evict a victim's, then replay it.
    let victim = KeyPair::generate();
    let attacker = KeyPair::generate();
    let keys = StaticKeys::new(vec![victim.public_jwk(), attacker.public_jwk()]);
    let config = VerifyConfig {
        replay: Some(NonceCache::with_per_key(64, 16)),
        ..VerifyConfig::at(secs(T + 1))
    };
    let victim_request = signed(&victim, AgentForm::None, &[]);
    assert!(matches!(
        verify_request(&victim_request, &keys, &config),
        Outcome::Verified { .. }
    ));
    let mut refused = 0;
    for _ in 0..200 {
        let m = signed(&attacker, AgentForm::None, &[]);
        if let Outcome::Invalid { reason } = verify_request(&m, &keys, &config) {
            assert!(
                reason.to_string().contains("replay cache is full"),
                "{reason}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 200 - 16, "the attacker fills only its own share");
    assert!(reason(verify_request(&victim_request, &keys, &config)).contains("replayed"));
    // Other keys still get in.
    let other = KeyPair::generate();
    let keys2 = StaticKeys::new(vec![victim.public_jwk(), other.public_jwk()]);
    assert!(matches!(
        verify_request(&signed(&other, AgentForm::None, &[]), &keys2, &config),
        Outcome::Verified { .. }
    ));
}

#[test]
fn without_a_nonce_replay_protection_refuses_unless_allowed() {
    let key = KeyPair::generate();
    let keys = StaticKeys::new(vec![key.public_jwk()]);
    let msg = Message::new("GET", "https://example.com/page?q=1");
    let mut sign = SignConfig::new(secs(T), AgentForm::None);
    sign.nonce = false;
    let mut m = msg.clone();
    m.headers
        .extend(sign_request(&key, &msg, &sign).expect("sign"));
    let strict = VerifyConfig {
        replay: Some(NonceCache::new(100)),
        ..VerifyConfig::at(secs(T + 1))
    };
    assert!(reason(verify_request(&m, &keys, &strict)).starts_with("no nonce"));
    let lenient = VerifyConfig {
        replay: Some(NonceCache::new(100)),
        allow_nonceless: true,
        ..VerifyConfig::at(secs(T + 1))
    };
    assert!(matches!(
        verify_request(&m, &keys, &lenient),
        Outcome::Verified { .. }
    ));
    // Without replay protection nonces are not looked at.
    assert!(matches!(
        verify_request(&m, &keys, &VerifyConfig::at(secs(T + 1))),
        Outcome::Verified { .. }
    ));
}

#[test]
fn signing_a_reqwest_request() {
    let key = KeyPair::generate();
    let client = reqwest::Client::new();
    let mut req = client
        .get("https://example.com/x?y=1")
        .build()
        .expect("request");
    mannerly_botauth::sign_reqwest(
        &key,
        &mut req,
        &SignConfig::new(secs(T), AgentForm::dictionary("https://crawler.example")),
    )
    .expect("sign");
    let m = Message::from_reqwest(&req);
    let keys = StaticKeys::new(vec![key.public_jwk()]);
    assert!(matches!(
        verify_request(&m, &keys, &VerifyConfig::at(secs(T + 1))),
        Outcome::Verified { .. }
    ));
}

#[test]
fn a_covered_content_digest_is_checked_against_the_body() {
    let key = KeyPair::generate();
    let keys = StaticKeys::from_directory(DIR, vec![key.public_jwk()]);
    let body = br#"{"q":"original"}"#;
    let mut msg = Message::new("POST", "https://example.com/api").header(
        "Content-Digest",
        &mannerly_botauth::proof::content_digest(body),
    );
    msg.body = Some(body.to_vec());
    let mut config = SignConfig::new(secs(T), AgentForm::dictionary(DIR));
    config.extra_components = vec!["@method".into(), "content-digest".into()];
    let mut m = msg.clone();
    m.headers
        .extend(sign_request(&key, &msg, &config).expect("sign"));
    let at = VerifyConfig::at(secs(T + 5));
    assert!(matches!(
        verify_request(&m, &keys, &at),
        Outcome::Verified { .. }
    ));
    // The same headers with another body: refused, not verified.
    let mut swapped = m.clone();
    swapped.body = Some(br#"{"q":"swapped"}"#.to_vec());
    match verify_request(&swapped, &keys, &at) {
        Outcome::Invalid { reason } => {
            assert!(
                reason.to_string().contains("Content-Digest does not match"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Without the body, nothing to check it against: verified as before.
    let mut headers_only = m.clone();
    headers_only.body = None;
    assert!(matches!(
        verify_request(&headers_only, &keys, &at),
        Outcome::Verified { .. }
    ));
    // Parsed from a request file, the body is what follows the blank line.
    let text = format!(
        "POST /api HTTP/1.1\r\nHost: example.com\r\n{}\r\n\r\n{{\"q\":\"swapped\"}}",
        m.headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("\r\n")
    );
    let parsed = Message::parse_http(&text, "https").expect("parses");
    assert_eq!(parsed.body.as_deref(), Some(&br#"{"q":"swapped"}"#[..]));
    assert!(matches!(
        verify_request(&parsed, &keys, &at),
        Outcome::Invalid { .. }
    ));
}
