//! Walking over the simulated web: discovery from robots.txt, indexes,
//! cycles, depth, cross-submission, limits. Stands without ../shared.

use std::io::Write;

use mannerly_fetch::{FetchConfig, HttpFetcher};
use mannerly_sitemap::walk::{Start, Via, VisitResult, WalkConfig, Walker};
use mannerly_testweb::{Body, HostSpec, Reply, TestWeb, WebConfig};

fn walker(web: &TestWeb, config: WalkConfig) -> Walker {
    let fetch = FetchConfig::default();
    let client = HttpFetcher::client_builder(&fetch)
        .dns_resolver(web.resolver())
        .build()
        .expect("client");
    Walker::new(HttpFetcher::with_client(client, fetch), config)
}

fn index(children: &[String]) -> String {
    let mut s = String::from("<sitemapindex>");
    for c in children {
        s.push_str(&format!("<sitemap><loc>{c}</loc></sitemap>"));
    }
    s + "</sitemapindex>"
}

fn urlset(locs: &[String]) -> String {
    let mut s = String::from("<urlset>");
    for l in locs {
        s.push_str(&format!("<url><loc>{l}</loc></url>"));
    }
    s + "</urlset>"
}

async fn web(hosts: Vec<(&str, HostSpec)>) -> TestWeb {
    TestWeb::with_hosts(hosts).await.expect("web")
}

