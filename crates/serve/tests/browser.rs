//! The tester page end to end in a real browser: Debian's chromium driven
//! through chromedriver (WebDriver, with `fantoccini`). Pastes a file,
//! types URLs, reads the verdicts and the highlighted line, reads a lint
//! finding under its line, runs a change-impact comparison, and saves a
//! screenshot (`target/ci-artifacts/serve-tester.png`, or
//! `$MANNERLY_ARTIFACTS`).
//!
//! Needs chromium and chromedriver (see `mannerly_testsupport::Browser`).

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use fantoccini::Locator;
use mannerly_serve::{router, ServeConfig};
use mannerly_testsupport::{artifacts, Browser, BROKEN_WORDS_JS};
use serde_json::json;

const FILE: &str = "User-agent: *\nDisallow: /private/\nAllow: /private/ok\nDisalow: /typo\n\nUser-agent: GPTBot\nDisallow: /\n";
const EDITED: &str = "User-agent: *\nCrawl-delay: 5\nDisallow: /\n";

#[tokio::test]
async fn the_tester_page_works_in_chromium() {
    let Some(browser) =
        Browser::start("the browser test", &["--window-size=1200,1600"], json!({})).await
    else {
        return;
    };
    // The server.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    // Identity checked as `mannerly serve` checks it, offline, with
    // Google's ranges given: the log's Googlebot is in them.
    let dir = tempfile::tempdir().expect("tempdir");
    let app = router(ServeConfig {
        identify: Some(common::google_checks(dir.path(), "192.0.2.1/32")),
        ..ServeConfig::default()
    })
    .expect("router");
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await;
    });
    let c = browser.client.clone();
    let result = drive(&c, &format!("http://{addr}/")).await;
    // The screenshot, whatever happened.
    browser.screenshot("serve-tester.png").await;
    let _ = c.close().await;
    if let Err(e) = result {
        panic!("{e}");
    }
}

async fn drive(c: &fantoccini::Client, url: &str) -> Result<(), String> {
    let err = |what: &str| {
        let what = what.to_owned();
        move |e: fantoccini::error::CmdError| format!("{what}: {e}")
    };
    c.goto(url).await.map_err(err("open the page"))?;
    no_empty_headings(c).await?;
    // Paste the file, choose the agent, type URLs.
    let robots = c
        .find(Locator::Id("robots"))
        .await
        .map_err(err("the file box"))?;
    robots.send_keys(FILE).await.map_err(err("type the file"))?;
    let urls = c
        .find(Locator::Id("urls"))
        .await
        .map_err(err("the URL box"))?;
    urls.send_keys("/private/x\n/private/ok\n/public")
        .await
        .map_err(err("type URLs"))?;
    test_as(c, "Googlebot").await?;
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#results tbody tr:nth-child(3)"))
        .await
        .map_err(err("the verdicts"))?;
    let rows = c
        .find_all(Locator::Css("#results tbody tr"))
        .await
        .map_err(err("rows"))?;
    let mut seen = Vec::new();
    for r in rows {
        seen.push(r.text().await.map_err(err("row text"))?);
    }
    let want = [
        ("/private/x", "Disallowed", "line 2: Disallow: /private/"),
        ("/private/ok", "Allowed", "line 3: Allow: /private/ok"),
        ("/public", "Allowed", "no rule matched"),
    ];
    for ((url, verdict, rule), row) in want.iter().zip(&seen) {
        if !(row.contains(url) && row.contains(verdict) && row.contains(rule)) {
            return Err(format!(
                "row for {url}: expected {verdict} / {rule}, the page shows {row:?}"
            ));
        }
    }
    // The first URL's deciding line is highlighted.
    let hit = c
        .find(Locator::Css("#file li.hit"))
        .await
        .map_err(err("the highlighted line"))?;
    let id = hit.attr("id").await.map_err(err("its id"))?;
    if id.as_deref() != Some("L2") {
        return Err(format!("highlighted line {id:?}, expected L2"));
    }
    // Clicking another rule moves the highlight.
    c.find(Locator::Css("#results tbody tr:nth-child(2) button"))
        .await
        .map_err(err("the second rule's button"))?
        .click()
        .await
        .map_err(err("click the rule"))?;
    let id = c
        .find(Locator::Css("#file li.hit"))
        .await
        .map_err(err("the highlight"))?
        .attr("id")
        .await
        .map_err(err("its id"))?;
    if id.as_deref() != Some("L3") {
        return Err(format!(
            "after the click the highlight is {id:?}, expected L3"
        ));
    }
    // The linter's finding stands under line 4.
    let diag = c
        .find(Locator::Css("#L4 .diag"))
        .await
        .map_err(err("the lint finding on line 4"))?
        .text()
        .await
        .map_err(err("its text"))?;
    if !diag.contains("typo-accepted") || !diag.contains("Disallow: /typo") {
        return Err(format!("lint finding on line 4: {diag:?}"));
    }
    // Crawl-delay readings and the rest are listed.
    let extras = c
        .find(Locator::Id("extras"))
        .await
        .map_err(err("extras"))?
        .text()
        .await
        .map_err(err("extras text"))?;
    if !extras.contains("read by google") {
        return Err(format!("extras: {extras:?}"));
    }
    // Change impact.
    c.find(Locator::Id("after"))
        .await
        .map_err(err("the edited-file box"))?
        .send_keys(EDITED)
        .await
        .map_err(err("type the edited file"))?;
    let agents = c
        .find(Locator::Id("impact-agents"))
        .await
        .map_err(err("the agents box"))?;
    agents.clear().await.map_err(err("clear agents"))?;
    agents
        .send_keys("Googlebot, GPTBot")
        .await
        .map_err(err("type agents"))?;
    c.find(Locator::Id("compare"))
        .await
        .map_err(err("the Compare button"))?
        .click()
        .await
        .map_err(err("click Compare"))?;
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#impact tbody tr"))
        .await
        .map_err(err("the changes"))?;
    let status = c
        .find(Locator::Id("impact-status"))
        .await
        .map_err(err("impact status"))?
        .text()
        .await
        .map_err(err("impact status text"))?;
    // Googlebot loses /private/ok and /public; GPTBot is disallowed either way.
    if !status.contains("2 of 6") {
        return Err(format!("change impact: {status:?}"));
    }
    let table = c
        .find(Locator::Id("impact"))
        .await
        .map_err(err("impact table"))?
        .text()
        .await
        .map_err(err("impact text"))?;
    if table.contains("GPTBot") || !table.contains("/public") {
        return Err(format!("change impact table: {table:?}"));
    }
    // Each change says the deciding lines, in force and in the edit.
    if !table.contains("line 3: Allow: /private/ok") || !table.contains("line 3: Disallow: /") {
        return Err(format!("change impact lines: {table:?}"));
    }
    // The edited file is linted, with what Google ignores.
    let lint = c
        .find(Locator::Id("draft-lint"))
        .await
        .map_err(err("the edited file's findings"))?
        .text()
        .await
        .map_err(err("their text"))?;
    if !lint.contains("crawl-delay-ignored-by-google")
        || !lint.contains("Googlebot ignores Crawl-delay")
    {
        return Err(format!("edited file's findings: {lint:?}"));
    }
    inputs_fit(c).await?;
    agent_note(c).await?;
    whatif(c).await?;
    accessible(c).await?;
    big_file(c).await?;
    phone(c).await
}

