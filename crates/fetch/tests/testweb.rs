//! Every row of the robots.txt fetching rules, against the simulated web on
//! 127.0.0.1, with a fake clock: 12 hours and 30 days pass in microseconds.

use std::sync::Arc;
use std::time::Duration;

use mannerly_fetch::policy::{AccessKind, PolicyConfig};
use mannerly_fetch::time::{test_epoch, Clock};
use mannerly_fetch::{
    CacheConfig, FakeClock, FetchConfig, HttpFetcher, MemoryStore, Origin, Profile, RobotsCache,
    Store,
};
use mannerly_testweb::{Body, HostSpec, Reply, TestWeb, WebConfig};

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);
const RULES: &str = "User-agent: *\nDisallow: /private/\n";

struct Env {
    web: TestWeb,
    cache: RobotsCache<HttpFetcher>,
    clock: FakeClock,
    store: Arc<MemoryStore>,
}

impl Env {
    fn url(&self, host: &str, path: &str) -> String {
        self.web.url(host, path)
    }

    fn origin(&self, host: &str) -> Origin {
        Origin::of(&self.url(host, "/")).expect("origin")
    }

    async fn check(&self, host: &str, path: &str) -> mannerly_fetch::CheckResult {
        self.cache
            .check(&self.url(host, path), "mannerly")
            .await
            .expect("check")
    }
}

async fn env_with(hosts: Vec<(&str, HostSpec)>, policy: PolicyConfig, fetch: FetchConfig) -> Env {
    env_client(hosts, policy, fetch, true).await
}

/// `decode`: the client decodes `Content-Encoding` itself (reqwest's
/// gzip/brotli/deflate); else it keeps bodies as sent, as the crawler's
/// shared page client does, and the fetcher decodes.
async fn env_client(
    hosts: Vec<(&str, HostSpec)>,
    policy: PolicyConfig,
    fetch: FetchConfig,
    decode: bool,
) -> Env {
    let mut config = WebConfig::default();
    config.dns_failures.insert("nxdomain.test".into());
    for (name, spec) in hosts {
        config.hosts.insert(name.to_owned(), spec);
    }
    let web = TestWeb::start(config).await.expect("testweb");
    let client = if decode {
        client_for(&web, &fetch)
    } else {
        raw_client_for(&web, &fetch)
    };
    let fetcher = HttpFetcher::with_client(client, fetch);
    let clock = FakeClock::new(test_epoch());
    let store = Arc::new(MemoryStore::default());
    let cache = RobotsCache::new(
        fetcher,
        Arc::new(clock.clone()),
        store.clone(),
        CacheConfig {
            policy,
            ..CacheConfig::default()
        },
    );
    Env {
        web,
        cache,
        clock,
        store,
    }
}

/// A client that resolves every test host to 127.0.0.1 and trusts the
/// simulated web's CA.
fn client_for(web: &TestWeb, fetch: &FetchConfig) -> reqwest::Client {
    let ca = reqwest::Certificate::from_der(&web.ca_der()).expect("CA certificate");
    HttpFetcher::client_builder(fetch)
        .dns_resolver(web.resolver())
        .add_root_certificate(ca)
        .build()
        .expect("client")
}

/// The same, keeping bodies as sent (no decompression).
fn raw_client_for(web: &TestWeb, fetch: &FetchConfig) -> reqwest::Client {
    let ca = reqwest::Certificate::from_der(&web.ca_der()).expect("CA certificate");
    HttpFetcher::client_builder(fetch)
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .dns_resolver(web.resolver())
        .add_root_certificate(ca)
        .build()
        .expect("client")
}

async fn env(hosts: Vec<(&str, HostSpec)>) -> Env {
    env_with(hosts, PolicyConfig::default(), FetchConfig::default()).await
}

fn robots(replies: Vec<Reply>) -> HostSpec {
    HostSpec::default().route("/robots.txt", replies)
}

#[tokio::test]
async fn ok_parses_rules_even_with_a_wrong_content_type() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::text(RULES).header("Content-Type", "image/png")]),
    )])
    .await;
    let r = e.check("a.test", "/private/x").await;
    assert!(!r.allowed);
    assert_eq!(r.access, AccessKind::Rules);
    assert_eq!(r.rule.map(|r| r.line), Some(2));
    assert_eq!(
        r.reason,
        "200 at 2026-11-20T10:00:00Z: 1 group(s), 1 rule(s); valid until 2026-11-21T10:00:00Z"
    );
    assert!(e.check("a.test", "/public").await.allowed);
    assert_eq!(
        e.web.count("a.test", "/robots.txt"),
        1,
        "one fetch serves both checks"
    );
}

#[tokio::test]
async fn an_html_page_parses_to_nothing_and_is_flagged() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::text(
            "<!DOCTYPE html><html><body>Welcome</body></html>",
        )]),
    )])
    .await;
    let r = e.check("a.test", "/anything").await;
    assert!(r.allowed);
    assert!(
        r.reason.contains("HTML page, not robots.txt"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn client_errors_mean_unavailable_allow_all() {
    for status in [400, 401, 403, 404, 410, 451] {
        let e = env(vec![("a.test", robots(vec![Reply::status(status)]))]).await;
        let r = e.check("a.test", "/private/x").await;
        assert!(r.allowed, "{status}");
        assert_eq!(r.access, AccessKind::AllowAll);
        assert_eq!(
            r.reason,
            format!("{status} at 2026-11-20T10:00:00Z: robots.txt is unavailable, so everything is allowed until 2026-11-21T10:00:00Z")
        );
    }
}

#[tokio::test]
async fn too_many_requests_fails_closed_and_honours_retry_after() {
    let e = env(vec![(
        "a.test",
        robots(vec![
            Reply::status(429).header("Retry-After", "120"),
            Reply::text(RULES),
        ]),
    )])
    .await;
    let r = e.check("a.test", "/public").await;
    assert!(!r.allowed);
    assert_eq!(r.access, AccessKind::DisallowAll);
    assert_eq!(
        r.reason,
        "429 since 2026-11-20T10:00:00Z, phase 1 of 3: complete disallow (next attempt at 2026-11-20T10:02:00Z)"
    );
    assert_eq!(r.expires_at, Some(test_epoch() + Duration::from_secs(120)));
    e.clock.advance(Duration::from_secs(119));
    assert!(!e.check("a.test", "/public").await.allowed);
    assert_eq!(
        e.web.count("a.test", "/robots.txt"),
        1,
        "no refetch before Retry-After"
    );
    e.clock.advance(Duration::from_secs(1));
    assert!(e.check("a.test", "/public").await.allowed);
    assert_eq!(e.web.count("a.test", "/robots.txt"), 2);
}

#[tokio::test]
async fn retry_after_as_http_date() {
    let at = test_epoch() + Duration::from_secs(600);
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::status(503).header(
            "Retry-After",
            mannerly_fetch::time::fmt_http_date(at),
        )]),
    )])
    .await;
    let r = e.check("a.test", "/").await;
    assert_eq!(r.expires_at, Some(at));
}

