//! The HTML report in a real browser at a phone's width: Debian's chromium
//! through chromedriver (WebDriver, with `fantoccini`). The page asks for
//! nothing outside itself, nothing is wider than the screen, the charts
//! are drawn; a screenshot is kept (`target/ci-artifacts/audit-report.png`,
//! or `$MANNERLY_ARTIFACTS`).
//!
//! Needs chromium and chromedriver (see `mannerly_testsupport::Browser`).

use std::io::Write;
use std::path::{Path, PathBuf};

use mannerly_audit::{audit_logs, Catalogue, LogSource, Options, RobotsBook, Unchecked};
use mannerly_testsupport::Browser;
use serde_json::json;

/// A report worth looking at: a rude bot, a polite one, a browser.
fn report_page(dir: &Path) -> PathBuf {
    let mut log = String::new();
    for i in 0..600u32 {
        let (m, s) = (i / 60, i % 60);
        let t = format!("01/Mar/2026:10:{m:02}:{s:02} +0000");
        log += &format!("192.0.2.9 - - [{t}] \"GET /private/{i} HTTP/1.1\" 200 10 \"-\" \"Mozilla/5.0 (compatible; VeryLongNamedAggressiveCrawlerBot/3.1; +https://crawler.example/about-our-crawler-and-how-to-block-it)\"\n");
        if i % 10 == 0 {
            log += &format!("192.0.2.2 - - [{t}] \"GET /page/{i} HTTP/1.1\" 200 10 \"-\" \"Mozilla/5.0 (compatible; PoliteBot/1.0)\"\n");
        }
    }
    let path = dir.join("access.log");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(log.as_bytes()))
        .expect("log");
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 5\n",
    );
    let source = LogSource {
        path: path.display().to_string(),
        format: None,
        layout: None,
    };
    let options = Options {
        from_start: true,
        ..Options::default()
    };
    let report = audit_logs(
        &[source],
        &book,
        Catalogue::builtin(),
        options,
        &mut Unchecked,
    )
    .expect("audits");
    let html = dir.join("report.html");
    std::fs::write(&html, mannerly_audit::render::html(&report)).expect("html");
    html
}

#[tokio::test]
async fn the_html_report_reads_at_phone_width_in_chromium() {
    // A phone's viewport: 390 CSS pixels wide, as an iPhone's.
    let phone = json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2}}});
    let Some(browser) = Browser::start("the audit report's browser test", &[], phone).await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let page = report_page(dir.path());
    let c = &browser.client;
    c.goto(&format!("file://{}", page.display()))
        .await
        .expect("loads");
    let facts = c
        .execute(
            "return { width: window.innerWidth, scroll: document.documentElement.scrollWidth, \
             charts: Array.from(document.querySelectorAll('details[open] svg.chart, svg.kinds')).map(s => s.getBoundingClientRect().width), \
             resources: performance.getEntriesByType('resource').length, \
             axes: document.querySelectorAll('details[open] .axis, #by-kind .axis').length, \
             text: document.body.innerText };",
            vec![],
        )
        .await
        .expect("runs");
    browser.screenshot("audit-report.png").await;
    let _ = c.clone().close().await;
    let width = facts["width"].as_f64().expect("width");
    assert!(width <= 400.0, "the window is a phone's: {facts}");
    assert!(
        facts["scroll"].as_f64().expect("scroll") <= width + 1.0,
        "nothing wider than the screen: {facts}"
    );
    let charts = facts["charts"].as_array().expect("charts");
    assert!(charts.len() >= 2, "{facts}");
    assert!(
        charts.iter().all(|w| w.as_f64().is_some_and(|w| w > 300.0)),
        "charts span the screen: {facts}"
    );
    assert_eq!(
        facts["resources"], 0,
        "nothing fetched from outside: {facts}"
    );
    assert!(facts["text"]
        .as_str()
        .is_some_and(|t| t.contains("VeryLongNamedAggressiveCrawlerBot")));
    // It opens with the verdict and every client in one table, and every
    // chart has its time axis.
    assert!(facts["text"]
        .as_str()
        .is_some_and(|t| t.contains("Every client") && t.contains("broke rules")));
    assert_eq!(facts["axes"].as_u64(), Some(charts.len() as u64), "{facts}");
}