fn reasons(r: &mannerly_sitemap::walk::WalkReport) -> Vec<String> {
    r.sitemaps
        .iter()
        .map(|v| match &v.result {
            VisitResult::Parsed { summary } => format!("{} parsed {}", v.url, summary.entries),
            VisitResult::Skipped { reason } => format!("{} skipped {reason}", v.url),
            VisitResult::Failed { reason } => format!("{} failed {reason}", v.url),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_from_robots_and_an_index_that_points_at_itself() {
    let w = web(vec![("a.test", HostSpec::default())]).await;
    let u = |p: &str| w.url("a.test", p);
    w.set_host(
        "a.test",
        HostSpec::default()
            .robots(format!(
                "User-agent: *\nDisallow:\nSitemap: {}\n",
                u("/index.xml")
            ))
            .route(
                "/index.xml",
                vec![Reply::text(index(&[u("/index.xml"), u("/pages.xml")]))],
            )
            .route("/pages.xml", vec![Reply::text(urlset(&[u("/1"), u("/2")]))]),
    );
    let (report, found) = walker(&w, WalkConfig::default())
        .walk_collect(Start::Robots(url::Url::parse(&u("/")).expect("url")))
        .await;
    assert_eq!(found.len(), 2);
    let r = reasons(&report);
    assert!(
        r.iter()
            .any(|x| x.ends_with("skipped already visited: a cycle or a duplicate listing")),
        "{r:?}"
    );
    assert_eq!(report.robots.as_ref().map(|n| n.sitemaps.len()), Some(1));
    assert_eq!(
        w.count("a.test", "/index.xml"),
        1,
        "the self-reference is not fetched again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_cycle_and_a_redirect_back_are_detected() {
    let w = web(vec![("a.test", HostSpec::default())]).await;
    let u = |p: &str| w.url("a.test", p);
    w.set_host(
        "a.test",
        HostSpec::default()
            .route("/s1.xml", vec![Reply::text(index(&[u("/s2.xml")]))])
            .route("/s2.xml", vec![Reply::text(index(&[u("/s3.xml")]))])
            .route(
                "/s3.xml",
                vec![Reply::text(index(&[u("/s1.xml"), u("/moved.xml")]))],
            )
            .route("/moved.xml", vec![Reply::redirect(301, "/s2.xml")]),
    );
    let start = Start::Sitemaps(vec![url::Url::parse(&u("/s1.xml")).expect("url")]);
    let (report, found) = walker(&w, WalkConfig::default()).walk_collect(start).await;
    assert!(found.is_empty());
    let r = reasons(&report);
    assert!(
        r.iter()
            .any(|x| x.contains("/s1.xml skipped already visited")),
        "{r:?}"
    );
    assert!(
        r.iter().any(
            |x| x.contains("/moved.xml skipped redirected to") && x.contains("already visited")
        ),
        "{r:?}"
    );
    for p in ["/s1.xml", "/s2.xml", "/s3.xml"] {
        assert_eq!(w.count("a.test", p), 1, "{p}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_depth_is_limited() {
    let w = web(vec![("a.test", HostSpec::default())]).await;
    let u = |p: &str| w.url("a.test", p);
    let mut spec = HostSpec::default();
    for i in 0..10 {
        spec = spec.route(
            format!("/d{i}.xml"),
            vec![Reply::text(index(&[u(&format!("/d{}.xml", i + 1))]))],
        );
    }
    w.set_host("a.test", spec);
    let config = WalkConfig {
        max_depth: 3,
        ..WalkConfig::default()
    };
    let (report, _) = walker(&w, config)
        .walk_collect(Start::Sitemaps(vec![
            url::Url::parse(&u("/d0.xml")).expect("url")
        ]))
        .await;
    let r = reasons(&report);
    assert!(
        r.last()
            .is_some_and(|x| x.contains("/d4.xml skipped index nesting deeper than 3")),
        "{r:?}"
    );
    assert_eq!(report.sitemaps.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_submission_through_robots_txt() {
    // www.test's robots.txt names a sitemap hosted on cdn.test that lists
    // www.test pages: allowed because of the robots.txt; a sitemap found
    // any other way may not list another host's pages.
    let w = web(vec![
        ("www.test", HostSpec::default()),
        ("cdn.test", HostSpec::default()),
    ])
    .await;
    let sm = w.url("cdn.test", "/maps/www.xml");
    w.set_host(
        "www.test",
        HostSpec::default().robots(format!("Sitemap: {sm}\n")),
    );
    w.set_host(
        "cdn.test",
        HostSpec::default().route(
            "/maps/www.xml",
            vec![Reply::text(urlset(&[
                w.url("www.test", "/page"),
                w.url("evil.test", "/x"),
            ]))],
        ),
    );
    let wk = walker(&w, WalkConfig::default());
    let (report, found) = wk
        .walk_collect(Start::Robots(
            url::Url::parse(&w.url("www.test", "/")).expect("url"),
        ))
        .await;
    assert_eq!(
        found
            .iter()
            .map(|f| f.entry.loc.clone())
            .collect::<Vec<_>>(),
        vec![w.url("www.test", "/page")]
    );
    assert!(
        matches!(&report.sitemaps[0].result, VisitResult::Parsed { summary } if summary.dropped_total() == 1)
    );
    assert_eq!(report.sitemaps[0].via, Via::Robots);
    let (_, found) = wk
        .walk_collect(Start::Sitemaps(vec![url::Url::parse(&sm).expect("url")]))
        .await;
    assert!(
        found.is_empty(),
        "without the robots.txt the www.test page is outside the sitemap's location"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_by_magic_and_double_compression_over_http() {
    let w = web(vec![("a.test", HostSpec::default())]).await;
    let body = urlset(&[w.url("a.test", "/x"), w.url("a.test", "/y")]);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(body.as_bytes()).expect("gz");
    let gz = enc.finish().expect("gz");
    w.set_host(
        "a.test",
        HostSpec::default()
            // .dat name, no gzip type: found by the magic bytes.
            .route(
                "/s.dat",
                vec![Reply::body(Body::Binary { bytes: gz.clone() })],
            )
            // A .xml.gz also served with Content-Encoding: gzip.
            .route(
                "/s.xml.gz",
                vec![Reply::body(Body::Gzip {
                    text: String::new(),
                })],
            )
            .route(
                "/double.xml.gz",
                vec![Reply::body(Body::Binary { bytes: gzip(&gz) })
                    .header("Content-Encoding", "gzip")],
            ),
    );
    let start = Start::Sitemaps(vec![
        url::Url::parse(&w.url("a.test", "/s.dat")).expect("url"),
        url::Url::parse(&w.url("a.test", "/double.xml.gz")).expect("url"),
    ]);
    let (report, found) = walker(&w, WalkConfig::default()).walk_collect(start).await;
    assert_eq!(found.len(), 4, "{:?}", reasons(&report));
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(b).expect("gz");
    enc.finish().expect("gz")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_kilobyte_bomb_is_cut_at_the_decoded_limit() {
    // Double gzip: ~1 KB on the wire, over 52,428,800 bytes once decoded.
    let w = web(vec![("a.test", HostSpec::default())]).await;
    let mut doc = urlset(&[w.url("a.test", "/1")]).into_bytes();
    doc.truncate(doc.len() - "</urlset>".len());
    doc.extend(std::iter::repeat_n(b' ', 64 << 20));
    let bomb = gzip(&gzip(&doc));
    assert!(bomb.len() < 2048, "{} bytes", bomb.len());
    w.set_host(
        "a.test",
        HostSpec::default().route("/bomb.xml", vec![Reply::body(Body::Binary { bytes: bomb })]),
    );
    let (report, found) = walker(&w, WalkConfig::default())
        .walk_collect(Start::Sitemaps(vec![url::Url::parse(
            &w.url("a.test", "/bomb.xml"),
        )
        .expect("url")]))
        .await;
    assert_eq!(found.len(), 1);
    let VisitResult::Parsed { summary } = &report.sitemaps[0].result else {
        panic!("{report:?}")
    };
    assert_eq!(
        summary.stop,
        Some(mannerly_sitemap::Stop::MaxBytes(52_428_800))
    );
    assert_eq!(summary.gzip_layers, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_reported_not_fatal() {
    let w = web(vec![(
        "a.test",
        HostSpec::default()
            .route("/gone.xml", vec![Reply::status(404)])
            .route(
                "/ok.xml",
                vec![Reply::text(urlset(&["http://a.test/ok".into()]))],
            ),
    )])
    .await;
    let mut c = WebConfig::default();
    c.dns_failures.insert("nowhere.test".into());
    let start = Start::Sitemaps(vec![
        url::Url::parse(&w.url("a.test", "/gone.xml")).expect("url"),
        url::Url::parse(&w.url("a.test", "/ok.xml")).expect("url"),
    ]);
    let (report, _) = walker(&w, WalkConfig::default()).walk_collect(start).await;
    let r = reasons(&report);
    assert!(r[0].ends_with("failed HTTP 404"), "{r:?}");
    assert!(matches!(
        report.sitemaps[1].result,
        VisitResult::Parsed { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_is_held_to_its_deadline() {
    // Before: a walk had no deadline at all (1,000 sitemaps x 30 s).
    let w = web(vec![]).await;
    let u = |p: &str| w.url("a.test", p);
    let children: Vec<String> = (0..6).map(|i| u(&format!("/s{i}.xml"))).collect();
    let mut spec = HostSpec::default().route("/index.xml", vec![Reply::text(index(&children))]);
    for i in 0..6 {
        spec = spec.route(
            format!("/s{i}.xml"),
            vec![Reply::text("<urlset></urlset>").latency(400)],
        );
    }
    w.set_host("a.test", spec);
    let config = WalkConfig {
        deadline: std::time::Duration::from_secs(1),
        ..WalkConfig::default()
    };
    let (report, _) = walker(&w, config)
        .walk_collect(Start::Sitemaps(vec![
            url::Url::parse(&u("/index.xml")).expect("url")
        ]))
        .await;
    let late = report.skipped.get("deadline").copied().unwrap_or(0)
        + report
            .sitemaps
            .iter()
            .filter(|v| matches!(&v.result, VisitResult::Failed { reason } if reason.contains("deadline")))
            .count() as u64;
    assert!(late >= 3, "{:?}", reasons(&report));
}
