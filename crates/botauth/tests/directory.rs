//! Verification through a key directory served by the simulated web over
//! https: success, redirects, size, private addresses, unknown keys, a
//! failed refresh that keeps the good keys, and the editor's copy's rules
//! (the member fetched as it is, attribution without the query, bad
//! entries dropped, a bad proof not fatal).

use mannerly_botauth::client::{DirectoryClient, DirectoryConfig};
use mannerly_botauth::directory::{signed_directory, DIRECTORY_PATH};
use mannerly_botauth::UnixMillis;
use mannerly_botauth::{
    sign_request, AgentForm, KeyPair, Message, Outcome, SignConfig, VerifyConfig,
};
use mannerly_testweb::{Body, HostSpec, Reply, TestWeb};

fn now() -> UnixMillis {
    UnixMillis::now()
}

async fn web() -> TestWeb {
    TestWeb::with_hosts([]).await.expect("web")
}

fn client(web: &TestWeb, allow_private: bool) -> DirectoryClient {
    let config = DirectoryConfig {
        allow_private,
        ..DirectoryConfig::default()
    };
    let ca = reqwest::Certificate::from_der(&web.ca_der()).expect("ca");
    let c = DirectoryClient::client_builder(&config)
        .dns_resolver(web.resolver())
        .add_root_certificate(ca)
        .build()
        .expect("client");
    DirectoryClient::with_client(c, config)
}

fn directory_reply(pair: &KeyPair, origin: &str) -> Reply {
    let (resp, body) =
        signed_directory(std::slice::from_ref(pair), origin, now(), 300).expect("directory");
    let mut r = Reply::text(body);
    // The tests set their own cache lifetimes.
    for (k, v) in resp.headers {
        if k != "Cache-Control" {
            r = r.header(k, v);
        }
    }
    r
}

fn signed_by(pair: &KeyPair, agent: &str) -> Message {
    let msg = Message::new("GET", "https://site.example/page");
    let mut m = msg.clone();
    m.headers.extend(
        sign_request(
            pair,
            &msg,
            &SignConfig::new(now(), AgentForm::dictionary(agent)),
        )
        .expect("sign"),
    );
    m
}

/// Why a request was not verified: invalid, or unverified (a directory's
/// problem is never "invalid").
fn reason(o: Outcome) -> String {
    match o {
        Outcome::Invalid { reason } => format!("invalid: {reason}"),
        Outcome::Unverified { reason } => format!("unverified: {reason}"),
        other => panic!("expected Invalid or Unverified, got {other:?}"),
    }
}

