//! Every crawler graded against the Crawler Best Practices, as the log
//! shows them: REP, an identifiable User-Agent, backing off on 429 and
//! 503, HTTP caching, published ranges, signing. What the log cannot show
//! is "not observable here", never a pass or a fail.

use crate::report::{BotReport, Identity};
pub use crate::report::{Grade, Practice};

fn practice(practice: &'static str, grade: Grade, shown: String) -> Practice {
    Practice {
        practice,
        grade,
        shown,
    }
}

/// The grades of one crawler's report. `judged`: robots.txt governs it;
/// `signed`: its requests that carried a signature; `signatures_logged`:
/// whether the log records signatures at all.
pub fn grade(b: &BotReport, judged: bool, signed: u64, signatures_logged: bool) -> Vec<Practice> {
    vec![
        rep(b, judged),
        identifiable(b),
        back_off(b),
        caching(b),
        ranges(b),
        signing(b, signed, signatures_logged),
    ]
}

fn rep(b: &BotReport, judged: bool) -> Practice {
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

fn identifiable(b: &BotReport) -> Practice {
    let with_url = |ua: &&String| ua.contains("http://") || ua.contains("https://");
    match b.user_agents.iter().find(with_url) {
        _ if b.user_agents.is_empty() => practice(
            "identifiable",
            Grade::NotObservable,
            "the log records no User-Agent".into(),
        ),
        Some(ua) => practice(
            "identifiable",
            Grade::Met,
            format!("the token {} and a URL: {ua}", b.token),
        ),
        None => practice(
            "identifiable",
            Grade::NotMet,
            format!("no URL in its User-Agent: {}", b.user_agents[0]),
        ),
    }
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
        n => practice(
            "back-off",
            Grade::NotMet,
            format!("{n} request(s) before the Retry-After it was given had passed"),
        ),
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
