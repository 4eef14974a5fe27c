//! The working group's editor's copy (October 2026): its Appendix E
//! Ed25519 vectors, and one refusal per MUST, each with its own reason.
//! Stands without ../shared (the vectors' values are written here).

use mannerly_botauth::accept::{accept_signature, challenge, SignatureRequest};
use mannerly_botauth::directory::verify_directory;
use mannerly_botauth::{
    agent_identifier, sign_request, verify_each, verify_request, AgentForm, KeyPair, Message,
    NonceCache, Outcome, Rejection, Response, SignConfig, StaticKeys, UnixMillis, VerifyConfig,
};

const T: u64 = 1_800_000_000;
const DIR: &str = "https://crawler.example/.well-known/http-message-signatures-directory";

/// RFC 9421 Appendix B.1.4's Ed25519 test key, which every draft vector
/// uses.
fn test_key() -> KeyPair {
    KeyPair::from_seed([
        0x9f, 0x83, 0x62, 0xf8, 0x7a, 0x48, 0x4a, 0x95, 0x4e, 0x6e, 0x74, 0x0c, 0x5b, 0x4c, 0x0e,
        0x84, 0x22, 0x91, 0x39, 0xa2, 0x0a, 0xa8, 0xab, 0x56, 0xff, 0x66, 0x58, 0x6f, 0x6a, 0x7d,
        0x29, 0xc5,
    ])
}

/// Verifying the drafts' vectors: the test key allowed, their far
/// `expires` allowed (the `--max-validity` a replayer would give).
fn vector_config(now: u64) -> VerifyConfig {
    VerifyConfig {
        reject_test_keys: false,
        max_validity: i64::MAX,
        ..VerifyConfig::at(UnixMillis::from_secs(now))
    }
}

