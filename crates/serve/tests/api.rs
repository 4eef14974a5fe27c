//! Every endpoint over real HTTP on 127.0.0.1: answers, error cases,
//! limits, the origin fetches against testweb, the OpenAPI document's
//! examples, and a property test that the API says what the library says.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mannerly_fetch::{FetchConfig, HttpFetcher};
use mannerly_robots::{Mode, ParseOptions, Robots};
use mannerly_serve::whatif::MAX_CHECKED_ADDRESSES;
use mannerly_serve::{router, router_with, ServeConfig, OPENAPI_JSON};
use mannerly_testweb::{HostSpec, Reply, TestWeb};
use proptest::prelude::*;
use serde_json::{json, Value};

struct Server {
    base: String,
    http: reqwest::Client,
}

impl Server {
    async fn start(config: ServeConfig) -> Server {
        Self::with_router(router(config).expect("router")).await
    }

    async fn with_router(app: axum::Router) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await;
        });
        Server {
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
        }
    }

    /// Status and JSON body of a POST.
    async fn post(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("send");
        let status = r.status().as_u16();
        (status, r.json().await.expect("every answer is JSON"))
    }

    async fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        self.post(path, body.to_string()).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("send");
        let status = r.status().as_u16();
        (status, r.json().await.expect("every answer is JSON"))
    }
}

fn error_of(v: &Value) -> &str {
    v["error"].as_str().expect("an error message")
}

/// A server that fetches from testweb (names resolved by testweb, private
/// addresses allowed since testweb is on 127.0.0.1).
async fn server_over(web: &TestWeb, config: ServeConfig) -> Server {
    let fetch = FetchConfig {
        timeout: Duration::from_secs(5),
        ..FetchConfig::default()
    };
    let client = HttpFetcher::client_builder(&fetch)
        .dns_resolver(web.resolver())
        .build()
        .expect("client");
    let fetcher = HttpFetcher::with_client(client, fetch);
    Server::with_router(router_with(
        ServeConfig {
            allow_private: true,
            ..config
        },
        fetcher,
    ))
    .await
}

async fn web(hosts: Vec<(&str, HostSpec)>) -> TestWeb {
    TestWeb::with_hosts(hosts).await.expect("testweb")
}