/// 503 after a good copy: disallow for 12 h, then the good copy until 30
/// days, then allow-all if the site answers, else disallow.
#[tokio::test]
async fn server_errors_walk_the_three_google_phases() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::text(RULES), Reply::status(503)]),
    )])
    .await;
    assert!(e.check("a.test", "/public").await.allowed);
    e.clock.advance(DAY); // the good copy expires; the refetch gets 503
    let t1 = "2026-11-21T10:00:00Z";
    let r = e.check("a.test", "/public").await;
    assert!(!r.allowed);
    assert!(
        r.reason
            .starts_with(&format!("503 since {t1}, phase 1 of 3: complete disallow")),
        "{}",
        r.reason
    );

    // Still failing at 12 h 30 min into the run: the last good copy applies.
    e.clock.advance(12 * HOUR + Duration::from_secs(1800));
    let r = e.check("a.test", "/public").await;
    assert!(r.allowed);
    assert!(!e.check("a.test", "/private/x").await.allowed);
    assert!(
        r.reason.starts_with(&format!(
            "503 since {t1}, phase 2 of 3: using the last good copy, fetched at 2026-11-20T10:00:00Z"
        )),
        "{}",
        r.reason
    );

    // Past 30 days, the site answers other requests: treated as no robots.txt.
    e.clock.advance(30 * DAY);
    e.cache.note_host_answered(&e.origin("a.test")).await;
    let r = e.check("a.test", "/private/x").await;
    assert!(r.allowed);
    assert!(
        r.reason
            .contains("phase 3 of 3: unreachable for over 30 days while the site answers"),
        "{}",
        r.reason
    );

    // Two days later the site has not answered anything for over 24 h.
    e.clock.advance(2 * DAY);
    let r = e.check("a.test", "/public").await;
    assert!(!r.allowed);
    assert!(
        r.reason
            .contains("phase 3 of 3: unreachable for over 30 days and the site does not answer"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn the_sites_answers_are_stored_while_robots_txt_fails_and_ride_along_otherwise() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::text(RULES), Reply::status(503)]),
    )])
    .await;
    let origin = e.origin("a.test");
    let stored = || e.store.get(&origin).expect("stored");
    assert!(e.check("a.test", "/public").await.allowed);
    // robots.txt answers: nothing reads the time, so no write for it.
    e.cache.note_host_answered(&origin).await;
    let answered = e.clock.now();
    assert_eq!(stored().host_answered_at, None);
    e.clock.advance(HOUR);
    e.cache.note_host_answered(&origin).await;
    assert_eq!(stored().host_answered_at, None);
    // The refetch that starts a failure run saves the time with it.
    e.clock.advance(DAY);
    assert!(!e.check("a.test", "/public").await.allowed);
    assert!(stored().failure.is_some());
    assert_eq!(
        stored().host_answered_at,
        Some(answered + HOUR),
        "the last answer rode along"
    );
    // While it fails, an answer is stored (at most once a minute).
    e.clock.advance(HOUR);
    e.cache.note_host_answered(&origin).await;
    let now = e.clock.now();
    assert_eq!(stored().host_answered_at, Some(now));
    e.clock.advance(Duration::from_secs(30));
    e.cache.note_host_answered(&origin).await;
    assert_eq!(stored().host_answered_at, Some(now));
    e.clock.advance(Duration::from_secs(31));
    e.cache.note_host_answered(&origin).await;
    assert_eq!(stored().host_answered_at, Some(e.clock.now()));
}

