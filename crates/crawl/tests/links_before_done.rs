//! A page's links are queued before the page is recorded done, so a kill
//! in between fetches the page again rather than losing its links. The
//! engine offers the links of every page a turn of its loop handled in one
//! call, and records those pages done after it: this checks the order on
//! the calls the frontier sees.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mannerly_polite::frontier::{Offer, Released};
use mannerly_testweb::{HostSpec, TestWeb, WebConfig};

mod common;
use common::{crawl, html, Hooks};

#[derive(Debug)]
enum Call {
    Offered(Vec<String>),
    Completed(String),
}

#[derive(Default)]
struct Calls(Mutex<Vec<Call>>);

impl Hooks for Calls {
    fn offered(&self, offers: &[Offer<'_>]) {
        let urls = offers.iter().map(|o| o.url.to_owned()).collect();
        self.0.lock().expect("lock").push(Call::Offered(urls));
    }

    fn completed(&self, released: &Released) {
        let url = released.url.clone();
        self.0.lock().expect("lock").push(Call::Completed(url));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pages_links_are_offered_before_it_is_recorded_done() {
    let mut site = WebConfig::default();
    for host in ["a.test", "b.test"] {
        site.hosts.insert(
            host.into(),
            HostSpec::default()
                .route("/", vec![html(r#"<a href="/x">x</a> <a href="/y">y</a>"#)])
                .route("/x", vec![html(r#"<a href="/z">z</a>"#)])
                .route("/y", vec![html("<p>y</p>")])
                .route("/z", vec![html("<p>z</p>")]),
        );
    }
    let web = TestWeb::start(site).await.expect("testweb");
    let out = tempfile::tempdir().expect("tempdir");
    let calls = Arc::new(Calls::default());
    let seeds = [web.url("a.test", "/"), web.url("b.test", "/")];
    let summary = crawl(
        calls.clone(),
        &web,
        Duration::from_millis(20),
        &seeds,
        out.path(),
    )
    .await;
    assert_eq!(summary.pages_by_status.get(&200), Some(&8), "{summary:?}");
    let calls = calls.0.lock().expect("lock");
    let done_at = |url: &str| {
        calls
            .iter()
            .position(|c| matches!(c, Call::Completed(u) if u == url))
            .unwrap_or_else(|| panic!("{url} is never recorded done: {calls:?}"))
    };
    let offered_at = |url: &str| {
        calls
            .iter()
            .position(|c| matches!(c, Call::Offered(us) if us.iter().any(|u| u == url)))
            .unwrap_or_else(|| panic!("{url} is never offered: {calls:?}"))
    };
    for host in ["a.test", "b.test"] {
        let url = |path: &str| web.url(host, path);
        for (page, links) in [("/", ["/x", "/y"].as_slice()), ("/x", ["/z"].as_slice())] {
            for link in links {
                assert!(
                    offered_at(&url(link)) < done_at(&url(page)),
                    "{} is recorded done before its link {} is offered: {calls:?}",
                    url(page),
                    url(link)
                );
            }
        }
    }
}
