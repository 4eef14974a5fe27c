//! Every crawler graded against the Crawler Best Practices, as the log
//! shows them: REP, an identifiable User-Agent, backing off on 429 and
//! 503, HTTP caching, published ranges, signing. What the log cannot show
//! is "not observable here", never a pass or a fail.

use crate::engine::Identify;
use crate::report::{BotReport, Identity};
pub use crate::report::{Grade, Practice};

fn practice(practice: &'static str, grade: Grade, shown: String) -> Practice {
    Practice {
        practice,
        grade,
        shown,
    }
}

/// What the audit knows of a crawler beyond its report.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    /// Whether robots.txt governs it.
    pub judged: bool,
    /// Whether the audit was given robots.txt, so disallowed paths show.
    pub robots_given: bool,
    /// Its requests that carried a signature.
    pub signed: u64,
    /// Whether the log records signatures at all.
    pub signatures_logged: bool,
}

/// The grades of one crawler's report.
pub fn grade(b: &BotReport, facts: Facts) -> Vec<Practice> {
    let Facts {
        judged,
        robots_given,
        signed,
        signatures_logged,
    } = facts;
    vec![
        rep(b, judged, robots_given),
        identifiable(b),
        back_off(b),
        caching(b),
        ranges(b),
        signing(b, signed, signatures_logged),
    ]
}

fn rep(b: &BotReport, judged: bool, robots_given: bool) -> Practice {
    let c = &b.counts;
    if !judged {
        let why = "robots.txt does not govern it (a person's fetcher or a tool)";
        return practice("rep", Grade::NotObservable, why.into());
    }
    let broke = c.disallowed + c.before_robots + c.while_robots_unavailable;
    if broke > 0 {
        let shown = format!(
            "{} disallowed, {} before reading robots.txt, {} while it was unavailable",
            c.disallowed, c.before_robots, c.while_robots_unavailable
        );
        return practice("rep", Grade::NotMet, shown);
    }
    if !robots_given {
        let why = format!(
            "read robots.txt {} time(s); whether it asked for what robots.txt forbids is not known: no robots.txt given (--robots)",
            c.robots_fetches
        );
        return practice("rep", Grade::NotObservable, why);
    }
    match c.robots_fetches {
        0 => practice(
            "rep",
            Grade::NotObservable,
            "it never read robots.txt here, and asked for nothing robots.txt forbids".into(),
        ),
        n => practice(
            "rep",
            Grade::Met,
            format!("read robots.txt {n} time(s), obeyed it"),
        ),
    }
}

/// Met when a User-Agent names the token and a way to the operator: a
/// page, best; a site without its scheme or a contact address are met too
/// (the Crawler Best Practices ask that the crawler be easily identified,
/// "usually" by a URL), each said as it is.
fn identifiable(b: &BotReport) -> Practice {
    use crate::named::{named, Named};
    if b.user_agents.is_empty() {
        let why = "the log records no User-Agent";
        return practice("identifiable", Grade::NotObservable, why.into());
    }
    let best = b
        .user_agents
        .iter()
        .filter_map(|ua| named(ua).map(|n| (n, ua)))
        .min_by_key(|(n, _)| match n {
            Named::Page(_) => 0,
            Named::Site(_) => 1,
            Named::Contact(_) => 2,
        });
    let token = &b.token;
    let shown = match best {
        Some((Named::Page(_), ua)) => format!("the token {token} and a URL: {ua}"),
        Some((Named::Site(s), ua)) => {
            format!("the token {token} and its site {s}, without http(s)://: {ua}")
        }
        Some((Named::Contact(c), ua)) => {
            format!("the token {token} and a contact address {c}, though no page: {ua}")
        }
        None => {
            let ua = &b.user_agents[0];
            let why = format!("no URL, site or contact address in its User-Agent: {ua}");
            return practice("identifiable", Grade::NotMet, why);
        }
    };
    practice("identifiable", Grade::Met, shown)
}

fn back_off(b: &BotReport) -> Practice {
    let told: u64 = [429, 503].iter().filter_map(|s| b.statuses.get(s)).sum();
    if told == 0 {
        let why = "it was never answered 429 or 503 here";
        return practice("back-off", Grade::NotObservable, why.into());
    }
    match b.counts.ignored_retry_after {
        0 => practice(
            "back-off",
            Grade::Met,
            format!("answered 429 or 503 {told} time(s), it waited as told"),
        ),
        n => {
            let assumed = b.counts.ignored_retry_after_assumed;
            let how = match assumed {
                0 => String::new(),
                a if a == n => "; the log records no Retry-After, so the wait was assumed (--retry-after)".into(),
                a => format!("; {a} of those waits assumed, as the log records no Retry-After (--retry-after)"),
            };
            practice(
                "back-off",
                Grade::NotMet,
                format!("{n} request(s) before the wait a 429 or 503 asked for had passed{how}"),
            )
        }
    }
}