#[tokio::test]
async fn server_errors_without_a_good_copy_stay_closed_in_phase_two() {
    let e = env(vec![("a.test", robots(vec![Reply::status(500)]))]).await;
    assert!(!e.check("a.test", "/").await.allowed);
    e.clock.advance(13 * HOUR);
    let r = e.check("a.test", "/").await;
    assert!(!r.allowed);
    assert!(
        r.reason.starts_with(
            "500 since 2026-11-20T10:00:00Z, phase 2 of 3: no good copy to fall back on"
        ),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn rfc_profile_disallows_until_reachable_then_cached_copy_after_30_days() {
    let policy = PolicyConfig {
        profile: Profile::Rfc9309,
        ..PolicyConfig::default()
    };
    let e = env_with(
        vec![(
            "a.test",
            robots(vec![Reply::text(RULES), Reply::status(502)]),
        )],
        policy,
        FetchConfig::default(),
    )
    .await;
    assert!(e.check("a.test", "/public").await.allowed);
    e.clock.advance(DAY);
    e.clock.advance(13 * HOUR);
    let r = e.check("a.test", "/public").await;
    assert!(!r.allowed, "no 12-hour switch in the RFC profile");
    assert!(
        r.reason
            .contains("phase 1 of 2: complete disallow while unreachable (RFC 9309"),
        "{}",
        r.reason
    );
    e.clock.advance(31 * DAY);
    let r = e.check("a.test", "/public").await;
    assert!(r.allowed);
    assert!(
        r.reason
            .contains("phase 2 of 2: unreachable for over 30 days, using the cached copy"),
        "{}",
        r.reason
    );
    assert!(!e.check("a.test", "/private/a").await.allowed);
}

fn chain(host: &str, hops: usize, target: &str) -> HostSpec {
    let mut spec = HostSpec::default();
    for i in 0..hops {
        let from = if i == 0 {
            "/robots.txt".to_owned()
        } else {
            format!("/r{i}")
        };
        let to = if i + 1 == hops {
            target.to_owned()
        } else {
            format!("/r{}", i + 1)
        };
        spec = spec.route(from, vec![Reply::redirect(301, to)]);
    }
    let _ = host;
    spec.route("/final.txt", vec![Reply::text(RULES)])
}

#[tokio::test]
async fn five_redirects_are_followed_and_the_rules_apply_to_the_origin_asked() {
    let e = env(vec![("a.test", chain("a.test", 5, "/final.txt"))]).await;
    let r = e.check("a.test", "/private/x").await;
    assert!(!r.allowed);
    assert!(r.reason.contains("via 5 redirect(s)"), "{}", r.reason);
}

#[tokio::test]
async fn six_redirects_mean_unavailable() {
    let e = env(vec![("a.test", chain("a.test", 6, "/final.txt"))]).await;
    let r = e.check("a.test", "/private/x").await;
    assert!(r.allowed);
    assert_eq!(r.access, AccessKind::AllowAll);
    assert!(
        r.reason
            .starts_with("more than 5 redirects at 2026-11-20T10:00:00Z"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn a_redirect_loop_means_unavailable() {
    let spec = HostSpec::default()
        .route("/robots.txt", vec![Reply::redirect(302, "/a")])
        .route("/a", vec![Reply::redirect(302, "/robots.txt")]);
    let e = env(vec![("a.test", spec)]).await;
    let r = e.check("a.test", "/x").await;
    assert!(r.allowed);
    assert!(
        r.reason.starts_with("redirect loop after 2 hops"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn cross_host_redirect_rules_apply_to_the_asking_origin_only() {
    let e = env(vec![
        ("a.test", HostSpec::default()),
        (
            "b.test",
            HostSpec::default().robots("User-agent: *\nDisallow: /\n"),
        ),
    ])
    .await;
    let target = e.url("b.test", "/robots.txt");
    e.web
        .set_host("a.test", robots(vec![Reply::redirect(301, target)]));
    e.web.set_host(
        "b.test",
        HostSpec::default().robots("User-agent: *\nDisallow: /b-only/\n"),
    );
    let r = e.check("a.test", "/b-only/x").await;
    assert!(!r.allowed, "a.test uses the rules found at b.test");
    assert_eq!(
        e.cache.len(),
        1,
        "only a.test is cached: the rules are not filed under b.test"
    );
    assert_eq!(e.web.count("b.test", "/robots.txt"), 1);
    // b.test's own robots.txt is fetched separately when b.test is crawled.
    let _ = e.check("b.test", "/b-only/x").await;
    assert_eq!(e.web.count("b.test", "/robots.txt"), 2);
}

#[tokio::test]
async fn cross_port_and_scheme_are_different_origins() {
    let e = env(vec![("a.test", HostSpec::default().robots(RULES))]).await;
    let other_port = e.web.ports()[1];
    let moved = format!("http://a.test:{other_port}/robots.txt");
    e.web.set_host(
        &format!("a.test:{}", e.web.port()),
        robots(vec![Reply::redirect(308, moved)]),
    );
    e.web.set_host(
        &format!("a.test:{other_port}"),
        HostSpec::default().robots(RULES),
    );
    assert!(!e.check("a.test", "/private/1").await.allowed);
    let second = format!("http://a.test:{other_port}/private/1");
    assert!(
        !e.cache
            .check(&second, "mannerly")
            .await
            .expect("check")
            .allowed
    );
    assert_eq!(e.cache.len(), 2);
    // http -> https: followed across schemes; the rules apply to the http
    // origin that was asked.
    let https = e
        .web
        .https_url("s.test", "/robots.txt")
        .expect("a TLS port");
    e.web
        .set_host("c.test", robots(vec![Reply::redirect(301, https)]));
    e.web.set_host(
        "s.test",
        HostSpec::default().robots("User-agent: *\nDisallow: /secure-only/\n"),
    );
    let r = e.check("c.test", "/secure-only/x").await;
    assert!(!r.allowed, "{}", r.reason);
    assert!(
        r.reason.contains("via 1 redirect(s) to https://s.test:"),
        "{}",
        r.reason
    );
    let https_origin = e.web.https_url("s.test", "/secure-only/x").expect("url");
    assert!(
        !e.cache
            .check(&https_origin, "bot")
            .await
            .expect("check")
            .allowed
    );
    assert_eq!(
        e.cache.len(),
        4,
        "http a:{{p1,p2}}, http c, https s: four origins"
    );
    // A TLS failure is a network failure: plain http spoken to the TLS port.
    let tls_port = e.web.tls_ports()[0];
    let r = e
        .cache
        .check(&format!("http://t.test:{tls_port}/x"), "bot")
        .await
        .expect("check");
    assert!(!r.allowed);
    assert!(r.reason.contains("phase 1 of 3"), "{}", r.reason);
    let r = e
        .cache
        .check(&format!("https://t.test:{}/x", e.web.port()), "bot")
        .await
        .expect("check");
    assert!(r.reason.starts_with("TLS handshake failed"), "{}", r.reason);
}

#[tokio::test]
async fn redirect_to_a_non_robots_path_uses_what_is_there() {
    let spec = HostSpec::default()
        .route("/robots.txt", vec![Reply::redirect(301, "/")])
        .route(
            "/",
            vec![Reply::text("<html><body>home</body></html>").header("Content-Type", "text/html")],
        );
    let e = env(vec![("a.test", spec)]).await;
    let r = e.check("a.test", "/private/x").await;
    assert!(r.allowed);
    assert!(
        r.reason.contains("via 1 redirect(s)") && r.reason.contains("HTML page"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn network_failures_fail_closed_with_their_reason() {
    let fetch = FetchConfig {
        timeout: Duration::from_millis(800),
        ..FetchConfig::default()
    };
    let e = env_with(
        vec![
            ("reset.test", robots(vec![Reply::reset()])),
            ("hang.test", robots(vec![Reply::hang()])),
            (
                "truncated.test",
                robots(vec![Reply::body(Body::Truncated {
                    text: "User-agent: *\n".into(),
                    declared: 5000,
                })]),
            ),
            (
                "midreset.test",
                robots(vec![Reply::body(Body::ResetAfter {
                    text: "User-agent: *\n".into(),
                })]),
            ),
        ],
        PolicyConfig::default(),
        fetch,
    )
    .await;
    let cases = [
        ("nxdomain.test", "DNS lookup failed"),
        ("reset.test", "connection reset"),
        ("hang.test", "timed out"),
        ("truncated.test", "body cut short"),
        ("midreset.test", "body cut short"),
    ];
    for (host, words) in cases {
        let r = e.check(host, "/x").await;
        assert!(!r.allowed, "{host}");
        assert_eq!(r.access, AccessKind::DisallowAll, "{host}");
        assert!(r.reason.starts_with(words), "{host}: {}", r.reason);
        assert!(
            r.reason.contains("phase 1 of 3: complete disallow"),
            "{host}: {}",
            r.reason
        );
    }
    // Nothing listens on this port: connection refused.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let r = e
        .cache
        .check(&format!("http://a.test:{closed}/x"), "mannerly")
        .await
        .expect("check");
    assert!(!r.allowed);
    assert!(
        r.reason.starts_with("connection failed since"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn failures_back_off_between_attempts() {
    let e = env(vec![("a.test", robots(vec![Reply::status(500)]))]).await;
    let mut waits = Vec::new();
    for _ in 0..6 {
        let r = e.check("a.test", "/").await;
        let expires = r.expires_at.expect("expiry");
        assert!(expires > e.clock_now(), "future");
        let wait = expires.duration_since(e.clock_now());
        waits.push(wait);
        e.clock.advance(wait);
    }
    assert_eq!(e.web.count("a.test", "/robots.txt"), 6);
    assert!(
        waits
            .windows(2)
            .all(|w| w[1] > w[0] || w[1] >= Duration::from_secs(2700)),
        "{waits:?}"
    );
    assert!(
        waits[0] >= Duration::from_secs(45) && waits[0] < Duration::from_secs(75),
        "{waits:?}"
    );
}

impl Env {
    fn clock_now(&self) -> mannerly_fetch::UnixMillis {
        use mannerly_fetch::Clock;
        self.clock.now()
    }
}

#[tokio::test]
async fn cache_expires_after_24_hours_or_sooner_by_cache_control() {
    let e = env(vec![
        ("a.test", HostSpec::default().robots(RULES)),
        (
            "b.test",
            robots(vec![
                Reply::text(RULES).header("Cache-Control", "public, max-age=3600")
            ]),
        ),
        (
            "c.test",
            robots(vec![Reply::text(RULES)
                .header(
                    "Expires",
                    mannerly_fetch::time::fmt_http_date(test_epoch() + 2 * HOUR),
                )
                .header(
                    "Date",
                    mannerly_fetch::time::fmt_http_date(test_epoch()),
                )]),
        ),
        (
            "d.test",
            robots(vec![
                Reply::text(RULES).header("Cache-Control", "max-age=999999")
            ]),
        ),
    ])
    .await;
    for h in ["a.test", "b.test", "c.test", "d.test"] {
        e.check(h, "/").await;
    }
    e.clock.advance(HOUR);
    for h in ["a.test", "b.test", "c.test", "d.test"] {
        e.check(h, "/").await;
    }
    assert_eq!(
        e.web.count("b.test", "/robots.txt"),
        2,
        "max-age=3600 expired"
    );
    assert_eq!(e.web.count("c.test", "/robots.txt"), 1);
    e.clock.advance(HOUR);
    e.check("c.test", "/").await;
    assert_eq!(e.web.count("c.test", "/robots.txt"), 2, "Expires passed");
    e.clock.advance(22 * HOUR - Duration::from_secs(1));
    e.check("a.test", "/").await;
    e.check("d.test", "/").await;
    assert_eq!(e.web.count("a.test", "/robots.txt"), 1);
    e.clock.advance(Duration::from_secs(1));
    e.check("a.test", "/").await;
    e.check("d.test", "/").await;
    assert_eq!(e.web.count("a.test", "/robots.txt"), 2, "24 hours at most");
    assert_eq!(
        e.web.count("d.test", "/robots.txt"),
        2,
        "max-age cannot extend past 24 hours"
    );
}

#[tokio::test]
async fn no_store_is_kept_in_memory_briefly_and_never_persisted() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::text(RULES).header("Cache-Control", "no-store")]),
    )])
    .await;
    let r = e.check("a.test", "/private/x").await;
    assert!(!r.allowed);
    assert!(
        r.reason.contains("no-store: kept in memory only"),
        "{}",
        r.reason
    );
    let stored = e.store.get(&e.origin("a.test")).expect("state saved");
    assert!(stored.good.is_none(), "the no-store body is not persisted");
    e.clock.advance(Duration::from_secs(59));
    e.check("a.test", "/").await;
    assert_eq!(e.web.count("a.test", "/robots.txt"), 1);
    e.clock.advance(Duration::from_secs(1));
    e.check("a.test", "/").await;
    assert_eq!(e.web.count("a.test", "/robots.txt"), 2);
}

#[tokio::test]
async fn a_restored_no_store_entry_is_never_more_permissive_than_the_file() {
    // Before: the body was dropped but the decision's expiry kept, so a
    // restart (or an LRU eviction) read "robots.txt was unavailable" and
    // allowed everything, though the file says Disallow: /.
    let e = env(vec![(
        "a.test",
        robots(vec![
            Reply::text("User-agent: *\nDisallow: /\n").header("Cache-Control", "no-store")
        ]),
    )])
    .await;
    assert!(!e.check("a.test", "/page").await.allowed);
    // A new cache over the same store, as after a restart.
    let fetch = FetchConfig::default();
    let restarted = RobotsCache::new(
        HttpFetcher::with_client(client_for(&e.web, &fetch), fetch),
        Arc::new(e.clock.clone()),
        e.store.clone(),
        CacheConfig::default(),
    );
    let r = restarted
        .check(&e.url("a.test", "/page"), "mannerly")
        .await
        .expect("check");
    assert!(!r.allowed, "{}", r.reason);
    assert_eq!(
        e.web.count("a.test", "/robots.txt"),
        2,
        "fetched again rather than trusted without its body"
    );
}

#[tokio::test]
async fn not_modified_renews_the_cached_rules() {
    let e = env(vec![(
        "a.test",
        robots(vec![
            Reply::text(RULES)
                .header("ETag", "\"v1\"")
                .header("Last-Modified", "Thu, 19 Nov 2026 10:00:00 GMT"),
            Reply::status(304).header("ETag", "\"v1\""),
        ]),
    )])
    .await;
    assert!(!e.check("a.test", "/private/x").await.allowed);
    e.clock.advance(DAY);
    let r = e.check("a.test", "/private/x").await;
    assert!(!r.allowed, "the rules survive the 304");
    assert!(
        r.reason.starts_with(
            "304 Not Modified at 2026-11-21T10:00:00Z: the cached robots.txt is still current"
        ),
        "{}",
        r.reason
    );
    let reqs: Vec<bool> = e
        .web
        .requests()
        .iter()
        .filter(|q| q.path == "/robots.txt")
        .map(|q| q.conditional)
        .collect();
    assert_eq!(reqs, vec![false, true], "the refresh was conditional");
}

#[tokio::test]
async fn size_limit_cuts_at_a_line_boundary() {
    let mut body = String::from("User-agent: *\n");
    while body.len() < 510 * 1024 {
        body.push_str("Allow: /padding/aaaaaaaaaaaaaaaaaaaaaaaa\n");
    }
    body.push_str("Disallow: /late/\n");
    let e = env(vec![("a.test", HostSpec::default().robots(body))]).await;
    let r = e.check("a.test", "/late/x").await;
    assert!(r.allowed, "the rule past 500 KiB is ignored");
    assert!(r.reason.contains("cut at 512000 bytes"), "{}", r.reason);
}

#[tokio::test]
async fn an_endless_body_is_read_only_up_to_the_limit() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::body(Body::Endless {
            line: "Disallow: /x\n".into(),
        })
        .with_status(200)]),
    )])
    .await;
    // The body starts with rules outside a group; the point is that the
    // fetch finishes and is cut.
    let r = tokio::time::timeout(Duration::from_secs(20), e.check("a.test", "/y"))
        .await
        .expect("finishes");
    assert!(r.reason.contains("cut at 512000 bytes"), "{}", r.reason);
}

/// Whether the client decodes or the fetcher does.
#[tokio::test]
async fn a_gzip_bomb_is_decoded_only_up_to_the_limit() {
    for decode in [true, false] {
        let bomb = robots(vec![Reply::body(Body::GzipBomb {
            decoded_bytes: 1 << 30,
        })]);
        let e = env_client(
            vec![("a.test", bomb)],
            PolicyConfig::default(),
            FetchConfig::default(),
            decode,
        )
        .await;
        let r = tokio::time::timeout(Duration::from_secs(20), e.check("a.test", "/y"))
            .await
            .expect("finishes");
        assert!(r.allowed, "decode {decode}");
        assert!(r.reason.contains("cut at 512000 bytes"), "{}", r.reason);
    }
}

#[tokio::test]
async fn gzip_content_encoding_is_decoded() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::body(Body::Gzip { text: RULES.into() })]),
    )])
    .await;
    assert!(!e.check("a.test", "/private/z").await.allowed);
}