/// Types `agent` in the agent box and presses Test.
async fn test_as(c: &fantoccini::Client, agent: &str) -> Result<(), String> {
    let err = |what: &str| {
        let what = what.to_owned();
        move |e: fantoccini::error::CmdError| format!("{what}: {e}")
    };
    let field = c
        .find(Locator::Id("agent"))
        .await
        .map_err(err("the agent box"))?;
    field.clear().await.map_err(err("clear the agent"))?;
    field
        .send_keys(agent)
        .await
        .map_err(err("type the agent"))?;
    c.find(Locator::Id("test"))
        .await
        .map_err(err("the Test button"))?
        .click()
        .await
        .map_err(err("click Test"))
}

/// An agent given as a whole User-Agent matches no group meant for it
/// (Google's matcher compares it whole): the page says so and names the
/// token; then the agent is set back.
async fn agent_note(c: &fantoccini::Client) -> Result<(), String> {
    let err = |what: &str| {
        let what = what.to_owned();
        move |e: fantoccini::error::CmdError| format!("{what}: {e}")
    };
    for (agent, want) in [
        (
            "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)",
            "ask for GPTBot",
        ),
        ("Googlebot", "Groups that apply to Googlebot"),
    ] {
        test_as(c, agent).await?;
        let shown = format!("//p[@id='groups'][contains(., '{want}')]");
        let waited = c
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::XPath(&shown))
            .await;
        let groups = c
            .find(Locator::Id("groups"))
            .await
            .map_err(err("the groups line"))?
            .text()
            .await
            .map_err(err("its text"))?;
        if waited.is_err() {
            return Err(format!("agent {agent:?}: the groups line reads {groups:?}"));
        }
        if !groups.contains(want) || (agent == "Googlebot") == groups.contains("Note:") {
            return Err(format!("agent {agent:?}: the groups line reads {groups:?}"));
        }
    }
    Ok(())
}

