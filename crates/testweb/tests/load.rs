//! The simulated web under load: thousands of generated hosts, many
//! requests at once, every one recorded with its host's concurrency.

use std::sync::Arc;

use mannerly_testweb::{Body, HostSpec, Reply, TestWeb, WebConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_generated_hosts_answer_concurrently() {
    let mut config = WebConfig::default();
    config.generated.count = 20_000;
    let web = Arc::new(TestWeb::start(config).await.expect("start"));
    let client = reqwest::Client::builder()
        .dns_resolver(web.resolver())
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let sem = Arc::new(tokio::sync::Semaphore::new(128));
    let mut tasks = Vec::new();
    for n in 0..4000u32 {
        let (client, web, sem) = (client.clone(), web.clone(), sem.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = sem.acquire().await.expect("permit");
            let host = format!("h{}.gen.test", n * 5);
            let path = if n % 2 == 0 {
                "/robots.txt"
            } else {
                "/p3.html"
            };
            let resp = client.get(web.url(&host, path)).send().await.expect("send");
            let status = resp.status().as_u16();
            let body = resp.text().await.expect("body");
            (status, body)
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let (status, body) = t.await.expect("task");
        assert_eq!(status, 200);
        if i % 2 == 0 {
            assert!(body.starts_with("User-agent: *"));
        } else {
            assert!(body.contains("<a href="), "{body}");
        }
    }
    let records = web.requests();
    assert_eq!(records.len(), 4000);
    assert!(records
        .iter()
        .all(|r| r.finished.is_some_and(|f| f >= r.started)));
    // One request per host here, so no host ever saw two at once.
    assert!(records.iter().all(|r| r.in_flight_at_start == 1));
    // An unknown host is a 404, not an error.
    let resp = client
        .get(web.url("nobody.test", "/"))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status().as_u16(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_per_host_is_measured() {
    let mut config = WebConfig::default();
    config.hosts.insert(
        "busy.test".into(),
        HostSpec::default().route(
            "/slow",
            vec![Reply::body(Body::Text { text: "ok".into() }).latency(150)],
        ),
    );
    let web = Arc::new(TestWeb::start(config).await.expect("start"));
    let client = reqwest::Client::builder()
        .dns_resolver(web.resolver())
        .build()
        .expect("client");
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let (client, web) = (client.clone(), web.clone());
        tasks.push(tokio::spawn(async move {
            client
                .get(web.url("busy.test", "/slow"))
                .send()
                .await
                .map(|r| r.status())
        }));
    }
    for t in tasks {
        assert_eq!(t.await.expect("task").expect("send").as_u16(), 200);
    }
    assert_eq!(
        web.max_in_flight("busy.test"),
        5,
        "five at once against one host is visible"
    );
    assert_eq!(web.count("busy.test", "/slow"), 5);
}

#[tokio::test]
async fn scripted_sequences_advance_per_request() {
    let mut config = WebConfig::default();
    config.hosts.insert(
        "seq.test".into(),
        HostSpec::default().route(
            "/robots.txt",
            vec![Reply::status(503), Reply::status(503), Reply::text("ok")],
        ),
    );
    let web = TestWeb::start(config).await.expect("start");
    let client = reqwest::Client::builder()
        .dns_resolver(web.resolver())
        .build()
        .expect("client");
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(
            client
                .get(web.url("seq.test", "/robots.txt"))
                .send()
                .await
                .expect("send")
                .status()
                .as_u16(),
        );
    }
    assert_eq!(got, vec![503, 503, 200, 200], "the last reply repeats");
}

#[test]
fn config_files_parse_and_errors_name_the_problem() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/testweb.toml");
    let config = WebConfig::from_toml_file(example).expect("the example parses");
    assert!(config.hosts.contains_key("flaky.test"));
    assert_eq!(config.hosts["flaky.test"].routes["/robots.txt"].len(), 3);
    let err = WebConfig::from_toml_file("/no/such/file.toml").expect_err("missing");
    assert!(err.to_string().contains("/no/such/file.toml"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_body_of_empty_lines_still_sends_bytes() {
    // Before: an empty line made empty chunks forever, a busy loop that
    // never sent a byte.
    let mut config = WebConfig::default();
    config.hosts.insert(
        "blank.test".into(),
        HostSpec::default().route(
            "/",
            vec![Reply::body(Body::Endless {
                line: String::new(),
            })],
        ),
    );
    let web = TestWeb::start(config).await.expect("start");
    let client = reqwest::Client::builder()
        .dns_resolver(web.resolver())
        .build()
        .expect("client");
    let mut resp = client
        .get(web.url("blank.test", "/"))
        .send()
        .await
        .expect("send");
    let mut got = 0;
    while got < 100_000 {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), resp.chunk())
            .await
            .expect("bytes keep coming")
            .expect("chunk")
            .expect("an endless body");
        assert!(chunk.iter().all(|b| *b == b'\n'));
        got += chunk.len();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_bomb_is_compressed_once_and_shared() {
    let mut config = WebConfig::default();
    config.hosts.insert(
        "bomb.test".into(),
        HostSpec::default().route(
            "/",
            vec![Reply::body(Body::GzipBomb {
                decoded_bytes: 3_000_001,
            })],
        ),
    );
    let web = TestWeb::start(config).await.expect("start");
    let client = reqwest::Client::builder()
        .dns_resolver(web.resolver())
        .no_gzip()
        .build()
        .expect("client");
    let mut bodies = Vec::new();
    for _ in 0..2 {
        let r = client
            .get(web.url("bomb.test", "/"))
            .send()
            .await
            .expect("send");
        assert_eq!(
            r.headers().get("content-encoding").map(|v| v.as_bytes()),
            Some(&b"gzip"[..])
        );
        bodies.push(r.bytes().await.expect("body"));
    }
    assert_eq!(bodies[0], bodies[1]);
    assert!(
        bodies[0].len() < 10_000,
        "{} bytes on the wire",
        bodies[0].len()
    );
    assert_eq!(
        mannerly_testweb::gzip_bombs_made(),
        1,
        "the second request reused the first one's compression"
    );
}