/// A fetcher over a client that keeps bodies as sent.
async fn env_raw(hosts: Vec<(&str, HostSpec)>) -> Env {
    env_client(
        hosts,
        PolicyConfig::default(),
        FetchConfig::default(),
        false,
    )
    .await
}

#[tokio::test]
async fn a_client_that_does_not_decode_still_reads_gzip_and_deflate() {
    use std::io::Write;
    let zlib = {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(RULES.as_bytes()).expect("zlib");
        z.finish().expect("zlib")
    };
    let raw = {
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(RULES.as_bytes()).expect("deflate");
        z.finish().expect("deflate")
    };
    let binary = |bytes: Vec<u8>| {
        robots(vec![
            Reply::body(Body::Binary { bytes }).header("content-encoding", "deflate")
        ])
    };
    let e = env_raw(vec![
        (
            "g.test",
            robots(vec![Reply::body(Body::Gzip { text: RULES.into() })]),
        ),
        ("z.test", binary(zlib)),
        ("d.test", binary(raw)),
    ])
    .await;
    for host in ["g.test", "z.test", "d.test"] {
        let r = e.check(host, "/private/z").await;
        assert!(!r.allowed, "{host}: {}", r.reason);
        assert!(e.check(host, "/public").await.allowed, "{host}");
    }
}

