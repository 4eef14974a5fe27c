//! `mannerly crawl` and `mannerly demo` end to end: the demo's politeness
//! audit (computed from the simulated web's own request log) finds no
//! violation, and usage errors exit 2 with a message.

mod common;
use common::mannerly;

#[test]
fn the_demo_crawl_is_polite_by_the_servers_own_log() {
    let out = std::env::temp_dir().join(format!("mannerly-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = mannerly(
        &[
            "demo",
            "--hosts",
            "25",
            "--min-delay",
            "0.2",
            "--out",
            out.to_str().expect("utf-8 path"),
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("violations: 0"), "{stdout}");
    assert!(
        stdout.contains("hosts whose first request was not robots.txt: 0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("down.test/robots.txt unavailable: 503"),
        "{stdout}"
    );
    assert!(out.join("log.jsonl").exists() && out.join("warc").is_dir());
    every_record_is_in_the_warc_beside_its_request(&out);
    // A host whose Crawl-delay is over the maximum is skipped, and its
    // URLs are logged as such.
    let log = std::fs::read_to_string(out.join("log.jsonl")).expect("log");
    assert!(
        log.lines()
            .any(|l| l.contains("host-skipped") && l.contains("glacial.test")),
        "{log}"
    );
    // A second demo into the same directory would take up the finished
    // crawl and fetch nothing: it is refused, naming the directory.
    let again = mannerly(
        &[
            "demo",
            "--hosts",
            "3",
            "--out",
            out.to_str().expect("utf-8 path"),
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert!(
        err.contains(out.to_str().expect("utf-8 path")) && err.contains("holds an earlier crawl"),
        "{err}"
    );
    // --status reads what the crawl wrote of itself.
    let st = mannerly(
        &["crawl", "--status", out.to_str().expect("utf-8 path")],
        b"",
    );
    let text = String::from_utf8_lossy(&st.stdout);
    assert_eq!(st.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ended: gave-up") && text.contains("down.test/robots.txt unavailable"),
        "{text}"
    );
    // The hosts holding the most URLs, each with why it waits.
    let busiest = text
        .split("hosts holding the most URLs:")
        .nth(1)
        .unwrap_or_else(|| panic!("no busiest hosts: {text}"));
    assert!(
        busiest.contains("down.test") && busiest.contains("robots.txt: 503"),
        "{text}"
    );
    assert!(
        stdout.contains("waiting on robots.txt unavailable (each in the log)"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Each line of `evidence/records.jsonl` is in the WARC once, in a
/// `metadata` batch whose `WARC-Concurrent-To` for that line names a
/// `request` record for the record's URL.
fn every_record_is_in_the_warc_beside_its_request(crawl: &std::path::Path) {
    use std::io::Read;
    let mut text = String::new();
    let mut files: Vec<_> = std::fs::read_dir(crawl.join("warc"))
        .expect("warc dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        flate2::read::MultiGzDecoder::new(std::fs::File::open(f).expect("warc"))
            .read_to_string(&mut text)
            .expect("gzip");
    }
    let field = |head: &str, name: &str| -> Vec<String> {
        head.split("\r\n")
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
            .map(str::to_owned)
            .collect()
    };
    let mut requests = std::collections::HashMap::new();
    let mut archived = Vec::new();
    let mut rest = text.as_str();
    while let Some(r) = rest.strip_prefix("WARC/1.1\r\n") {
        let (head, after) = r.split_once("\r\n\r\n").expect("a record's head");
        let len: usize = field(head, "Content-Length")[0].parse().expect("length");
        let block = &after[..len];
        rest = &after[len + 4..];
        match field(head, "WARC-Type")[0].as_str() {
            "request" => {
                let id = field(head, "WARC-Record-ID").concat();
                requests.insert(id, field(head, "WARC-Target-URI").concat());
            }
            "metadata" => {
                let named = field(head, "WARC-Concurrent-To");
                assert_eq!(named.len(), block.lines().count(), "{head}");
                archived.extend(block.lines().map(str::to_owned).zip(named));
            }
            _ => {}
        }
    }
    let written = std::fs::read_to_string(crawl.join("evidence/records.jsonl")).expect("records");
    let mut written: Vec<&str> = written.lines().collect();
    assert!(written.len() > 100, "{} records", written.len());
    for (line, request) in &archived {
        let record: serde_json::Value = serde_json::from_str(line).expect("a record");
        assert_eq!(
            requests.get(request),
            record["url"].as_str().map(str::to_owned).as_ref()
        );
    }
    let mut archived: Vec<&str> = archived.iter().map(|(l, _)| l.as_str()).collect();
    written.sort_unstable();
    archived.sort_unstable();
    assert_eq!(archived, written, "the WARC holds every record, once");
}

#[test]
fn crawl_usage_errors_say_what_is_missing() {
    // Each is refused with exit 2, the message saying what was wrong.
    let refused = |args: &[&str], says: &str| {
        let o = mannerly(args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{o:?}");
    };
    refused(&["crawl", "https://example.com/"], "--out DIR");
    let dir = std::env::temp_dir().join(format!("mannerly-no-crawl-{}", std::process::id()));
    let out = dir.to_str().expect("utf-8");
    refused(&["crawl", "--resume", out], "no crawl there");
    refused(
        &["crawl", "--out", out, "mailto:x@example.com"],
        "only http and https",
    );
    let web = "https://example.com/";
    refused(
        &[
            "crawl",
            "--out",
            out,
            "--content-types",
            "text/html,pdf",
            web,
        ],
        "'pdf' is not a media type",
    );
    refused(
        &["crawl", "--out", out, "--threads", "0", web],
        "'--threads <N>': 0 is too few: give 1 or more",
    );
    // A delay is seconds from 0 to a day: never a panic on one too long
    // for a duration, a negative one is not read as a flag.
    for (delay, says) in [
        ("1e20", "longer than a day"),
        ("86401", "longer than a day"),
        ("-1", "not a number of seconds from 0 to 86400"),
        ("NaN", "not a number of seconds"),
        ("inf", "not a number of seconds"),
    ] {
        refused(&["crawl", "--out", out, "--min-delay", delay, web], says);
        refused(&["demo", "--min-delay", delay], says);
    }
    // The audit's spans of time are read the same way (a day at most),
    // never a panic or a float's error for 1e99.
    for flag in [
        "--retry-after",
        "--min-gap",
        "--slack",
        "--window",
        "--evidence-skew",
    ] {
        refused(&["audit", flag, "1e99", "access.log"], "longer than a day");
        refused(
            &["audit", flag, "-1", "access.log"],
            "not a number of seconds",
        );
    }
    refused(
        &["crawl", "--out", out, "--concurrency", "0", web],
        "0 is not in 1..",
    );
    refused(&["demo", "--concurrency", "0"], "0 is not in 1..");
    // Counts that must be at least one say so, not the type's range.
    for flag in [
        "--open-hosts",
        "--max-pages",
        "--max-pages-per-host",
        "--max-bytes",
        "--warc-max-size",
    ] {
        refused(
            &["crawl", "--out", out, flag, "0", web],
            "0 is too few: give 1 or more",
        );
    }
    refused(
        &["serve", "--rate-limit", "0"],
        "0 is too few: give 1 or more",
    );
    refused(
        &["serve", "--max-body", "0"],
        "0 is too few: give 1 or more",
    );
    let url_as_host = [
        "audit",
        "--robots",
        "https://example.com=robots.txt",
        "access.log",
    ];
    refused(&url_as_host, "give its name alone: example.com=FILE");
    let socks = [
        "crawl",
        "--out",
        out,
        "--proxy",
        "socks5://127.0.0.1:1080",
        web,
    ];
    refused(&socks, "only http:// and https:// proxies");
    refused(
        &["crawl", "--out", out, "--agent", " ", web],
        "name the product token",
    );
    refused(&["serve", "--timeout", "0"], "0 is not in 1..=3600");
    refused(&["fetch", "--timeout", "0", web], "0 is not in 1..=3600");
    for frontier in ["127.0.0.1:6379", "http://127.0.0.1:6379/"] {
        let args = ["crawl", "--out", out, "--frontier", frontier, web];
        refused(&args, "is not a Redis URL: give redis://HOST:PORT/");
    }
    // A User-Agent no header can hold is refused by name before anything
    // is written, not by the HTTP client's "builder error".
    for cmd in [&["crawl", "--out", out][..], &["fetch"][..]] {
        let ua = "OpBot/1.0 (+https://op.example/bot)\nX-Evil: 1";
        let args = [cmd, &["--user-agent", ua, web]].concat();
        refused(&args, "control character '\\n' at byte 35");
        let args = [cmd, &["--user-agent", " ", web]].concat();
        refused(&args, "a User-Agent cannot be blank");
    }
    assert!(!dir.exists(), "a refused crawl leaves no directory");
    // A User-Agent that does not name its crawler with a token and a URL
    // (Crawler Best Practices), with what a good one looks like.
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
    for (ua, lacks) in [
        ("OpBot/1.0", "lacks an http(s) URL"),
        ("OpBot/1.0 (mailto:op@example.com)", "lacks an http(s) URL"),
        (
            chrome,
            "lacks a product token of its own and an http(s) URL",
        ),
        (
            "Mozilla/5.0 (+https://op.example/bot)",
            "lacks a product token of its own",
        ),
    ] {
        refused(&["crawl", "--out", out, "--user-agent", ua, web], lacks);
        refused(
            &["crawl", "--out", out, "--user-agent", ua, web],
            "ExampleBot/1.0 (+https://example.com/bot)",
        );
    }
    // A page written without its scheme is named, with what to write.
    refused(
        &[
            "crawl",
            "--out",
            out,
            "--user-agent",
            "OpBot/1.0 (+op.example/bot)",
            web,
        ],
        "`op.example/bot` lacks its scheme: write `+https://op.example/bot`",
    );
    // --anonymous-ok lets it by; a browser's words still need --agent.
    refused(
        &[
            "crawl",
            "--out",
            out,
            "--anonymous-ok",
            "--user-agent",
            chrome,
            web,
        ],
        "give --agent TOKEN",
    );
    // Each failure said once, with what and where; nothing left behind.
    let once = |args: &[&str], says: &str| {
        let o = mannerly(args, b"");
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {said}");
        assert_eq!(said.matches(says).count(), 1, "{args:?}: {said}");
    };
    once(
        &["crawl", "--out", out, "--proxy", "http://127.0.0.1:1", web],
        "--proxy http://127.0.0.1:1: the proxy does not answer",
    );
    once(
        &[
            "crawl",
            "--out",
            out,
            "--frontier",
            "redis://127.0.0.1:1/",
            web,
        ],
        "Connection refused",
    );
    once(
        &["crawl", "--out", "/proc/mannerly-no/x", web],
        "No such file or directory",
    );
    let key = std::env::temp_dir().join(format!("mannerly-not-a-key-{}", std::process::id()));
    let k = key.to_str().expect("utf-8");
    std::fs::write(&key, "hello\n").expect("key");
    once(
        &["crawl", "--out", out, "--sign-key", k, web],
        "not a PEM file",
    );
    std::fs::write(
        &key,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n",
    )
    .expect("key");
    once(
        &["crawl", "--out", out, "--sign-key", k, web],
        "an RSA private key, not Ed25519",
    );
    let _ = std::fs::remove_file(&key);
    once(
        &["crawl", "--out", out, "--sign-key", k, web],
        "cannot read --sign-key",
    );
    // Every seed bad: each named with its line, and an error.
    let seeds = std::env::temp_dir().join(format!("mannerly-bad-seeds-{}", std::process::id()));
    std::fs::write(&seeds, "this is garbage\nftp://x.test/\nhttp://[::1\n").expect("seeds");
    let s = seeds.to_str().expect("utf-8");
    let o = mannerly(&["crawl", "--out", out, "--seeds", s], b"");
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{said}");
    for (line, why) in [
        (1, "is not a URL"),
        (2, "only http and https"),
        (3, "invalid IPv6 address"),
    ] {
        assert!(
            said.contains(&format!("{s}:{line}: seed")) && said.contains(why),
            "{said}"
        );
    }
    assert!(said.contains("all 3 rejected"), "{said}");
    assert!(
        !dir.exists(),
        "nothing is created for a crawl that cannot start"
    );
    // Some good: the crawl runs, and the summary lists the rejected.
    std::fs::write(&seeds, "http://127.0.0.1:1/\nthis is garbage\n").expect("seeds");
    let o = mannerly(
        &[
            "crawl",
            "--out",
            out,
            "--seeds",
            s,
            "--json",
            "--give-up-after",
            "1",
            "--timeout",
            "1",
            "--retries",
            "0",
        ],
        b"",
    );
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON summary");
    assert_eq!(
        summary["rejected_seeds"][0]["at"],
        format!("{s}:2"),
        "{summary}"
    );
    assert_eq!(summary["rejected_seeds"][0]["seed"], "this is garbage");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&seeds);
}

#[test]
fn the_demo_audits_another_crawler_from_the_servers_log() {
    let bin = env!("CARGO_BIN_EXE_mannerly");
    let dir = std::env::temp_dir().join(format!("mannerly-demo-ext-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_str().expect("utf-8 path");
    // A rude client: straight to a disallowed page, no robots.txt first.
    let rude = "import os, urllib.request as u\n\
        o = u.build_opener(u.ProxyHandler({'http': os.environ['MANNERLY_DEMO_PROXY']}))\n\
        o.open('http://site0.test/p7.html').read()\n";
    let o = mannerly(
        &[
            "demo", "--hosts", "3", "--json", "--out", out, "--", "python3", "-c", rude,
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "violations exit 1: {text}");
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON document");
    assert_eq!(v["disallowed"], 1, "{v}");
    assert_eq!(v["robots_not_first"], 1, "{v}");
    assert_eq!(v["external"]["exit"], 0, "{v}");
    // This crawler, run the same way, breaks no rule.
    let crawl_out = dir.join("crawl");
    let o = mannerly(
        &[
            "demo",
            "--hosts",
            "3",
            "--min-delay",
            "0.2",
            "--json",
            "--out",
            out,
            "--",
            "sh",
            "-c",
            "exec \"$0\" crawl --proxy \"$MANNERLY_DEMO_PROXY\" --seeds \"$MANNERLY_DEMO_SEEDS\" \
         --min-delay \"$MANNERLY_DEMO_DELAY\" --give-up-after 1 --out \"$1\" >/dev/null",
            bin,
            crawl_out.to_str().expect("utf-8 path"),
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON document");
    assert_eq!(v["violations"], 0, "{v}");
    assert!(v["pages"].as_u64().is_some_and(|p| p > 10), "{v}");
    assert!(v["external"]["cpu_seconds"].as_f64().is_some(), "{v}");
    // A crawler that fails broke no rule it had no time to break: the
    // demo still exits 1, its exit status in the report.
    let failed = [
        "demo", "--hosts", "3", "--json", "--out", out, "--", "sh", "-c", "exit 3",
    ];
    let o = mannerly(&failed, b"");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON document");
    assert_eq!(
        (v["violations"].as_u64(), v["external"]["exit"].as_i64()),
        (Some(0), Some(3)),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crawl without --user-agent goes out under the shared default, whose
/// page does not exist: it says so, and how to name the crawler; a crawl
/// that names itself hears nothing of it. (The closed port as a proxy
/// ends both before any request.)
#[test]
fn the_default_user_agent_is_called_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("c");
    let out = out.to_str().expect("utf-8 path");
    let base = ["crawl", "--out", out, "--proxy", "http://127.0.0.1:1"];
    let o = mannerly(&[&base[..], &["http://a.test/"]].concat(), b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: that is the default User-Agent") && err.contains("--user-agent"),
        "{err}"
    );
    let named = ["--user-agent", "OwnBot/1.0 (+https://own.example/bot)"];
    let o = mannerly(&[&base[..], &named[..], &["http://a.test/"]].concat(), b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("crawling as \"OwnBot/1.0"), "{err}");
    assert!(!err.contains("default User-Agent"), "{err}");
}
