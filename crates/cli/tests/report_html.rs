//! The audit's HTML report as a site owner reads it, in a real browser
//! (Debian's chromium through chromedriver) at a desktop's width (1280 px)
//! and a phone's (390 px): on a generated day of a small site's log (about
//! 6,000 lines, 60 and more clients of every kind) and on every sample in
//! `../shared/logs`. The first screen answers (counters, a chart by kind,
//! the worst offenders, the inputs), every client is in one table, cards
//! are folded but the rule-breakers', the page never scrolls sideways, no
//! word is broken inside, and the page is at most six screens tall at
//! 1280 px. Screenshots are kept (`target/ci-artifacts/`, or
//! `$MANNERLY_ARTIFACTS`).

mod common;
#[path = "report/shape.rs"]
mod shape;

use std::path::{Path, PathBuf};

use mannerly_testsupport::{Browser, BROKEN_WORDS_JS};
use serde_json::{json, Value};

/// Audits `log` (offline, Google's and Bing's ranges given) into an HTML
/// report in `dir`; its path.
fn report(dir: &Path, log: &Path, name: &str) -> PathBuf {
    let robots = dir.join("robots.txt");
    std::fs::write(&robots, shape::ROBOTS).expect("robots");
    let google = dir.join("google.json");
    std::fs::write(&google, shape::GOOGLE_RANGES).expect("ranges");
    let bing = dir.join("bing.json");
    std::fs::write(&bing, shape::BING_RANGES).expect("ranges");
    let html = dir.join(format!("{name}.html"));
    let o = common::mannerly(
        &[
            "audit",
            log.to_str().expect("utf-8"),
            "--robots",
            robots.to_str().expect("utf-8"),
            "--ip-ranges",
            &format!("Googlebot={}", google.display()),
            "--ip-ranges",
            &format!("bingbot={}", bing.display()),
            "--offline",
            "--html",
            html.to_str().expect("utf-8"),
        ],
        b"",
    );
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Kept beside the screenshots, to be read.
    let kept = mannerly_testsupport::artifacts();
    let _ = std::fs::create_dir_all(&kept);
    let _ = std::fs::copy(&html, kept.join(format!("report-{name}.html")));
    html
}

/// What the page shows, measured in the browser (after `BROKEN_WORDS_JS`):
/// its size against the window's, words broken across lines, the counters,
/// folded and open cards, the sections.
const MEASURE: &str = r##"
const broken = brokenWords(document.body);
const text = document.body.innerText;
return {
  width: window.innerWidth, height: window.innerHeight,
  scroll_width: document.documentElement.scrollWidth,
  scroll_height: document.documentElement.scrollHeight,
  broken: broken.slice(0, 20),
  counters: document.querySelectorAll('.counters .counter').length,
  folded: document.querySelectorAll('details.card:not([open])').length,
  open: document.querySelectorAll('details.card[open]').length,
  rows: document.querySelectorAll('#clients tbody tr').length,
  links: document.querySelectorAll('#clients tbody a[href^="#"]').length,
  dangling: Array.from(document.querySelectorAll('a[href^="#"]')).filter(a => !document.getElementById(a.getAttribute('href').slice(1))).length,
  spoofers: !!document.getElementById('spoofers'),
  offenders: document.querySelectorAll('#offenders li').length,
  kind_chart: document.querySelectorAll('#by-kind svg').length,
  inputs: !!document.getElementById('inputs'),
  resources: performance.getEntriesByType('resource').length,
  sections: Array.from(document.querySelectorAll('h2')).map(h => h.innerText.slice(0, 24) + ' @' + Math.round(h.getBoundingClientRect().top + window.scrollY)),
  text: text,
};
"##;

async fn measure(browser: &Browser, page: &Path, shot: &str) -> Value {
    let c = &browser.client;
    c.goto(&format!("file://{}", page.display()))
        .await
        .expect("loads");
    let script = format!("{BROKEN_WORDS_JS}{MEASURE}");
    let facts = c.execute(&script, vec![]).await.expect("runs");
    browser.screenshot(shot).await;
    facts
}

