//! The audit of every real access-log sample in `../shared/logs` (servers,
//! proxies, CDNs), against a robots.txt with a Disallow and a Crawl-delay:
//! no client is blamed that the rules do not govern, no name stands for
//! many addresses, nothing is named by a platform word, and the text,
//! JSON and HTML reports agree.

use mannerly_audit::{
    audit_logs, render, BotKind, Catalogue, Category, Identity, LogSource, Options, RobotsBook,
    Unchecked,
};

/// `../shared`, or `None` with the skip said.
fn shared() -> Option<std::path::PathBuf> {
    let shared = mannerly_testsupport::shared_dir("the access-log samples");
    if shared.is_none() {
        println!("SKIPPED: ../shared not found beside the checkout, so the real logs were not audited (set MANNERLY_SHARED)");
    }
    shared
}

/// One robots.txt for every host.
fn book(robots: &[u8]) -> RobotsBook {
    let mut book = RobotsBook::new();
    book.add(None, None, "robots.txt".into(), robots);
    book
}

#[test]
fn real_logs_blame_only_crawlers_and_each_client_is_itself() {
    let Some(shared) = shared() else {
        return;
    };
    let book = book(b"User-agent: *\nDisallow: /admin\nDisallow: /wp-login.php\nCrawl-delay: 5\n");
    let mut files: Vec<_> = std::fs::read_dir(shared.join("logs"))
        .expect("logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log" || x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let mut clients = 0;
    for path in files {
        let source = LogSource {
            path: path.display().to_string(),
            format: None,
            layout: None,
        };
        let Ok(report) = audit_logs(
            &[source],
            &book,
            Catalogue::builtin(),
            Options::default(),
            &mut Unchecked,
        ) else {
            continue;
        };
        let name = path.display();
        for b in &report.bots {
            clients += 1;
            if b.counts.violations() > 0 {
                assert!(
                    b.kind == BotKind::Crawler || b.identity == Identity::Spoofed,
                    "{name}: {} ({}) blamed",
                    b.token,
                    b.kind.as_str()
                );
            }
            let anyones = matches!(
                b.category,
                None | Some(Category::CrawlerSoftware | Category::SecurityScanner)
            );
            if b.kind.per_address() || anyones {
                assert!(
                    b.clients <= 1,
                    "{name}: {} stands for {} addresses",
                    b.token,
                    b.clients
                );
            }
            let lower = b.token.to_ascii_lowercase();
            assert!(
                ![
                    "x11",
                    "msie",
                    "windows",
                    "linux",
                    "mozilla",
                    "compatible",
                    "spider"
                ]
                .contains(&lower.as_str()),
                "{name}: named {}",
                b.token
            );
        }
        let text = render::text(&report);
        assert!(
            !text.contains(" on -:") && !text.contains(" - /"),
            "{name}:\n{text}"
        );
        let spoofers = report.spoofers().count();
        let html = render::html(&report);
        let breakers = report.rule_breakers().count();
        assert!(
            html.contains(&format!("<b>{breakers}</b>crawlers broke rules")),
            "{name}: the HTML says another count"
        );
        let json = serde_json::to_value(&report).expect("json");
        let spoofed_json = json["bots"]
            .as_array()
            .expect("bots")
            .iter()
            .filter(|b| b["identity"] == "spoofed")
            .count();
        assert_eq!(spoofers, spoofed_json, "{name}");
    }
    println!("{clients} clients judged in the real logs");
    assert!(clients > 20, "{clients}");
}

#[test]
fn a_sites_own_signed_in_users_are_never_blamed_in_the_real_logs() {
    let Some(shared) = shared() else {
        return;
    };
    // Everything disallowed: whoever is judged breaks a rule.
    let book = book(b"User-agent: *\nDisallow: /\n");
    // (sample, requests with accepted credentials): the S3 log's are the
    // bucket owner's console (`S3Console/0.4`, signed with SigV2); nginx's
    // is user123's curl, Caddy's Bob's.
    for (file, signed_in) in [
        ("s3_nekrassov01_contains_unmatch.log", 5),
        ("nginx-combined_crowdsec.log", 1),
        ("caddy-json_crowdsec.jsonl", 1),
    ] {
        let source = LogSource {
            path: shared.join("logs").join(file).display().to_string(),
            format: None,
            layout: None,
        };
        let audit = |options: Options| {
            audit_logs(
                std::slice::from_ref(&source),
                &book,
                Catalogue::builtin(),
                options,
                &mut Unchecked,
            )
            .expect("audits")
        };
        let report = audit(Options::default());
        assert_eq!(report.signed_in_requests, signed_in, "{file}");
        let listed: u64 = report.signed_in.iter().map(|s| s.requests).sum();
        assert_eq!(listed, signed_in, "{file}: listed by User-Agent");
        assert!(
            report.bots.iter().all(|b| b.token != "S3Console"),
            "{file}: the console judged"
        );
        let text = render::text(&report);
        assert!(
            text.contains(&format!("signed in: {signed_in} request")),
            "{file}:\n{text}"
        );
        // A strict audit judges every request as a crawler's, these too.
        let strict = audit(Options {
            strict: true,
            ..Options::default()
        });
        assert_eq!(strict.signed_in_requests, 0, "{file}");
    }
}
