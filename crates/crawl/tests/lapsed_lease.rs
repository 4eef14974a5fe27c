//! A release whose lease lapsed before its request went out (the worker
//! was stopped, say with SIGSTOP, between the release and the send) must
//! not be sent: another worker of the fleet may hold the host by then, and
//! sending would put two requests on the host too close together. This
//! holds for robots.txt as for pages.
//!
//! The frontier here is the embedded one behind a wrapper whose
//! `send_by` says every first release of a URL has lapsed already: the
//! engine must give each back (cancel) and send it only when it is
//! released again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_polite::frontier::Released;
use mannerly_testweb::{HostSpec, TestWeb, WebConfig};

mod common;
use common::{crawl, html, Hooks};

/// What the wrapper saw: per URL, how many releases it declared lapsed
/// and how many cancels came back.
#[derive(Default)]
struct Seen {
    lapsed: HashMap<String, u32>,
    cancelled: HashMap<String, u32>,
}

impl Hooks for Mutex<Seen> {
    fn send_by(&self, released: &Released) -> Option<Instant> {
        // `send_by` is asked once per release the engine goes on with.
        let mut seen = self.lock().expect("lock");
        let n = seen.lapsed.entry(released.url.clone()).or_default();
        if *n == 0 {
            *n = 1;
            Some(Instant::now() - Duration::from_secs(1))
        } else {
            None
        }
    }

    fn cancelled(&self, released: &Released) {
        *self
            .lock()
            .expect("lock")
            .cancelled
            .entry(released.url.clone())
            .or_default() += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_on_a_lease_that_lapsed_before_the_send() {
    let mut site = WebConfig::default();
    site.hosts.insert(
        "a.test".into(),
        HostSpec::default()
            .robots("User-agent: *\nAllow: /\n")
            .route("/", vec![html(r#"<a href="/next">next</a>"#)])
            .route("/next", vec![html("<p>the end</p>")]),
    );
    let web = TestWeb::start(site).await.expect("testweb");
    let out = tempfile::tempdir().expect("tempdir");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let summary = crawl(
        seen.clone(),
        &web,
        Duration::from_millis(50),
        &[web.url("a.test", "/")],
        out.path(),
    )
    .await;
    let robots = web.url("a.test", "/robots.txt");
    let pages = [web.url("a.test", "/"), web.url("a.test", "/next")];
    let seen = seen.lock().expect("lock");
    // Every release was declared lapsed once, and each was given back.
    for url in std::iter::once(&robots).chain(&pages) {
        assert_eq!(
            seen.cancelled.get(url),
            Some(&1),
            "{url}: its lapsed release is cancelled once"
        );
    }
    // Each was then released again and sent once: nothing on the lapsed
    // lease (robots.txt included), nothing lost.
    assert_eq!(web.count("a.test", "/robots.txt"), 1);
    assert_eq!(web.count("a.test", "/"), 1);
    assert_eq!(web.count("a.test", "/next"), 1);
    assert_eq!(summary.pages_by_status.get(&200), Some(&2), "{summary:?}");
    let log = std::fs::read_to_string(out.path().join("log.jsonl")).expect("log");
    let lapsed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"reason\":\"lease-lapsed:"))
        .collect();
    assert_eq!(lapsed.len(), 3, "{log}");
    assert!(
        lapsed.iter().any(|l| l.contains("/robots.txt\"")),
        "the lapsed robots.txt release is logged: {log}"
    );
}