/// Servers send `Content-Encoding` on empty bodies and on error pages;
/// only a success's body is read as rules, so only there does a body that
/// does not decode matter.
#[tokio::test]
async fn an_empty_or_error_body_in_a_coding_is_not_a_failure() {
    let gz = |reply: Reply| robots(vec![reply.header("content-encoding", "gzip")]);
    let e = env_raw(vec![
        ("empty404.test", gz(Reply::text("").with_status(404))),
        (
            "junk404.test",
            gz(Reply::text("<html>not found</html>").with_status(404)),
        ),
        ("empty200.test", gz(Reply::text(""))),
    ])
    .await;
    for host in ["empty404.test", "junk404.test", "empty200.test"] {
        let r = e.check(host, "/private/x").await;
        assert!(r.allowed, "{host}: {}", r.reason);
        assert!(
            !r.reason.starts_with("network error"),
            "{host}: {}",
            r.reason
        );
    }
}

#[tokio::test]
async fn a_body_in_an_unreadable_coding_fails_closed_and_says_why() {
    let e = env_raw(vec![
        (
            "br.test",
            robots(vec![Reply::body(Body::Binary {
                bytes: vec![0x1b, 0x00, 0x01],
            })
            .header("content-encoding", "br")]),
        ),
        (
            "bad.test",
            robots(vec![
                Reply::text("not gzip at all").header("content-encoding", "gzip")
            ]),
        ),
    ])
    .await;
    let fetcher = HttpFetcher::with_client(
        raw_client_for(&e.web, &FetchConfig::default()),
        FetchConfig::default(),
    );
    for (host, says) in [("br.test", "\"br\""), ("bad.test", "not valid gzip")] {
        let r = e.check(host, "/x").await;
        assert!(!r.allowed, "{host}: {}", r.reason);
        assert!(
            r.reason.starts_with("network error"),
            "{host}: {}",
            r.reason
        );
        let outcome = mannerly_fetch::Fetcher::fetch(
            &fetcher,
            &e.origin(host),
            &mannerly_fetch::Validators::default(),
        )
        .await;
        match outcome {
            mannerly_fetch::FetchOutcome::Network { detail, .. } => {
                assert!(detail.contains(says), "{host}: {detail}")
            }
            other => panic!("{host}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_lookups_cause_one_fetch() {
    let e = Arc::new(
        env(vec![(
            "a.test",
            robots(vec![Reply::text(RULES).latency(200)]),
        )])
        .await,
    );
    let mut tasks = Vec::new();
    for i in 0..1000 {
        let e = e.clone();
        tasks.push(tokio::spawn(async move {
            e.check("a.test", &format!("/private/{i}")).await.allowed
        }));
    }
    for t in tasks {
        assert!(!t.await.expect("task"));
    }
    assert_eq!(e.web.count("a.test", "/robots.txt"), 1);
}

#[tokio::test]
async fn robots_txt_itself_is_always_allowed() {
    let e = env(vec![(
        "a.test",
        HostSpec::default().robots("User-agent: *\nDisallow: /\n"),
    )])
    .await;
    assert!(!e.check("a.test", "/page").await.allowed);
    let r = e.check("a.test", "/robots.txt").await;
    assert!(r.allowed);
    assert_eq!(r.access, AccessKind::RobotsTxt);
}

#[tokio::test]
async fn memory_is_bounded_by_entries() {
    let mut config = WebConfig::default();
    config.generated.count = 50;
    let web = TestWeb::start(config).await.expect("web");
    let fetch = FetchConfig::default();
    let client = client_for(&web, &fetch);
    let cache = RobotsCache::new(
        HttpFetcher::with_client(client, fetch),
        Arc::new(FakeClock::new(test_epoch())),
        Arc::new(MemoryStore::default()),
        CacheConfig {
            max_entries: 8,
            ..CacheConfig::default()
        },
    );
    for n in 0..50 {
        let url = web.url(&format!("h{n}.gen.test"), "/private/x");
        assert!(!cache.check(&url, "bot").await.expect("check").allowed);
        assert!(cache.len() <= 8);
    }
    assert!(cache.bytes() > 0);
}

#[tokio::test]
async fn state_survives_a_restart_through_the_store() {
    let e = env(vec![(
        "a.test",
        robots(vec![Reply::text(RULES), Reply::status(503)]),
    )])
    .await;
    assert!(e.check("a.test", "/x").await.allowed);
    e.clock.advance(DAY);
    assert!(!e.check("a.test", "/x").await.allowed);
    // A new cache over the same store: the failure run and the good copy
    // come back, so 13 hours later the good copy applies without refetch
    // history being lost.
    let fetch = FetchConfig::default();
    let client = client_for(&e.web, &fetch);
    let cache2 = RobotsCache::new(
        HttpFetcher::with_client(client, fetch),
        Arc::new(e.clock.clone()),
        e.store.clone(),
        CacheConfig::default(),
    );
    let origin = e.origin("a.test");
    let restored = cache2.state(&origin).await;
    assert_eq!(restored.failure.as_ref().map(|f| f.attempts), Some(1));
    assert_eq!(restored.history.len(), 2);
    e.clock.advance(13 * HOUR);
    let r = cache2
        .check(&e.url("a.test", "/x"), "bot")
        .await
        .expect("check");
    assert!(r.allowed);
    assert!(
        r.reason.contains("phase 2 of 3: using the last good copy"),
        "{}",
        r.reason
    );
}

#[tokio::test]
async fn memory_is_bounded_by_bytes() {
    let mut config = WebConfig::default();
    let big = format!(
        "User-agent: *\n{}",
        "Disallow: /private/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n".repeat(200)
    );
    config.generated.count = 30;
    config.generated.robots = big.clone();
    let web = TestWeb::start(config).await.expect("web");
    let fetch = FetchConfig::default();
    let cache = RobotsCache::new(
        HttpFetcher::with_client(client_for(&web, &fetch), fetch),
        Arc::new(FakeClock::new(test_epoch())),
        Arc::new(MemoryStore::default()),
        CacheConfig {
            max_bytes: 100 * 1024,
            ..CacheConfig::default()
        },
    );
    for n in 0..30 {
        let url = web.url(
            &format!("h{n}.gen.test"),
            "/private/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x",
        );
        assert!(!cache.check(&url, "bot").await.expect("check").allowed);
        assert!(
            cache.bytes() <= 100 * 1024 + 3 * big.len() + 512,
            "{} bytes",
            cache.bytes()
        );
    }
    // ~10 KB bodies counted three times (body, parsed rules, slack): a
    // 100 KiB budget holds only a few origins.
    assert!(cache.len() <= 5, "{} origins kept", cache.len());
}

/// A store whose every call fails, as a disk that is full or a server that
/// went away would.
struct BrokenStore;

impl Store for BrokenStore {
    fn load<'a>(
        &'a self,
        origin: &'a Origin,
    ) -> mannerly_fetch::StoreFuture<'a, Option<mannerly_fetch::policy::StoredState>> {
        let origin = origin.to_string();
        Box::pin(async move {
            Err(mannerly_fetch::StoreError {
                op: "load",
                origin,
                source: "the disk is on fire".into(),
            })
        })
    }
    fn save<'a>(
        &'a self,
        state: &'a mannerly_fetch::policy::StoredState,
    ) -> mannerly_fetch::StoreFuture<'a, ()> {
        Box::pin(async move {
            Err(mannerly_fetch::StoreError {
                op: "save",
                origin: state.origin.to_string(),
                source: "no space left on device".into(),
            })
        })
    }
}