/// What holds at any width.
fn check_any_width(f: &Value, what: &str) {
    let width = f["width"].as_f64().expect("width");
    assert!(
        f["scroll_width"].as_f64().expect("scroll") <= width + 1.0,
        "{what}: the page scrolls sideways: {}",
        without_text(f)
    );
    assert_eq!(f["broken"], json!([]), "{what}: words broken inside");
    assert_eq!(f["resources"], 0, "{what}: nothing fetched from outside");
    assert_eq!(f["dangling"], 0, "{what}: every link has its target");
    assert!(
        f["inputs"].as_bool() == Some(true),
        "{what}: the inputs are said"
    );
}

fn without_text(f: &Value) -> Value {
    let mut f = f.clone();
    f["text"] = Value::Null;
    f
}

async fn browser_at(width: u32, height: u32) -> Option<Browser> {
    let options = json!({"mobileEmulation": {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 1}}});
    Browser::start("the audit report's browser test", &[], options).await
}

#[tokio::test]
async fn the_report_of_a_real_days_shape_answers_on_its_first_screen() {
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("access.log");
    let text = shape::log();
    assert!(
        (5_500..6_600).contains(&text.lines().count()),
        "{}",
        text.lines().count()
    );
    std::fs::write(&log, text).expect("log");
    let page = report(dir.path(), &log, "day");
    for (width, height) in [(1280, 800), (390, 844)] {
        let Some(browser) = browser_at(width, height).await else {
            return;
        };
        let f = measure(&browser, &page, &format!("report-day-{width}.png")).await;
        let what = format!("{width} px");
        // The first open card, and the table, for whoever reads the
        // screenshots.
        for (sel, shot) in [
            ("details.card[open]", "cards"),
            ("#clients", "table"),
            (".folded", "folded"),
        ] {
            let js = format!("document.querySelector('{sel}').scrollIntoView(); return 0;");
            let _ = browser.client.execute(&js, vec![]).await;
            browser
                .screenshot(&format!("report-day-{width}-{shot}.png"))
                .await;
        }
        check_any_width(&f, &what);
        let short = without_text(&f);
        assert!(f["counters"].as_u64() >= Some(6), "{what}: {short}");
        assert_eq!(f["kind_chart"], 1, "{what}: {short}");
        assert!(f["offenders"].as_u64() >= Some(3), "{what}: {short}");
        assert!(f["spoofers"].as_bool() == Some(true), "{what}: {short}");
        assert!(
            f["rows"].as_u64() >= Some(60),
            "{what}: every client in the table: {short}"
        );
        assert!(f["folded"].as_u64() >= Some(5), "{what}: {short}");
        assert!(f["links"].as_u64() >= Some(10), "{what}: {short}");
        eprintln!(
            "{what}: {} px tall ({:.2} screens), {} clients in the table, {} cards folded, {} open",
            f["scroll_height"],
            f["scroll_height"].as_f64().unwrap_or(0.0) / f64::from(height),
            f["rows"],
            f["folded"],
            f["open"]
        );
        if width == 1280 {
            let screens = f["scroll_height"].as_f64().unwrap_or(0.0) / f64::from(height);
            assert!(screens <= 6.0, "{what}: {screens:.1} screens tall: {short}");
        }
        let text = f["text"].as_str().unwrap_or("");
        for said in [
            "identity checked offline",
            "robots.txt",
            "Googlebot",
            "GPTBot",
        ] {
            assert!(text.contains(said), "{what}: {said:?} missing");
        }
        let _ = browser.client.clone().close().await;
    }
}

#[tokio::test]
async fn every_shared_log_sample_reads_at_both_widths() {
    let Some(shared) = mannerly_testsupport::shared_dir("the log samples") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let mut pages = Vec::new();
    let mut samples: Vec<PathBuf> = std::fs::read_dir(shared.join("logs"))
        .expect("logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log" || x == "jsonl"))
        .collect();
    samples.sort();
    for s in &samples {
        let name = s
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("log")
            .to_owned();
        pages.push((name.clone(), report(dir.path(), s, &name)));
    }
    assert!(pages.len() >= 10, "{samples:?}");
    for (width, height) in [(1280, 800), (390, 844)] {
        let Some(browser) = browser_at(width, height).await else {
            return;
        };
        for (name, page) in &pages {
            let f = measure(&browser, page, &format!("report-{name}-{width}.png")).await;
            check_any_width(&f, &format!("{name} at {width} px"));
        }
        let _ = browser.client.clone().close().await;
    }
}