/// The directory URL at `host`'s well-known path.
fn well_known(w: &TestWeb, host: &str) -> String {
    w.https_url(host, DIRECTORY_PATH).expect("tls")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_through_the_directory_and_failed_refresh_keeps_keys() {
    let w = web().await;
    let pair = KeyPair::generate();
    let origin = w.https_url("crawler.test", "").expect("tls");
    let good = directory_reply(&pair, &origin).header("Cache-Control", "max-age=0");
    w.set_host(
        "crawler.test",
        HostSpec::default().route(DIRECTORY_PATH, vec![good, Reply::status(503)]),
    );
    let c = client(&w, true);
    // The member names the JWK Set; a query is part of what is fetched but
    // not of the identifier (§5.5).
    let dir = well_known(&w, "crawler.test");
    let m = signed_by(&pair, &format!("{dir}?v=2"));
    match c.verify_request(&m, &VerifyConfig::at(now())).await {
        Outcome::Verified { agent, keyid, .. } => {
            assert_eq!(agent.as_deref(), Some(dir.as_str()));
            assert_eq!(keyid, pair.keyid());
        }
        other => panic!("{other:?}"),
    }
    // max-age=0: the next lookup refreshes, gets 503, keeps the keys.
    assert!(matches!(
        c.verify_request(&m, &VerifyConfig::at(now())).await,
        Outcome::Verified { .. }
    ));
    let with_query = format!("{DIRECTORY_PATH}?v=2");
    assert_eq!(w.count("crawler.test", &with_query), 2);
    // A key the directory does not list: unverified, not invalid.
    let stranger = signed_by(&KeyPair::generate(), &format!("{dir}?v=2"));
    let why = reason(c.verify_request(&stranger, &VerifyConfig::at(now())).await);
    assert!(why.starts_with("unverified: unknown key"), "{why}");
    // A bare origin is fetched as it is, not completed to the well-known
    // path: it serves no JWK Set, so the request is unverified.
    let bare = reason(
        c.verify_request(&signed_by(&pair, &origin), &VerifyConfig::at(now()))
            .await,
    );
    assert!(bare.starts_with("unverified: key directory"), "{bare}");
    assert_eq!(
        w.count("crawler.test", "/"),
        1,
        "the origin was fetched as it is"
    );
    // (Three fetches of the JWK Set: max-age=0 refetched it for the
    // stranger; none at the well-known path for the bare origin.)
    assert_eq!(w.count("crawler.test", &with_query), 3, "no path guessed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirecting_oversized_and_private_directories_are_refused() {
    let w = web().await;
    let pair = KeyPair::generate();
    let moved = well_known(&w, "moved.test");
    let big = well_known(&w, "big.test");
    w.set_host(
        "moved.test",
        HostSpec::default().route(
            DIRECTORY_PATH,
            vec![Reply::redirect(302, "https://elsewhere.test/keys")],
        ),
    );
    w.set_host(
        "big.test",
        HostSpec::default().route(
            DIRECTORY_PATH,
            vec![Reply::body(Body::Huge {
                bytes: 1 << 20,
                line: "x".into(),
            })],
        ),
    );
    let c = client(&w, true);
    assert!(reason(
        c.verify_request(&signed_by(&pair, &moved), &VerifyConfig::at(now()))
            .await
    )
    .contains("must not follow redirects"));
    assert!(reason(
        c.verify_request(&signed_by(&pair, &big), &VerifyConfig::at(now()))
            .await
    )
    .contains("larger than 65536 bytes"));
    let strict = client(&w, false);
    let local = format!("https://localhost:{}{DIRECTORY_PATH}", w.tls_ports()[0]);
    assert!(reason(
        strict
            .verify_request(&signed_by(&pair, &local), &VerifyConfig::at(now()))
            .await
    )
    .contains("not a public address a verifier may contact: refused"));
    let plain = w.url("crawler.test", DIRECTORY_PATH);
    assert!(reason(
        strict
            .verify_request(&signed_by(&pair, &plain), &VerifyConfig::at(now()))
            .await
    )
    .contains("https only"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_proof_still_yields_keys_and_bad_entries_are_dropped() {
    // Appendix B.1: a verifier may use the keys of a directory it resolved
    // whether or not the possession proof holds; the proof is what binds
    // them to the domain. §5.5.1: malformed entries are rejected.
    let w = web().await;
    let pair = KeyPair::generate();
    let origin = w.https_url("crawler.test", "").expect("tls");
    let (resp, body) =
        signed_directory(std::slice::from_ref(&pair), &origin, now(), 300).expect("directory");
    let tampered = body.replace("\"keys\"", "\"keys\" ");
    let mut bad = Reply::text(tampered.clone());
    for (k, v) in &resp.headers {
        bad = bad.header(k, v);
    }
    w.set_host(
        "crawler.test",
        HostSpec::default().route(DIRECTORY_PATH, vec![bad]),
    );
    let c = client(&w, true);
    let dir = well_known(&w, "crawler.test");
    assert_eq!(c.keys(&dir).await.expect("keys").len(), 1);
    let proof = mannerly_botauth::directory::verify_directory(
        &dir,
        &mannerly_botauth::Response {
            status: 200,
            headers: resp.headers.clone(),
        },
        tampered.as_bytes(),
        now(),
    );
    assert!(proof
        .expect_err("bad proof")
        .to_string()
        .contains("Content-Digest"));
    // Entries: a kid that is not the thumbprint, an alg outside the HTTP
    // Signature Algorithms registry, a published private part.
    let good = pair.public_jwk();
    let (wrong_kid, jose_alg, private) = (
        KeyPair::generate(),
        KeyPair::generate(),
        KeyPair::generate(),
    );
    let mut k1 = wrong_kid.public_jwk();
    k1.kid = Some("key-1".into());
    let mut k2 = jose_alg.public_jwk();
    k2.alg = Some("EdDSA".into());
    let k3 = private.private_jwk();
    let doc = serde_json::json!({ "keys": [good, k1, k2, k3] }).to_string();
    w.set_host(
        "entries.test",
        HostSpec::default().route(DIRECTORY_PATH, vec![Reply::text(doc)]),
    );
    let dir = well_known(&w, "entries.test");
    let keys = c.keys(&dir).await.expect("keys");
    assert_eq!(
        keys,
        vec![pair.public_jwk()],
        "only the well-formed entry is kept"
    );
    let m = signed_by(&wrong_kid, &dir);
    assert!(reason(c.verify_request(&m, &VerifyConfig::at(now())).await)
        .starts_with("unverified: unknown key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_remembered_briefly_and_the_cache_is_bounded() {
    // Before: failures were not cached (each request naming a failing
    // agent cost an outbound fetch) and the cache never shrank.
    let w = web().await;
    w.set_host(
        "broken.test",
        HostSpec::default().route(DIRECTORY_PATH, vec![Reply::status(500)]),
    );
    let config = DirectoryConfig {
        allow_private: true,
        max_cached: 2,
        ..DirectoryConfig::default()
    };
    let ca = reqwest::Certificate::from_der(&w.ca_der()).expect("ca");
    let rc = DirectoryClient::client_builder(&config)
        .dns_resolver(w.resolver())
        .add_root_certificate(ca)
        .build()
        .expect("client");
    let c = DirectoryClient::with_client(rc, config);
    let broken = well_known(&w, "broken.test");
    for _ in 0..3 {
        assert!(c.keys(&broken).await.is_err());
    }
    assert_eq!(w.count("broken.test", DIRECTORY_PATH), 1, "one fetch");
    for host in ["a.test", "b.test", "c.test"] {
        let _ = c.keys(&w.https_url(host, "").expect("tls")).await;
    }
    assert_eq!(c.cached(), 2);
}
