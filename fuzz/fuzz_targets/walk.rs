//! A hostile site for the sitemap walker: the input is the body a
//! simulated site (testweb on 127.0.0.1) serves for every sitemap URL
//! (`{B}` in it becomes the site's base URL, so inputs can list children
//! on the same site, any number of them, at any depth; a first byte of
//! 0x1F serves it gzip-compressed). Whatever the body, the walk fetches at
//! most its limit, lists a bounded report, and ends; the smoke run's RSS
//! limit bounds its memory.

#![no_main]

use std::io::Write;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mannerly_fetch::{FetchConfig, HttpFetcher};
use mannerly_sitemap::walk::{Start, VisitResult, WalkConfig, Walker, MAX_SKIPS_LISTED};
use mannerly_testweb::{Body, HostSpec, Reply, TestWeb, WebConfig};

struct Site {
    rt: tokio::runtime::Runtime,
    web: TestWeb,
}

fn site() -> &'static Site {
    static SITE: OnceLock<Site> = OnceLock::new();
    SITE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let web = rt
            .block_on(TestWeb::start(WebConfig::default()))
            .expect("testweb");
        Site { rt, web }
    })
}

const LIMIT: usize = 20;

fuzz_target!(|data: &[u8]| {
    let s = site();
    let base = s.web.url("hostile.test", "");
    let (gzip, body) = match data.split_first() {
        Some((0x1F, rest)) => (true, rest),
        _ => (false, data),
    };
    let text = String::from_utf8_lossy(body).replace("{B}", &base);
    let bytes = if gzip {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let _ = z.write_all(text.as_bytes());
        z.finish().unwrap_or_default()
    } else {
        text.into_bytes()
    };
    s.web.set_host(
        "hostile.test",
        HostSpec::default()
            .robots(format!("User-agent: *\nSitemap: {base}/s.xml\n"))
            .route(
                "/s.xml",
                vec![Reply::body(Body::Binary {
                    bytes: bytes.clone(),
                })],
            )
            .route("/i.xml", vec![Reply::body(Body::Binary { bytes })]),
    );
    let fetch = FetchConfig {
        total_timeout: std::time::Duration::from_secs(5),
        ..FetchConfig::default()
    };
    let Ok(client) = HttpFetcher::client_builder(&fetch)
        .dns_resolver(s.web.resolver())
        .build()
    else {
        return;
    };
    let walker = Walker::new(
        HttpFetcher::with_client(client, fetch),
        WalkConfig {
            max_sitemaps: LIMIT,
            deadline: std::time::Duration::from_secs(10),
            ..WalkConfig::default()
        },
    );
    let Ok(start) = url::Url::parse(&format!("{base}/")) else {
        return;
    };
    let (report, _) = s.rt.block_on(walker.walk_collect(Start::Robots(start)));
    let fetched = report
        .sitemaps
        .iter()
        .filter(|v| !matches!(v.result, VisitResult::Skipped { .. }))
        .count();
    assert!(
        fetched <= LIMIT,
        "{fetched} sitemaps fetched, limit {LIMIT}"
    );
    assert!(report.sitemaps.len() <= LIMIT + MAX_SKIPS_LISTED);
});