fn caching(b: &BotReport) -> Practice {
    match b.statuses.get(&304) {
        Some(n) => practice(
            "caching",
            Grade::Met,
            format!("{n} conditional request(s) answered 304 Not Modified"),
        ),
        None => practice(
            "caching",
            Grade::NotObservable,
            "no 304 in the log: the site may send no validators, and responses' freshness is not logged".into(),
        ),
    }
}

fn ranges(b: &BotReport) -> Practice {
    match (b.identity, b.verifiable) {
        (Identity::Verified, _) => practice(
            "published-ranges",
            Grade::Met,
            "its requests check out against what its operator publishes".into(),
        ),
        (Identity::Spoofed, _) => practice(
            "published-ranges",
            Grade::NotMet,
            "these requests are outside what its operator publishes: not its operator's".into(),
        ),
        (Identity::Unverified, true) => practice(
            "published-ranges",
            Grade::NotObservable,
            "its operator publishes ranges, but none were at hand (--ip-ranges, or online)".into(),
        ),
        (Identity::Unverified, false) => practice(
            "published-ranges",
            Grade::NotObservable,
            "no published ranges known for it: check its page with `mannerly operator check`"
                .into(),
        ),
    }
}

fn signing(b: &BotReport, signed: u64, logged: bool) -> Practice {
    match (signed, logged, b.identity) {
        (0, false, _) => practice(
            "signed",
            Grade::NotObservable,
            "this log records no Web Bot Auth headers".into(),
        ),
        (0, true, _) => practice(
            "signed",
            Grade::NotMet,
            "its requests carried no signature, where the log shows others'".into(),
        ),
        (n, _, Identity::Verified) => practice(
            "signed",
            Grade::Met,
            format!("{n} signed request(s), verified"),
        ),
        (n, _, _) => practice(
            "signed",
            Grade::NotMet,
            format!("{n} signed request(s), whose signatures did not verify"),
        ),
    }
}

/// Online: asks whether the page each crawler's User-Agent names answers
/// (through `identify`, which bounds and caches the fetches), and grades
/// `identifiable` by it. A page that answers 2xx keeps the grade met; one
/// that answers 4xx (gone, forbidden) makes it not met; a 5xx or a page
/// that could not be reached from here leaves the grade to the User-Agent,
/// with the reason said: an outage on either side accuses no one.
pub fn check_pages(report: &mut crate::report::Report, identify: &mut dyn Identify) {
    let mut pages: Vec<String> = Vec::new();
    for b in &report.bots {
        if let Some(page) = page_of(b) {
            if !pages.iter().any(|p| p == page) {
                pages.push(page.to_owned());
            }
        }
    }
    if pages.is_empty() {
        return;
    }
    let answers = identify.pages_answer(&pages);
    for b in &mut report.bots {
        let Some(i) = page_of(b).and_then(|page| pages.iter().position(|p| p == page)) else {
            continue;
        };
        let Some(answer) = answers.get(i).cloned().flatten() else {
            continue;
        };
        if let Some(p) = b
            .practices
            .iter_mut()
            .find(|p| p.practice == "identifiable")
        {
            answered(p, &pages[i], answer);
        }
    }
}

/// The page the first User-Agent of a report that names one names.
fn page_of(b: &BotReport) -> Option<&str> {
    b.user_agents
        .iter()
        .find_map(|ua| mannerly_robots::page_named(ua))
}

/// Revises an `identifiable` grade by what its page answered.
fn answered(p: &mut Practice, page: &str, answer: Result<u16, String>) {
    match answer {
        Ok(s) if (200..300).contains(&s) => {
            p.shown = format!("{}; its page answered {s}", p.shown);
        }
        Ok(s) if (400..500).contains(&s) => {
            p.grade = Grade::NotMet;
            p.shown = format!("its page {page} answered {s}: nothing there says who it is");
        }
        Ok(s) => {
            p.shown = format!(
                "{}; its page answered {s} here (not held against it)",
                p.shown
            )
        }
        Err(e) => {
            p.shown = format!("{}; its page could not be asked from here: {e}", p.shown);
        }
    }
}
