//! Verification through a key directory served by the simulated web over
//! https: success, redirects, size, private addresses, unknown keys, and a
//! failed refresh that keeps the good keys.

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
    for (k, v) in resp.headers {
        r = r.header(k, v);
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

/// Why a request was not verified: the verifier's rejection, or the
/// directory's problem (the signature was then not checked).
fn reason(o: Result<Outcome, mannerly_botauth::client::DirectoryError>) -> String {
    match o {
        Ok(Outcome::Invalid { reason }) => reason.to_string(),
        Err(e) => e.to_string(),
        Ok(other) => panic!("expected Invalid, got {other:?}"),
    }
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
    let m = signed_by(&pair, &origin);
    match c.verify_request(&m, &VerifyConfig::at(now())).await {
        Ok(Outcome::Verified { agent, keyid, .. }) => {
            assert_eq!(agent.as_deref(), Some(origin.as_str()));
            assert_eq!(keyid, pair.keyid());
        }
        other => panic!("{other:?}"),
    }
    // max-age=0: the next lookup refreshes, gets 503, keeps the keys.
    assert!(matches!(
        c.verify_request(&m, &VerifyConfig::at(now())).await,
        Ok(Outcome::Verified { .. })
    ));
    assert_eq!(w.count("crawler.test", DIRECTORY_PATH), 2);
    // A key the directory does not list.
    let stranger = signed_by(&KeyPair::generate(), &origin);
    assert!(
        reason(c.verify_request(&stranger, &VerifyConfig::at(now())).await)
            .starts_with("unknown key")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirecting_oversized_and_private_directories_are_refused() {
    let w = web().await;
    let pair = KeyPair::generate();
    let moved = w.https_url("moved.test", "").expect("tls");
    let big = w.https_url("big.test", "").expect("tls");
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
    let local = format!("https://localhost:{}", w.tls_ports()[0]);
    assert!(reason(
        strict
            .verify_request(&signed_by(&pair, &local), &VerifyConfig::at(now()))
            .await
    )
    .contains("not a public address a verifier may contact: refused"));
    let plain = w.url("crawler.test", "");
    assert!(reason(
        strict
            .verify_request(&signed_by(&pair, &plain), &VerifyConfig::at(now()))
            .await
    )
    .contains("https only"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_directory_is_held_to_its_signature() {
    // Before: a directory's own signature was never checked when fetched.
    let w = web().await;
    let pair = KeyPair::generate();
    let stranger = KeyPair::generate();
    let origin = w.https_url("crawler.test", "").expect("tls");
    // The body changed after signing: its digest no longer matches.
    let (resp, body) =
        signed_directory(std::slice::from_ref(&pair), &origin, now(), 300).expect("directory");
    let tampered = body.replace("\"keys\"", "\"keys\" ");
    let mut bad = Reply::text(tampered);
    for (k, v) in &resp.headers {
        bad = bad.header(k, v);
    }
    w.set_host(
        "crawler.test",
        HostSpec::default().route(DIRECTORY_PATH, vec![bad]),
    );
    let c = client(&w, true);
    let e = c.keys(&origin).await.expect_err("refused");
    assert!(e.to_string().contains("Content-Digest"), "{e}");
    // A key added to a signed directory.
    let (resp, body) =
        signed_directory(std::slice::from_ref(&pair), &origin, now(), 300).expect("directory");
    let mut doc: serde_json::Value = serde_json::from_str(&body).expect("json");
    doc["keys"]
        .as_array_mut()
        .expect("keys")
        .push(serde_json::to_value(stranger.public_jwk()).expect("jwk"));
    let body = doc.to_string();
    let mut r = Reply::text(body.clone());
    for (k, v) in &resp.headers {
        if !k.eq_ignore_ascii_case("content-digest") {
            r = r.header(k, v);
        }
    }
    let r = r.header(
        "Content-Digest",
        mannerly_botauth::directory::content_digest(body.as_bytes()),
    );
    w.set_host(
        "other.test",
        HostSpec::default().route(DIRECTORY_PATH, vec![r]),
    );
    let origin2 = w.https_url("other.test", "").expect("tls");
    // (Its signature covers the digest, so adding a key breaks it too.)
    let e = c.keys(&origin2).await.expect_err("refused");
    assert!(
        e.to_string().contains("did not sign") || e.to_string().contains("directory signature"),
        "{e}"
    );
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
    let broken = w.https_url("broken.test", "").expect("tls");
    for _ in 0..3 {
        assert!(c.keys(&broken).await.is_err());
    }
    assert_eq!(w.count("broken.test", DIRECTORY_PATH), 1, "one fetch");
    for host in ["a.test", "b.test", "c.test"] {
        let _ = c.keys(&w.https_url(host, "").expect("tls")).await;
    }
    assert_eq!(c.cached(), 2);
}