fn reason(o: Outcome) -> String {
    match o {
        Outcome::Invalid { reason } => format!("invalid: {reason}"),
        Outcome::Unverified { reason } => format!("unverified: {reason}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn signed(key: &KeyPair, msg: &Message, config: &SignConfig) -> Message {
    let mut m = msg.clone();
    m.headers
        .extend(sign_request(key, msg, config).expect("sign"));
    m
}

fn sign_config(label: &str, agent: &str, extra: &[&str]) -> SignConfig {
    let mut c = SignConfig::new(UnixMillis::from_secs(T), AgentForm::dictionary(agent));
    c.label = label.into();
    c.extra_components = extra.iter().map(|s| s.to_string()).collect();
    c
}

#[test]
fn appendix_e2_vectors_verify() {
    let key = test_key();
    let keyid = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
    assert_eq!(key.keyid(), keyid);
    let keys = StaticKeys::from_directory("https://signature-agent.test", vec![key.public_jwk()]);
    let cases = [
        // E.2.1: the dictionary form, member keyed to the label.
        (
            r#"sig2="https://signature-agent.test""#,
            r#"sig2=("@authority" "signature-agent";key="sig2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth""#,
            "sig2=:CGokAoY/FrPpyuzTe1Fb2kLTAH9Idw6qSFd1+D77r1firsMRCxeuLu5e6O+ek3zQgDMAzjiXtLVfqE00xnABCQ==:",
        ),
        // E.2.2: the legacy bare string.
        (
            r#""https://signature-agent.test""#,
            r#"sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth""#,
            "sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:",
        ),
    ];
    for (agent, input, sig) in cases {
        let m = Message::new("POST", "https://example.com/foo?param=Value&Pet=dog")
            .header("Host", "example.com")
            .header("Signature-Agent", agent)
            .header("Signature-Input", input)
            .header("Signature", sig);
        match verify_request(&m, &keys, &vector_config(1_735_689_700)) {
            Outcome::Verified {
                agent, keyid: k, ..
            } => {
                assert_eq!(k, keyid);
                assert_eq!(agent.as_deref(), Some("https://signature-agent.test/"));
            }
            other => panic!("{agent}: {other:?}"),
        }
        // Production defaults refuse the test key.
        let prod = VerifyConfig {
            max_validity: i64::MAX,
            ..VerifyConfig::at(UnixMillis::from_secs(1_735_689_700))
        };
        assert!(reason(verify_request(&m, &keys, &prod)).contains("test key"));
    }
}

#[test]
fn appendix_e23_directory_proof_is_not_held_to_a_day() {
    let body = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}"#;
    let response = Response {
        status: 200,
        headers: vec![
            ("Content-Type".into(), "application/http-message-signatures-directory+json".into()),
            ("Content-Digest".into(), "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:".into()),
            ("Signature-Input".into(), r#"binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory""#.into()),
            ("Signature".into(), "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:".into()),
        ],
    };
    let url = "https://signature-agent.test/.well-known/http-message-signatures-directory";
    // Valid ~100 years: a directory proof is not a request signature.
    let keys = verify_directory(url, &response, body.as_bytes(), UnixMillis::from_secs(T))
        .expect("the E.2.3 proof holds");
    assert_eq!(keys.len(), 1);
    // A proof created in the future is refused (Appendix B.1).
    let e = verify_directory(
        url,
        &response,
        body.as_bytes(),
        UnixMillis::from_secs(1_735_689_000),
    )
    .expect_err("future");
    assert!(e.to_string().contains("in the future"), "{e}");
    // Served under another authority: refused.
    let e = verify_directory(
        "https://copy.example/keys",
        &response,
        body.as_bytes(),
        UnixMillis::from_secs(T),
    );
    assert!(e.is_err());
}

#[test]
fn the_member_keyed_to_the_label_is_the_one_read() {
    // Two signers, as in Appendix D.2: each verified on its own, each
    // attributed to its own member; the outer covers the inner (§5.2.2).
    let (agent_key, browser_key) = (KeyPair::generate(), KeyPair::generate());
    let agent_dir = "https://agent.example/jwks.json";
    let browser_dir = "https://browser.example/jwks.json";
    let msg = Message::new("GET", "https://origin.example/resource");
    let inner = signed(
        &agent_key,
        &msg,
        &sign_config("agent", agent_dir, &["@method", "@path"]),
    );
    let chain = [
        "@method",
        "@path",
        r#""signature-agent";key="agent""#,
        r#""signature-input";key="agent""#,
        r#""signature";key="agent""#,
    ];
    let both = signed(
        &browser_key,
        &inner,
        &sign_config("browser", browser_dir, &chain),
    );
    let mut keys = StaticKeys::from_directory(agent_dir, vec![agent_key.public_jwk()]);
    let config = VerifyConfig::at(UnixMillis::from_secs(T + 1));
    let verdicts = verify_each(&both, None, &keys, &config);
    assert_eq!(verdicts.len(), 2);
    assert!(
        matches!(&verdicts[0].outcome, Outcome::Verified { agent: Some(a), .. } if a == agent_dir)
    );
    assert!(
        matches!(&verdicts[1].outcome, Outcome::Unverified { .. }),
        "browser key unknown here"
    );
    keys = StaticKeys::from_directory(browser_dir, vec![browser_key.public_jwk()]);
    let verdicts = verify_each(&both, None, &keys, &config);
    assert!(
        matches!(&verdicts[1].outcome, Outcome::Verified { agent: Some(a), .. } if a == browser_dir)
    );
    // The outer signature covers the inner's signature without its
    // signature-input: refused by the chaining rule.
    let partial = signed(
        &browser_key,
        &inner,
        &sign_config("browser", browser_dir, &[r#""signature";key="agent""#]),
    );
    let why = reason(
        verify_each(&partial, None, &keys, &config)
            .remove(1)
            .outcome,
    );
    assert!(
        why.contains("signature;key=agent but not \"signature-input\";key=\"agent\""),
        "{why}"
    );
    // Covers signature-input but not a component it lists.
    let short = signed(
        &browser_key,
        &inner,
        &sign_config(
            "browser",
            browser_dir,
            &[
                r#""signature-input";key="agent""#,
                r#""signature";key="agent""#,
            ],
        ),
    );
    let why = reason(verify_each(&short, None, &keys, &config).remove(1).outcome);
    assert!(
        why.contains(r#"but not "signature-agent";key="agent""#),
        "{why}"
    );
    // A request with an invalid signature beside a valid one is invalid.
    let mut bad = both.clone();
    bad.target_uri = "https://origin.example/other".into();
    assert!(matches!(
        verify_request(&bad, &keys, &config),
        Outcome::Invalid { .. }
    ));
}

#[test]
fn members_with_parameters_are_ignored_and_attribution_needs_the_url() {
    let key = KeyPair::generate();
    let msg = Message::new("GET", "https://origin.example/");
    let config = VerifyConfig::at(UnixMillis::from_secs(T + 1));
    let m = signed(&key, &msg, &sign_config("sig1", DIR, &[]));
    // Keys from the named URL: attributed. Keys held by other means (a
    // file, another directory): verified, attributed to the key alone
    // (§4.4, §4.3).
    let from_dir = StaticKeys::from_directory(DIR, vec![key.public_jwk()]);
    assert!(matches!(
        verify_request(&m, &from_dir, &config),
        Outcome::Verified { agent: Some(_), .. }
    ));
    let held = StaticKeys::new(vec![key.public_jwk()]);
    assert!(matches!(
        verify_request(&m, &held, &config),
        Outcome::Verified { agent: None, .. }
    ));
    let elsewhere =
        StaticKeys::from_directory("https://other.example/jwks", vec![key.public_jwk()]);
    assert!(matches!(
        verify_request(&m, &elsewhere, &config),
        Outcome::Verified { agent: None, .. }
    ));
    // A member carrying parameters is ignored: no agent, so not attributed
    // (the covered value is still what was signed, so a parameter added
    // later breaks the signature instead).
    let mut c = sign_config("sig1", DIR, &[]);
    c.agent = AgentForm::None;
    let mut with_param = signed(&key, &msg, &c);
    with_param.headers.push((
        "Signature-Agent".into(),
        format!("sig1=\"{DIR}\";type=cimd"),
    ));
    let why = reason(verify_request(&with_param, &from_dir, &config));
    assert!(why.contains("not covered"), "{why}");
    // The identifier drops the query and normalises the rest.
    assert_eq!(
        agent_identifier(
            "https://Crawler.Example:443/.well-known/http-message-signatures-directory?x=1#f"
        )
        .as_deref(),
        Some(DIR)
    );
    assert_eq!(
        agent_identifier("https://a.example/%7euser/%2fkeys").as_deref(),
        Some("https://a.example/~user/%2Fkeys")
    );
    assert_eq!(agent_identifier("not a url"), None);
}

#[test]
fn a_member_with_parameters_names_no_agent() {
    // Signed over a member that carries a parameter: the signature holds,
    // but the member is ignored (§5.2.1), so nothing is attributed.
    let key = KeyPair::generate();
    let msg = Message::new("GET", "https://origin.example/")
        .header("Signature-Agent", &format!("sig1=\"{DIR}\";type=cimd"));
    let mut c = sign_config("sig1", DIR, &[r#""signature-agent";key="sig1""#]);
    c.agent = AgentForm::None;
    let m = signed(&key, &msg, &c);
    let keys = StaticKeys::from_directory(DIR, vec![key.public_jwk()]);
    let config = VerifyConfig::at(UnixMillis::from_secs(T + 1));
    assert!(matches!(
        verify_request(&m, &keys, &config),
        Outcome::Verified { agent: None, .. }
    ));
}

#[test]
fn target_uri_stands_in_for_authority_and_query_params_are_covered() {
    let key = KeyPair::generate();
    let keys = StaticKeys::new(vec![key.public_jwk()]);
    let config = VerifyConfig::at(UnixMillis::from_secs(T + 1));
    let msg = Message::new(
        "GET",
        "https://origin.example/search?q=cat+pictures&page=2&q=dogs",
    );
    let m = signed(
        &key,
        &msg,
        &sign_config("sig1", DIR, &[r#""@query-param";name="q""#, "@target-uri"]),
    );
    assert!(matches!(
        verify_request(&m, &keys, &config),
        Outcome::Verified { .. }
    ));
    let mut changed = m.clone();
    changed.target_uri = "https://origin.example/search?q=cat+pictures&page=2&q=cats".into();
    assert!(reason(verify_request(&changed, &keys, &config)).contains("does not match"));
    // Neither @authority nor @target-uri: refused.
    let base =
        r#"sig1=("@method");created=1800000000;expires=1800000060;keyid="k";tag="web-bot-auth""#;
    let bare = Message::new("GET", "https://origin.example/")
        .header("Signature-Input", base)
        .header("Signature", "sig1=:AAAA:");
    assert!(reason(verify_request(&bare, &keys, &config))
        .contains("neither @authority nor @target-uri"));
    // @target-uri alone is enough.
    let input = format!(
        r#"sig1=("@target-uri");created={T};expires={};keyid="{}";tag="web-bot-auth""#,
        T + 60,
        key.keyid()
    );
    let m = Message::new("GET", "https://origin.example/").header("Signature-Input", &input);
    let base = format!(
        "\"@target-uri\": https://origin.example/\n\"@signature-params\": {}",
        &input[5..]
    );
    let sig = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        key.sign_for_test(base.as_bytes()),
    );
    let m = m.header("Signature", &format!("sig1=:{sig}:"));
    assert!(matches!(
        verify_request(&m, &keys, &config),
        Outcome::Verified { .. }
    ));
}

#[test]
fn plain_http_unknown_keys_and_challenges() {
    let key = KeyPair::generate();
    let keys = StaticKeys::new(vec![key.public_jwk()]);
    let config = VerifyConfig::at(UnixMillis::from_secs(T + 1));
    let http = signed(
        &key,
        &Message::new("GET", "http://origin.example/"),
        &sign_config("sig1", DIR, &[]),
    );
    assert_eq!(
        reason(verify_request(&http, &keys, &config)),
        "invalid: signed over plain http: signatures are accepted over https only (§6.1)"
    );
    let lab = VerifyConfig {
        allow_http: true,
        ..VerifyConfig::at(UnixMillis::from_secs(T + 1))
    };
    assert!(matches!(
        verify_request(&http, &keys, &lab),
        Outcome::Verified { .. }
    ));
    // Unknown key: unverified, not invalid.
    let m = signed(
        &key,
        &Message::new("GET", "https://origin.example/"),
        &sign_config("sig1", DIR, &[]),
    );
    let other = StaticKeys::new(vec![KeyPair::generate().public_jwk()]);
    assert!(matches!(
        verify_request(&m, &other, &config),
        Outcome::Unverified {
            reason: Rejection::UnknownKey(_)
        }
    ));
    // §5.3: an unsigned request is asked for a signature with 403; a
    // replayed one with 429 and a fresh nonce.
    let ask = SignatureRequest::web_bot_auth("sig1");
    let c = challenge(&Outcome::Unsigned, &ask)
        .expect("header")
        .expect("challenge");
    assert_eq!(c.status, 403);
    assert!(c
        .accept_signature
        .starts_with(r#"sig1=("@authority" "signature-agent";key="sig1")"#));
    let replay = VerifyConfig {
        replay: Some(NonceCache::new(100)),
        ..VerifyConfig::at(UnixMillis::from_secs(T + 1))
    };
    assert!(matches!(
        verify_request(&m, &keys, &replay),
        Outcome::Verified { .. }
    ));
    let again = verify_request(&m, &keys, &replay);
    let fresh = SignatureRequest {
        nonce: Some("bm9uY2U".into()),
        ..ask.clone()
    };
    let c = challenge(&again, &fresh)
        .expect("header")
        .expect("challenge");
    assert_eq!(c.status, 429);
    assert!(
        c.accept_signature.contains(r#"nonce="bm9uY2U""#),
        "{}",
        c.accept_signature
    );
    assert_eq!(
        challenge(&verify_request(&m, &other, &config), &ask).expect("header"),
        None,
        "unverified is policy"
    );
    assert!(accept_signature(&SignatureRequest {
        label: "not a key!".into(),
        ..ask
    })
    .is_err());
}

#[test]
fn covering_the_whole_field_covers_the_member_keyed_to_the_label() {
    // A sender that covers "signature-agent" with no key, over a dictionary:
    // the whole field, so the member keyed to its label, is signed.
    let key = KeyPair::generate();
    let msg = Message::new("GET", "https://origin.example/")
        .header("Signature-Agent", &format!("sig1=\"{DIR}\""));
    let mut c = sign_config("sig1", DIR, &["signature-agent"]);
    c.agent = AgentForm::None;
    let m = signed(&key, &msg, &c);
    let keys = StaticKeys::from_directory(DIR, vec![key.public_jwk()]);
    let config = VerifyConfig::at(UnixMillis::from_secs(T + 1));
    match verify_request(&m, &keys, &config) {
        Outcome::Verified { agent, .. } => assert_eq!(agent.as_deref(), Some(DIR)),
        other => panic!("{other:?}"),
    }
}