/// A log excerpt judged under the file and the edit: the bots that came,
/// and how many of their requests the edit would newly refuse.
async fn whatif(c: &fantoccini::Client) -> Result<(), String> {
    let err = |what: &str| {
        let what = what.to_owned();
        move |e: fantoccini::error::CmdError| format!("{what}: {e}")
    };
    // A log file of a few pieces, chosen as a person would.
    let three = "192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] \"GET /public HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 (compatible; Googlebot/2.1)\"\n\
               192.0.2.1 - - [01/Mar/2026:10:00:09 +0000] \"GET /private/ok HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 (compatible; Googlebot/2.1)\"\n\
               192.0.2.2 - - [01/Mar/2026:10:00:10 +0000] \"GET /public HTTP/1.1\" 200 5 \"-\" \"GPTBot/1.2\"\n";
    // 4 MiB by default; `MANNERLY_WHATIF_MIB=100` measures a big one.
    let mib: usize = std::env::var("MANNERLY_WHATIF_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let times = (mib << 20) / three.len() + 1;
    let dir = tempfile::tempdir().map_err(|e| format!("tmp: {e}"))?;
    let path = dir.path().join("access.log");
    std::fs::write(&path, three.repeat(times)).map_err(|e| format!("write the log: {e}"))?;
    c.find(Locator::Id("log-file"))
        .await
        .map_err(err("the file input"))?
        .send_keys(&path.display().to_string())
        .await
        .map_err(err("choose the file"))?;
    c.find(Locator::Id("whatif"))
        .await
        .map_err(err("the judge button"))?
        .click()
        .await
        .map_err(err("click judge"))?;
    let started = std::time::Instant::now();
    c.wait()
        .at_most(Duration::from_secs(60 + 3 * mib as u64))
        .for_element(Locator::Css("#whatif-table tbody tr"))
        .await
        .map_err(err("the bots"))?;
    eprintln!(
        "a {mib} MiB log judged through the page in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let status = c
        .find(Locator::Id("whatif-status"))
        .await
        .map_err(err("what-if status"))?
        .text()
        .await
        .map_err(err("what-if status text"))?;
    let want = format!(
        "{} line(s) read as combined (0 unread), {} bot request(s): {} newly disallowed, 0 newly allowed",
        3 * times,
        3 * times,
        2 * times
    );
    if !status.contains(&want) || !status.contains("Identity checked") {
        return Err(format!(
            "what-if: {status:?}, not {want:?} with identity checked"
        ));
    }
    let table = c
        .find(Locator::Id("whatif-table"))
        .await
        .map_err(err("what-if table"))?
        .text()
        .await
        .map_err(err("what-if text"))?;
    if !table.contains("Googlebot") || table.contains("GPTBot") {
        return Err(format!("what-if table: {table:?}"));
    }
    // Each finding says whose requests they were, and the lines.
    if table.contains("unverified") {
        return Err(format!(
            "what-if: Googlebot's identity not checked: {table:?}"
        ));
    }
    for said in [
        "crawler",
        "verified",
        "from 192.0.2.1",
        "newly disallowed by line 3: Disallow: / (in force: no rule)",
    ] {
        if !table.contains(said) {
            return Err(format!("what-if table lacks {said:?}: {table:?}"));
        }
    }
    // Everything found, saved as JSON.
    c.find(Locator::Id("save"))
        .await
        .map_err(err("the save button"))?
        .click()
        .await
        .map_err(err("click save"))?;
    let saved = c
        .find(Locator::Id("save-status"))
        .await
        .map_err(err("save status"))?
        .text()
        .await
        .map_err(err("save status text"))?;
    if !saved.contains("check") || !saved.contains("whatif") || !saved.contains("edited_lint") {
        return Err(format!("saved: {saved:?}"));
    }
    Ok(())
}

/// Before anything is entered, no heading stands over nothing.
async fn no_empty_headings(c: &fantoccini::Client) -> Result<(), String> {
    let empty = c
        .execute(
            "return [...document.querySelectorAll('h2, h3')]
                .filter(h => h.offsetParent !== null)
                .filter(h => { let n = h.nextElementSibling; return !n || n.offsetParent === null || !n.textContent.trim() && !n.querySelector('input, textarea'); })
                .map(h => h.textContent);",
            vec![],
        )
        .await
        .map_err(|e| format!("headings: {e}"))?;
    match empty.as_array() {
        Some(a) if a.is_empty() => Ok(()),
        _ => Err(format!("headings over nothing: {empty}")),
    }
}

/// At the desktop width the agents' and sitemap's boxes show what they
/// hold.
async fn inputs_fit(c: &fantoccini::Client) -> Result<(), String> {
    let narrow = c
        .execute(
            "return ['impact-agents', 'impact-sitemap', 'origin']
                .map(id => document.getElementById(id))
                .filter(e => e.scrollWidth > e.clientWidth + 1 || e.clientWidth < 300)
                .map(e => e.id + ' ' + e.clientWidth);",
            vec![],
        )
        .await
        .map_err(|e| format!("inputs: {e}"))?;
    match narrow.as_array() {
        Some(a) if a.is_empty() => Ok(()),
        _ => Err(format!("inputs narrower than their content: {narrow}")),
    }
}

/// Every control has a label, every button says what it does, and the
/// test runs from the keyboard alone (focus the URL box, Enter on Test).
async fn accessible(c: &fantoccini::Client) -> Result<(), String> {
    let unlabelled = c
        .execute(
            "return [...document.querySelectorAll('input, textarea, select')]
                .filter(e => e.labels === null || e.labels.length === 0)
                .map(e => e.id || e.name || e.outerHTML);",
            vec![],
        )
        .await
        .map_err(|e| format!("labels: {e}"))?;
    if unlabelled.as_array().is_none_or(|a| !a.is_empty()) {
        return Err(format!("controls without a label: {unlabelled}"));
    }
    let mute = c
        .execute(
            "return [...document.querySelectorAll('button')].filter(b => !b.textContent.trim()).length;",
            vec![],
        )
        .await
        .map_err(|e| format!("buttons: {e}"))?;
    if mute.as_u64() != Some(0) {
        return Err(format!("{mute} buttons without text"));
    }
    // Keyboard: clear the results, focus the Test button, press Enter.
    c.execute(
        "document.querySelector('#results tbody').replaceChildren();
         document.getElementById('test').focus();",
        vec![],
    )
    .await
    .map_err(|e| format!("focus: {e}"))?;
    c.active_element()
        .await
        .map_err(|e| format!("the focused element: {e}"))?
        .send_keys("\u{E007}")
        .await
        .map_err(|e| format!("press Enter: {e}"))?;
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#results tbody tr"))
        .await
        .map_err(|e| format!("Enter on Test ran no test: {e}"))?;
    Ok(())
}

/// A 500 KiB file (pasted through the DOM, as typing it would take
/// minutes) is tested and rendered; the time it took is printed (speed is
/// for benchmarks, not asserts).
async fn big_file(c: &fantoccini::Client) -> Result<(), String> {
    let mut file = String::from("User-agent: *\n");
    let mut n = 0;
    while file.len() < 500 * 1024 - 64 {
        file.push_str(&format!("Disallow: /section-{n}/private/\n"));
        n += 1;
    }
    let started = std::time::Instant::now();
    c.execute(
        "document.getElementById('robots').value = arguments[0];
         document.getElementById('urls').value = '/section-7/private/x';
         document.getElementById('test').click();",
        vec![json!(file)],
    )
    .await
    .map_err(|e| format!("paste the big file: {e}"))?;
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(&format!("#L{}", n + 1)))
        .await
        .map_err(|e| format!("render the big file: {e}"))?;
    let row = c
        .find(Locator::Css("#results tbody tr"))
        .await
        .map_err(|e| format!("the big file's verdict: {e}"))?
        .text()
        .await
        .map_err(|e| format!("its text: {e}"))?;
    if !row.contains("Disallowed") || !row.contains("line 9: Disallow: /section-7/private/") {
        return Err(format!("big file verdict: {row:?}"));
    }
    eprintln!(
        "a {} KiB file ({} lines) tested and rendered in {:.0} ms",
        file.len() / 1024,
        n + 1,
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// On a phone-sized window nothing is wider than the screen.
async fn phone(c: &fantoccini::Client) -> Result<(), String> {
    c.set_window_size(390, 844)
        .await
        .map_err(|e| format!("resize: {e}"))?;
    c.execute(
        "document.getElementById('robots').scrollIntoView();",
        vec![],
    )
    .await
    .map_err(|e| format!("scroll: {e}"))?;
    let widths = c
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth];",
            vec![],
        )
        .await
        .map_err(|e| format!("measure: {e}"))?;
    let (scroll, inner) = (widths[0].as_f64(), widths[1].as_f64());
    // No word is broken inside in the result tables.
    let broken = c
        .execute(
            &format!(
                "{BROKEN_WORDS_JS} return [...document.querySelectorAll('#results, #impact, #whatif-table')].flatMap(brokenWords);"
            ),
            vec![],
        )
        .await
        .map_err(|e| format!("words: {e}"))?;
    if broken.as_array().is_none_or(|a| !a.is_empty()) {
        return Err(format!("words broken inside at 390 px: {broken}"));
    }
    if let Ok(png) = c.screenshot().await {
        let dir = artifacts();
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("serve-tester-phone.png"), png);
    }
    match (scroll, inner) {
        (Some(s), Some(i)) if s <= i + 1.0 => Ok(()),
        _ => Err(format!(
            "on a 390 px wide window the page is {scroll:?} px wide ({inner:?} visible)"
        )),
    }
}