#[tokio::test]
async fn a_failing_store_is_reported_and_never_loosens_the_rules() {
    let web = TestWeb::start(WebConfig {
        hosts: [(
            "a.test".to_owned(),
            robots(vec![Reply::text(RULES), Reply::status(503)]),
        )]
        .into(),
        ..WebConfig::default()
    })
    .await
    .expect("testweb");
    let fetch = FetchConfig::default();
    let clock = FakeClock::new(test_epoch());
    let cache = RobotsCache::new(
        HttpFetcher::with_client(client_for(&web, &fetch), fetch),
        Arc::new(clock.clone()),
        Arc::new(BrokenStore),
        CacheConfig::default(),
    );
    let url = web.url("a.test", "/private/x");
    let r = cache.check(&url, "MyBot").await.expect("check");
    // The load failed (fetched anyway) and the save failed (kept in memory).
    assert!(!r.allowed, "the rules still apply: {r:?}");
    assert_eq!(r.access, AccessKind::Rules);
    assert_eq!(cache.store_errors(), 2);
    let last = cache.last_store_error().expect("kept");
    assert!(
        last.contains("save") && last.contains("no space left"),
        "{last}"
    );
    // Served from memory: no second fetch while the rules are fresh.
    let r = cache.check(&url, "MyBot").await.expect("check");
    assert!(!r.allowed);
    assert_eq!(web.count("a.test", "/robots.txt"), 1);
}