#[tokio::test]
async fn check_names_verdicts_rules_groups_and_extras() {
    let s = Server::start(ServeConfig::default()).await;
    let robots = "User-agent: *\nDisallow: /private/\nAllow: /private/%61\nCrawl-delay: 5\nRequest-rate: 1/10s\nContent-Usage: train-ai=n\nSitemap: https://example.com/s.xml\nHost: example.com\nClean-param: ref /a/\n";
    let (status, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": robots, "agent": "Googlebot", "urls": ["/private/x", "https://example.com/b", "/private/a"]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let r = &v["results"];
    assert_eq!(r[0]["allowed"], false);
    assert_eq!(r[0]["line"], 2);
    assert_eq!(r[0]["rule"], "Disallow: /private/");
    assert_eq!(r[0]["content_usage"], Value::Null);
    assert_eq!(r[1]["allowed"], true);
    assert_eq!(r[1]["rule"], Value::Null);
    assert_eq!(r[1]["content_usage"]["train_ai"], "n");
    assert_eq!(r[1]["content_usage"]["ai_use"], "unknown");
    // Google does not decode %61; strict RFC 9309 does.
    assert_eq!(r[2]["allowed"], false);
    assert_eq!(r[2]["other_mode"]["allowed"], true);
    assert_eq!(r[2]["other_mode"]["line"], 3);
    assert_eq!(v["groups"], json!([1]));
    assert_eq!(v["agent_match"], "global");
    let x = &v["extras"];
    assert_eq!(x["crawl_delay"]["seconds"], 5.0);
    assert_eq!(x["pacing"][0]["profile"], "google");
    assert!(
        x["pacing"][3]["reading"]
            .as_str()
            .expect("text")
            .contains("10 s"),
        "{x}"
    );
    assert_eq!(x["request_rate"], json!(["1/10s", 5]));
    assert_eq!(x["sitemaps"], json!([["https://example.com/s.xml", 7]]));
    assert_eq!(x["host"], json!(["example.com", 8]));
    assert_eq!(x["clean_params"], json!([["ref /a/", 9]]));
    // Strict mode, asked for.
    let (_, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": robots, "agent": "x", "urls": ["/private/a"], "rfc": true}),
        )
        .await;
    assert_eq!(v["mode"], "rfc9309");
    assert_eq!(v["results"][0]["allowed"], true);
    assert_eq!(v["results"][0]["other_mode"]["allowed"], false);
}

/// A whole User-Agent or a token with its version is matched whole, as
/// Google's matcher does: the answer keeps that verdict and says why, and
/// which token to ask for.
#[tokio::test]
async fn an_agent_that_is_not_a_product_token_is_answered_with_a_note() {
    let s = Server::start(ServeConfig::default()).await;
    let robots = "User-agent: Googlebot\nDisallow: /g\n";
    let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    for agent in [ua, "Googlebot/2.1"] {
        let (status, v) = s
            .post_json(
                "/api/check",
                &json!({"robots": robots, "agent": agent, "urls": ["/g"]}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(
            (&v["agent_match"], &v["results"][0]["allowed"]),
            (&json!("none"), &json!(true))
        );
        let note = v["agent_note"].as_str().expect("a note");
        assert!(
            note.contains("not a product token") && note.ends_with("ask for Googlebot"),
            "{note}"
        );
    }
    let (_, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": robots, "agent": "Googlebot", "urls": ["/g"]}),
        )
        .await;
    assert_eq!(
        (&v["agent_note"], &v["results"][0]["allowed"]),
        (&Value::Null, &json!(false))
    );
    // A comparison notes each such agent, once.
    let (_, v) = s
        .post_json(
            "/api/diff",
            &json!({"before": robots, "after": "", "agents": ["Googlebot", ua], "urls": ["/g"]}),
        )
        .await;
    let notes = v["agent_notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "{v}");
    assert!(
        notes[0]
            .as_str()
            .expect("text")
            .ends_with("ask for Googlebot"),
        "{v}"
    );
}

#[tokio::test]
async fn lint_and_diff() {
    let s = Server::start(ServeConfig::default()).await;
    let (status, v) = s
        .post_json(
            "/api/lint",
            &json!({"robots": "User-agent: *\nDisalow: /tmp\n"}),
        )
        .await;
    assert_eq!(status, 200);
    let d = &v["diagnostics"][0];
    assert_eq!(
        (d["line"].clone(), d["code"].clone()),
        (json!(2), json!("typo-accepted"))
    );
    assert_eq!(d["suggestion"], "Disallow: /tmp");
    assert_eq!(d["severity"], "warning");

    let (status, v) = s
        .post_json(
            "/api/diff",
            &json!({"before": "User-agent: *\nDisallow: /a\n", "after": "User-agent: *\nDisallow: /\nUser-agent: GPTBot\nAllow: /\n",
                    "agents": ["Googlebot", "GPTBot"], "urls": ["/a", "/b"]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["compared"], 4);
    // Googlebot loses /b; GPTBot gains /a.
    assert_eq!(
        v["changes"],
        json!([
            {"agent": "Googlebot", "url": "/b", "before": {"allowed": true, "line": null, "rule": null}, "after": {"allowed": false, "line": 2, "rule": "Disallow: /"}},
            {"agent": "GPTBot", "url": "/a", "before": {"allowed": false, "line": 2, "rule": "Disallow: /a"}, "after": {"allowed": true, "line": 4, "rule": "Allow: /"}}
        ])
    );
}

#[tokio::test]
async fn a_log_excerpt_is_judged_under_the_file_and_the_draft() {
    let s = Server::start(ServeConfig::default()).await;
    let log = "192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"GPTBot/1.2\"\n\
               192.0.2.2 - - [01/Mar/2026:10:00:01 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ExampleBot/1.0\"\n\
               not a log line\n";
    let (status, v) = s
        .post_json(
            "/api/whatif",
            &json!({"robots": "User-agent: *\nAllow: /\n", "after": "User-agent: GPTBot\nDisallow: /\n", "log": log}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (
            v["lines"].clone(),
            v["unread"].clone(),
            v["bot_requests"].clone()
        ),
        (json!(3), json!(1), json!(2))
    );
    assert_eq!(
        (v["newly_disallowed"].clone(), v["newly_allowed"].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(v["bots"][0]["token"], "GPTBot");
    let (status, v) = s
        .post_json(
            "/api/whatif",
            &json!({"robots": "", "after": "", "log": " \n"}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("`log` is empty"), "{v}");
}

/// With the server's identity checks (here Google's ranges given, offline),
/// each what-if finding says whose requests they were: the real
/// Googlebot's verified, a spoofer's spoofed, and addresses past the
/// per-request bound unverified rather than accused unchecked.
#[tokio::test]
async fn what_if_findings_carry_each_clients_checked_identity() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Server::start(ServeConfig {
        identify: Some(common::google_checks(dir.path(), "66.249.64.0/27")),
        ..ServeConfig::default()
    })
    .await;
    const GOOGLEBOT: &str =
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let line = |ip: &str| {
        format!("{ip} - - [01/Mar/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"{GOOGLEBOT}\"\n")
    };
    let mut log = line("66.249.64.1");
    // The real one's address and the first spoofers' fill the bound.
    let spoofers = MAX_CHECKED_ADDRESSES - 1 + 6;
    for i in 0..spoofers {
        log.push_str(&line(&format!("10.{}.{}.1", i / 256, i % 256)));
    }
    let (status, v) = s
        .post_json(
            "/api/whatif",
            &json!({"robots": "", "after": "User-agent: *\nDisallow: /a\n", "log": log}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["identity_checked"], true);
    assert_eq!(v["addresses_not_checked"], 6);
    let rows: Vec<(String, String, u64)> = v["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .map(|b| {
            (
                b["token"].as_str().unwrap_or_default().to_owned(),
                b["identity"].as_str().unwrap_or_default().to_owned(),
                b["newly_disallowed"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    for want in [
        ("Googlebot", "verified", 1),
        ("Googlebot", "spoofed", MAX_CHECKED_ADDRESSES as u64 - 1),
        ("Googlebot", "unverified", 6),
    ] {
        assert!(
            rows.contains(&(want.0.into(), want.1.into(), want.2)),
            "{want:?} in {rows:?}"
        );
    }
    // Without checks, the answer says so.
    let plain = Server::start(ServeConfig::default()).await;
    let (_, v) = plain
        .post_json(
            "/api/whatif",
            &json!({"robots": "", "after": "", "log": line("66.249.64.1")}),
        )
        .await;
    assert_eq!(v["identity_checked"], false);
}

#[tokio::test]
async fn bad_input_gets_a_4xx_saying_what_was_wrong() {
    let s = Server::start(ServeConfig {
        max_body: 64 * 1024,
        ..ServeConfig::default()
    })
    .await;
    let (status, v) = s.post("/api/check", "{\"robots\": ").await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("ends early"), "{v}");
    let (status, v) = s.post("/api/check", "{robots}").await;
    assert_eq!(status, 400);
    assert!(
        error_of(&v).contains("malformed JSON") && error_of(&v).contains("column 2"),
        "{v}"
    );
    let (status, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": "", "agent": "a", "urls": [], "rfcc": true}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("rfcc"), "{v}");
    let (status, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": "", "agent": "a", "urls": [1]}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("expected a string"), "{v}");
    let (status, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": "", "agent": "", "urls": []}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("`agent` is empty"), "{v}");
    let (status, v) = s
        .post_json(
            "/api/diff",
            &json!({"before": "", "after": "", "agents": [], "urls": []}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("`agents` is empty"), "{v}");
    let many: Vec<String> = (0..10_001).map(|i| format!("/{i}")).collect();
    let s2 = Server::start(ServeConfig::default()).await;
    let (status, v) = s2
        .post_json(
            "/api/check",
            &json!({"robots": "", "agent": "a", "urls": many}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("10001 URLs"), "{v}");
    // Over the body limit.
    let big = json!({"robots": "x".repeat(100 * 1024), "agent": "a", "urls": []});
    let (status, v) = s.post_json("/api/check", &big).await;
    assert_eq!(status, 413);
    assert!(error_of(&v).contains("65536 bytes"), "{v}");
    // Unknown paths and methods.
    let (status, v) = s.get("/api/nothing").await;
    assert_eq!(status, 404);
    assert!(error_of(&v).contains("openapi"), "{v}");
    let (status, v) = s.get("/api/check").await;
    assert_eq!(status, 405);
    assert!(error_of(&v).contains("POST"), "{v}");
    let (status, v) = s.get("/api/fetch").await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("`origin` is missing"), "{v}");
    let (status, v) = s.get("/api/fetch?origin=ftp://example.com").await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("not an http(s) origin"), "{v}");
}

#[tokio::test]
async fn a_file_over_500_kib_is_cut_like_the_parser_cuts_it() {
    let s = Server::start(ServeConfig::default()).await;
    let mut robots = String::from("User-agent: *\n");
    while robots.len() < 600 * 1024 {
        robots.push_str("Disallow: /filler/path/to/make/the/file/long\n");
    }
    robots.push_str("Disallow: /late\n");
    let (status, v) = s
        .post_json(
            "/api/check",
            &json!({"robots": robots, "agent": "a", "urls": ["/late"]}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["truncated"], true);
    assert_eq!(
        v["results"][0]["allowed"], true,
        "the rule past the limit is not read"
    );
    let (_, v) = s.post_json("/api/lint", &json!({"robots": robots})).await;
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(codes.contains(&"file-too-large"), "{codes:?}");
}

#[tokio::test]
async fn each_client_is_rate_limited_with_retry_after() {
    let s = Server::start(ServeConfig {
        rate_limit: 5,
        ..ServeConfig::default()
    })
    .await;
    let body = json!({"robots": "", "agent": "a", "urls": []}).to_string();
    let mut limited = None;
    for i in 0..40 {
        let r = s
            .http
            .post(format!("{}/api/check", s.base))
            .body(body.clone())
            .send()
            .await
            .expect("send");
        if r.status() == 429 {
            let retry = r
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let v: Value = r.json().await.expect("json");
            limited = Some((i, retry, v));
            break;
        }
    }
    let (i, retry, v) = limited.expect("the limit is reached");
    // A burst of twice the rate passes first.
    assert!(i >= 10, "limited after {i} requests");
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(
        error_of(&v).contains("more than 5 requests per second"),
        "{v}"
    );
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let s = Server::start(ServeConfig::default()).await;
    for origin in [
        "http://127.0.0.1:9",
        "http://localhost:9",
        "http://[::1]:9",
        "http://10.0.0.1",
        "http://169.254.169.254",
    ] {
        let (status, v) = s.get(&format!("/api/fetch?origin={origin}")).await;
        assert_eq!(status, 403, "{origin}: {v}");
        assert!(error_of(&v).contains("refused"), "{v}");
        let (status, _) = s
            .post_json(
                "/api/batch",
                &json!({"origin": origin, "agent": "a", "urls": ["/"]}),
            )
            .await;
        assert_eq!(status, 403, "{origin}");
    }
}

#[tokio::test]
async fn a_redirect_into_the_private_network_is_not_followed() {
    // pub.test passes (testweb resolves it, standing in for a public
    // name); its robots.txt redirects to a private literal, which the
    // fetcher refuses: the fetch fails closed.
    let web = web(vec![(
        "pub.test",
        HostSpec::default().route(
            "/robots.txt",
            vec![Reply::redirect(301, "http://127.0.0.1:9/robots.txt")],
        ),
    )])
    .await;
    let fetch = FetchConfig::default();
    let client = HttpFetcher::client_builder(&fetch)
        .dns_resolver(web.resolver())
        .build()
        .expect("client");
    let fetcher = HttpFetcher::with_client(client, fetch).refuse_private_literals();
    let s = Server::with_router(router_with(ServeConfig::default(), fetcher)).await;
    let (status, v) = s
        .post_json(
            "/api/batch",
            &json!({"origin": web.url("pub.test", "/"), "agent": "a", "urls": ["/"]}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["access"], "disallow-all", "{v}");
    assert_eq!(v["results"][0]["allowed"], false);
    let (_, v) = s
        .get(&format!("/api/fetch?origin={}", web.url("pub.test", "/")))
        .await;
    let history = v["history"].to_string();
    assert!(history.contains("refused"), "{v}");
}

#[tokio::test]
async fn batch_and_fetch_use_the_crawlers_cache() {
    let web = web(vec![
        (
            "ok.test",
            HostSpec::default().robots("User-agent: *\nDisallow: /private/\n"),
        ),
        (
            "down.test",
            HostSpec::default().route("/robots.txt", vec![Reply::status(503)]),
        ),
        (
            "none.test",
            HostSpec::default().route("/robots.txt", vec![Reply::status(404)]),
        ),
    ])
    .await;
    let s = Arc::new(server_over(&web, ServeConfig::default()).await);
    let ok = web.url("ok.test", "/");
    let ok = ok.trim_end_matches('/').to_owned();
    // Fifty concurrent batches for one origin: one robots.txt fetch.
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let (s, ok) = (s.clone(), ok.clone());
        tasks.push(tokio::spawn(async move {
            s.post_json(
                "/api/batch",
                &json!({"origin": ok, "agent": "bot", "urls": ["/", "/private/x", format!("{ok}/private/y")]}),
            )
            .await
        }));
    }
    for t in tasks {
        let (status, v) = t.await.expect("task");
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["access"], "rules");
        let allowed: Vec<bool> = v["results"]
            .as_array()
            .expect("list")
            .iter()
            .map(|r| r["allowed"].as_bool().expect("bool"))
            .collect();
        assert_eq!(allowed, vec![true, false, false]);
        assert_eq!(v["results"][1]["rule"], "Disallow: /private/");
        assert_eq!(v["agent_note"], Value::Null);
    }
    assert_eq!(web.count("ok.test", "/robots.txt"), 1);
    // An agent with its version is matched whole, and told so.
    let (_, v) = s
        .post_json(
            "/api/batch",
            &json!({"origin": ok, "agent": "ExampleBot/1.0", "urls": ["/"]}),
        )
        .await;
    let note = v["agent_note"].as_str().expect("a note");
    assert!(note.ends_with("ask for ExampleBot"), "{v}");
    // 5xx: complete disallow, with the phase in the reason.
    let down = web.url("down.test", "/");
    let (status, v) = s
        .post_json(
            "/api/batch",
            &json!({"origin": down, "agent": "bot", "urls": ["/"]}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["access"], "disallow-all");
    assert_eq!(v["results"][0]["allowed"], false);
    assert!(v["reason"].as_str().expect("reason").contains("503"), "{v}");
    // 404: allow all.
    let none = web.url("none.test", "/");
    let (_, v) = s
        .post_json(
            "/api/batch",
            &json!({"origin": none, "agent": "bot", "urls": ["/x"]}),
        )
        .await;
    assert_eq!(v["access"], "allow-all");
    // A URL on another origin is refused by index.
    let (status, v) = s
        .post_json(
            "/api/batch",
            &json!({"origin": ok, "agent": "bot", "urls": ["/", "https://elsewhere.example/x"]}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("`urls[1]`"), "{v}");
    // The cache's state, with the body for the page's editor.
    let (status, v) = s.get(&format!("/api/fetch?origin={ok}")).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["access"], "rules");
    assert_eq!(v["status"], 200);
    assert_eq!(v["body"], "User-agent: *\nDisallow: /private/\n");
    assert_eq!(
        web.count("ok.test", "/robots.txt"),
        1,
        "served from the cache"
    );
    let (_, v) = s.get(&format!("/api/fetch?origin={down}")).await;
    assert_eq!(v["access"], "disallow-all");
    assert_eq!(v["failure"]["attempts"], 1);
}

#[tokio::test]
async fn a_diff_takes_its_urls_from_a_sitemap_too() {
    let web = web(vec![]).await;
    let (a, bc) = (web.url("s.test", "/a"), web.url("s.test", "/b/c"));
    let sitemap = format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{a}</loc></url><url><loc>{bc}</loc></url></urlset>");
    web.set_host(
        "s.test",
        HostSpec::default().route("/sitemap.xml", vec![Reply::text(sitemap)]),
    );
    let s = server_over(&web, ServeConfig::default()).await;
    let (status, v) = s
        .post_json(
            "/api/diff",
            &json!({"before": "User-agent: *\nDisallow: /b/\n", "after": "User-agent: *\nDisallow: /\n",
                    "agents": ["bot"], "urls": ["/x"], "sitemap": web.url("s.test", "/sitemap.xml")}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["sitemap_urls"], 2);
    assert_eq!(v["compared"], 3);
    let changed: Vec<&str> = v["changes"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["url"].as_str())
        .collect();
    assert_eq!(changed, vec!["/x", a.as_str()]);
    // A sitemap that lists nothing is an error that says what happened.
    let (status, v) = s
        .post_json(
            "/api/diff",
            &json!({"before": "", "after": "", "agents": ["bot"], "sitemap": web.url("s.test", "/none.xml")}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_of(&v).contains("listed no pages"), "{v}");
    // And a private one is refused when private addresses are not allowed.
    let s = Server::start(ServeConfig::default()).await;
    let (status, _) = s
        .post_json(
            "/api/diff",
            &json!({"before": "", "after": "", "agents": ["bot"], "sitemap": "http://127.0.0.1:9/sitemap.xml"}),
        )
        .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_request_past_its_deadline_gets_a_504_not_a_hang() {
    let web = web(vec![(
        "slow.test",
        HostSpec::default().route("/robots.txt", vec![Reply::hang()]),
    )])
    .await;
    let s = server_over(
        &web,
        ServeConfig {
            timeout: Duration::from_millis(500),
            ..ServeConfig::default()
        },
    )
    .await;
    let (status, v) = s
        .get(&format!("/api/fetch?origin={}", web.url("slow.test", "/")))
        .await;
    assert_eq!(status, 504, "{v}");
    assert!(error_of(&v).contains("no answer within"), "{v}");
    // The server still answers.
    let (status, _) = s
        .post_json("/api/lint", &json!({"robots": "User-agent: *\n"}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_from_the_binary() {
    let s = Server::start(ServeConfig::default()).await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
        ("/api/openapi.json", "application/json"),
    ] {
        let r = s
            .http
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200, "{path}");
        let ct = r.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .to_owned();
        assert!(ct.starts_with(kind), "{path}: {ct}");
        let text = r.text().await.expect("body");
        assert!(
            !text.contains("http://") || path == "/api/openapi.json",
            "{path} loads something from elsewhere"
        );
    }
}

// ---- The OpenAPI document against the real responses ----

/// Resolves `{"$ref": "#/components/..."}`.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let mut v = doc;
            for part in r.trim_start_matches("#/").split('/') {
                v = &v[part];
            }
            resolve(doc, v)
        }
        None => schema,
    }
}

/// A JSON Schema check of the subset the document uses (type, required,
/// properties, items, enum, oneOf); returns what does not match.
fn mismatches(doc: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if let Some(alts) = schema.get("oneOf").and_then(Value::as_array) {
        let fits = alts.iter().any(|alt| {
            let mut o = Vec::new();
            mismatches(doc, alt, value, at, &mut o);
            o.is_empty()
        });
        if !fits {
            out.push(format!("{at}: fits none of oneOf"));
        }
        return;
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        });
        if !ok {
            out.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            out.push(format!("{at}: {value} not in {e:?}"));
        }
    }
    if let (Some(obj), Some(req)) = (
        value.as_object(),
        schema.get("required").and_then(Value::as_array),
    ) {
        for r in req.iter().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                out.push(format!("{at}: `{r}` missing"));
            }
        }
    }
    if let (Some(obj), Some(props)) = (
        value.as_object(),
        schema.get("properties").and_then(Value::as_object),
    ) {
        for (k, v) in obj {
            match props.get(k) {
                Some(p) => mismatches(doc, p, v, &format!("{at}.{k}"), out),
                None => out.push(format!("{at}: `{k}` is not documented")),
            }
        }
    }
    if let (Some(items), Some(schema)) = (value.as_array(), schema.get("items")) {
        for (i, v) in items.iter().enumerate() {
            mismatches(doc, schema, v, &format!("{at}[{i}]"), out);
        }
    }
}

#[tokio::test]
async fn every_documented_example_is_answered_as_documented() {
    let doc: Value = serde_json::from_str(OPENAPI_JSON).expect("the document is JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    let web = web(vec![(
        "example.com",
        HostSpec::default().robots("User-agent: *\nDisallow: /private/\n"),
    )])
    .await;
    let s = server_over(&web, ServeConfig::default()).await;
    let port = web.port();
    let paths = doc["paths"].as_object().expect("paths");
    assert_eq!(paths.len(), 6);
    for (path, ops) in paths {
        for (method, op) in ops.as_object().expect("operations") {
            let (status, answer) = match method.as_str() {
                "post" => {
                    let mut example =
                        op["requestBody"]["content"]["application/json"]["example"].clone();
                    // example.com lives on testweb's port here.
                    let text = example
                        .to_string()
                        .replace("https://example.com", &format!("http://example.com:{port}"));
                    example = serde_json::from_str(&text).expect("json");
                    s.post_json(path, &example).await
                }
                "get" => {
                    let p = &op["parameters"][0];
                    let value = p["example"]
                        .as_str()
                        .expect("example")
                        .replace("https://example.com", &format!("http://example.com:{port}"));
                    s.get(&format!(
                        "{path}?{}={value}",
                        p["name"].as_str().expect("name")
                    ))
                    .await
                }
                m => panic!("undocumented method {m}"),
            };
            assert_eq!(status, 200, "{method} {path}: {answer}");
            let schema = &op["responses"]["200"]["content"]["application/json"]["schema"];
            let mut out = Vec::new();
            mismatches(&doc, schema, &answer, path, &mut out);
            assert!(out.is_empty(), "{method} {path}: {out:#?}\n{answer}");
        }
    }
    // Errors are documented as {"error": ...}.
    let (status, v) = s.post("/api/check", "nope").await;
    assert_eq!(status, 400);
    let mut out = Vec::new();
    mismatches(
        &doc,
        &json!({"$ref": "#/components/schemas/Error"}),
        &v,
        "error",
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
}

// ---- The API says what the library says ----

fn line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("User-agent"),
        Just("Allow"),
        Just("Disallow"),
        Just("user-agent"),
        Just("Disalow"),
    ];
    prop_oneof![
        4 => (key, "[ab*/$%2]{0,5}").prop_map(|(k, v)| format!("{k}: {v}")),
        1 => Just(String::new()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn the_api_answers_as_the_library_does(
        lines in prop::collection::vec(line(), 0..12),
        urls in prop::collection::vec("/[ab*$%2/]{0,6}", 1..6),
        agent in prop_oneof![Just("a"), Just("b"), Just("Googlebot")],
        rfc in any::<bool>(),
    ) {
        let body = lines.join("\n");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let v = rt.block_on(async {
            let s = Server::start(ServeConfig::default()).await;
            s.post_json("/api/check", &json!({"robots": body, "agent": agent, "urls": urls, "rfc": rfc})).await
        });
        prop_assert_eq!(v.0, 200);
        let mode = if rfc { Mode::Rfc9309 } else { Mode::Google };
        let robots = Robots::parse_with(body.as_bytes(), ParseOptions { mode, ..ParseOptions::default() });
        for (i, url) in urls.iter().enumerate() {
            let want = robots.explain(agent, url);
            let got = &v.1["results"][i];
            prop_assert_eq!(got["allowed"].as_bool(), Some(want.allowed));
            prop_assert_eq!(got["line"].as_u64(), want.rule.as_ref().map(|r| u64::from(r.line)));
            let groups: Vec<u64> = want.groups.iter().map(|&g| u64::from(g)).collect();
            prop_assert_eq!(v.1["groups"].clone(), json!(groups));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_each_endpoint_and_leave_strangers_paths_as_other() {
    let registry = mannerly_metrics::Registry::new(false);
    let config = ServeConfig {
        metrics: Some(mannerly_serve::metrics::ServeMetrics::new(&registry)),
        ..ServeConfig::default()
    };
    let s = Server::start(config).await;
    let check = json!({"robots": "User-agent: *\nDisallow: /x\n", "agent": "Bot", "urls": ["/x"]});
    for _ in 0..3 {
        assert_eq!(s.post_json("/api/check", &check).await.0, 200);
    }
    assert_eq!(s.post("/api/check", "{").await.0, 400);
    for path in ["/nope", "/wp-admin/../../etc"] {
        let r = s
            .http
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status().as_u16(), 404);
    }
    let text = registry.encode(mannerly_metrics::Format::Prometheus);
    for line in [
        "mannerly_serve_requests_total{endpoint=\"/api/check\",code=\"2xx\"} 3",
        "mannerly_serve_requests_total{endpoint=\"/api/check\",code=\"4xx\"} 1",
        "mannerly_serve_requests_total{endpoint=\"other\",code=\"4xx\"} 2",
        "mannerly_serve_request_duration_seconds_count{endpoint=\"/api/check\"} 4",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
}