/// Records what a crawler's gate would see, and lets through or refuses.
struct Gate {
    allow: bool,
    seen: std::sync::Mutex<Vec<String>>,
}

impl mannerly_fetch::HopGate for Gate {
    fn enter<'a>(
        &'a self,
        from: &'a url::Url,
        to: &'a url::Url,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        self.seen.lock().expect("lock").push(format!(
            "enter {} -> {}",
            from.host_str().unwrap_or(""),
            to.path()
        ));
        Box::pin(async move { self.allow })
    }

    fn leave(&self, _from: &url::Url, to: &url::Url, status: Option<u16>, _latency: Duration) {
        self.seen.lock().expect("lock").push(format!(
            "leave {} {}",
            to.host_str().unwrap_or(""),
            status.map_or("-".into(), |s| s.to_string())
        ));
    }
}

#[tokio::test]
async fn hops_to_another_host_go_through_the_gate() {
    for allow in [true, false] {
        let e = env(vec![
            ("a.test", HostSpec::default()),
            ("b.test", HostSpec::default()),
        ])
        .await;
        let target = e.url("b.test", "/robots.txt");
        // a.test -> a.test/moved (same host: no gate) -> b.test/robots.txt.
        e.web.set_host(
            "a.test",
            robots(vec![Reply::redirect(301, "/moved")])
                .route("/moved", vec![Reply::redirect(301, target.as_str())]),
        );
        e.web.set_host("b.test", HostSpec::default().robots(RULES));
        let gate = Arc::new(Gate {
            allow,
            seen: std::sync::Mutex::new(Vec::new()),
        });
        let fetch = FetchConfig::default();
        let fetcher =
            HttpFetcher::with_client(client_for(&e.web, &fetch), fetch).with_gate(gate.clone());
        let outcome = mannerly_fetch::Fetcher::fetch(
            &fetcher,
            &e.origin("a.test"),
            &mannerly_fetch::Validators::default(),
        )
        .await;
        let seen = gate.seen.lock().expect("lock").clone();
        if allow {
            assert_eq!(seen, ["enter a.test -> /robots.txt", "leave b.test 200"]);
            assert!(
                matches!(outcome, mannerly_fetch::FetchOutcome::Response { .. }),
                "{outcome:?}"
            );
            assert_eq!(e.web.count("b.test", "/robots.txt"), 1);
        } else {
            assert_eq!(seen, ["enter a.test -> /robots.txt"]);
            assert!(
                matches!(outcome, mannerly_fetch::FetchOutcome::Network { .. }),
                "a refused hop fails closed: {outcome:?}"
            );
            assert_eq!(e.web.count("b.test", "/robots.txt"), 0, "never sent");
        }
    }
}

#[tokio::test]
async fn a_redirect_chain_is_held_to_one_total_deadline() {
    // Before: every hop had its own 30 s, so one robots.txt fetch could
    // take six times that. Five slow hops (400 ms each) against a 1 s
    // total: the fetch fails as a timeout, with the deadline named.
    let mut spec = robots(vec![Reply::redirect(301, "/h1").latency(400)]);
    for i in 1..5 {
        spec = spec.route(
            format!("/h{i}"),
            vec![Reply::redirect(301, format!("/h{}", i + 1)).latency(400)],
        );
    }
    spec = spec.route("/h5", vec![Reply::text(RULES)]);
    let fetch = FetchConfig {
        total_timeout: Duration::from_secs(1),
        ..FetchConfig::default()
    };
    let e = env_with(vec![("a.test", spec)], PolicyConfig::default(), fetch).await;
    let r = e.check("a.test", "/public").await;
    assert!(!r.allowed, "unreachable: complete disallow");
    assert!(r.reason.starts_with("timed out since"), "{}", r.reason);
}

#[tokio::test]
async fn decided_says_whether_a_check_would_fetch_without_fetching() {
    let e = env(vec![("a.test", robots(vec![Reply::text(RULES)]))]).await;
    let origin = e.origin("a.test");
    assert!(!e.cache.decided(&origin).await, "nothing known yet");
    assert_eq!(
        e.web.count("a.test", "/robots.txt"),
        0,
        "asking fetched nothing"
    );
    e.cache.decision(&origin).await;
    assert!(e.cache.decided(&origin).await);
    // Another worker's cache over the same store knows it without a fetch;
    // one over an empty store does not.
    let fetch = FetchConfig::default();
    let other = |store: Arc<MemoryStore>| {
        RobotsCache::new(
            HttpFetcher::with_client(client_for(&e.web, &fetch), fetch.clone()),
            Arc::new(e.clock.clone()),
            store,
            CacheConfig::default(),
        )
    };
    assert!(other(e.store.clone()).decided(&origin).await);
    assert!(
        !other(Arc::new(MemoryStore::default()))
            .decided(&origin)
            .await
    );
    // Past its 24 hours the state is no decision any more.
    e.clock.advance(std::time::Duration::from_secs(25 * 3600));
    assert!(!e.cache.decided(&origin).await);
    assert_eq!(e.web.count("a.test", "/robots.txt"), 1);
}

#[tokio::test]
async fn check_decided_answers_as_check_does_or_not_at_all_and_never_fetches() {
    let e = env(vec![("a.test", robots(vec![Reply::text(RULES)]))]).await;
    let private = e.url("a.test", "/private/z");
    let public = e.url("a.test", "/public");
    let itself = e.url("a.test", "/robots.txt");
    // Undecided: no answer, robots.txt itself included, and nothing fetched.
    for url in [&private, &public, &itself] {
        assert!(e
            .cache
            .check_decided(url, "bot")
            .await
            .expect("url")
            .is_none());
    }
    assert_eq!(e.web.count("a.test", "/robots.txt"), 0);
    // Decided: the same answer as `check`, with the decision it came from.
    e.cache.decision(&e.origin("a.test")).await;
    for url in [&private, &public, &itself] {
        let (got, decision) = e
            .cache
            .check_decided(url, "bot")
            .await
            .expect("url")
            .expect("decided");
        let want = e.cache.check(url, "bot").await.expect("url");
        assert_eq!(
            (got.allowed, got.access, &got.rule),
            (want.allowed, want.access, &want.rule),
            "{url}"
        );
        assert!(matches!(decision.access, mannerly_fetch::Access::Rules(_)));
    }
    assert_eq!(e.web.count("a.test", "/robots.txt"), 1);
    // A URL that is not one is an error, as for `check`.
    assert!(e.cache.check_decided("not a url", "bot").await.is_err());
    // Expired: no answer again, still without a fetch.
    e.clock.advance(std::time::Duration::from_secs(25 * 3600));
    assert!(e
        .cache
        .check_decided(&public, "bot")
        .await
        .expect("url")
        .is_none());
    assert_eq!(e.web.count("a.test", "/robots.txt"), 1);
}

/// A hook that cannot write down a request stops it: nothing reaches the
/// server, and robots.txt is unavailable (no page goes), not allow-all.
#[tokio::test]
async fn a_request_a_hook_refuses_is_not_sent() {
    struct Refuses;
    impl mannerly_fetch::SendHook for Refuses {
        fn sending(&self, _url: &url::Url) -> Result<(), mannerly_fetch::NotSent> {
            Err(mannerly_fetch::NotSent("the disk is full".into()))
        }
    }
    let mut config = WebConfig::default();
    config
        .hosts
        .insert("a.test".into(), robots(vec![Reply::text(RULES)]));
    let web = TestWeb::start(config).await.expect("testweb");
    let fetch = FetchConfig::default();
    let fetcher =
        HttpFetcher::with_client(client_for(&web, &fetch), fetch).with_hook(Arc::new(Refuses));
    let cache = RobotsCache::new(
        fetcher,
        Arc::new(FakeClock::new(test_epoch())),
        Arc::new(MemoryStore::default()),
        CacheConfig::default(),
    );
    let r = cache
        .check(&web.url("a.test", "/public"), "mannerly")
        .await
        .expect("check");
    assert!(!r.allowed, "{r:?}");
    assert_eq!(r.access, AccessKind::DisallowAll, "{r:?}");
    assert_eq!(web.count("a.test", "/robots.txt"), 0);
}

/// A request the server refuses at the HTTP/2 layer (REFUSED_STREAM) is
/// one failed fetch, sent once: the client does not quietly send it again.
#[tokio::test]
async fn a_refused_http2_stream_is_not_sent_again() {
    let server = mannerly_testweb::RefusingH2::start()
        .await
        .expect("refusing server");
    let config = FetchConfig::default();
    let client = HttpFetcher::client_builder(&config)
        .http2_prior_knowledge()
        .build()
        .expect("client");
    let fetcher = HttpFetcher::with_client(client, config);
    let url = url::Url::parse(&server.url("/robots.txt")).expect("url");
    let outcome = fetcher.get(&url).await;
    assert!(
        matches!(outcome, mannerly_fetch::GetOutcome::Network { .. }),
        "a refused stream is a network failure"
    );
    assert_eq!(server.streams(), 1, "sent once, not re-sent");
}
