//! Every access-log sample in `../shared/logs` is read with its format
//! found by itself, and no line is left unread: the lines that are the
//! server's own messages rather than requests are recognised and skipped.

use mannerly_logs::{detect, open, Format, Lines};

/// What reading a file gave: its format, the entries read, and the
/// numbers of the lines left unread.
fn read(path: &str) -> (Format, usize, Vec<u64>) {
    let (format, read, unread, _) = read_users(path);
    (format, read, unread)
}

/// [`read`], and the entries that name a user the server authenticated.
fn read_users(path: &str) -> (Format, usize, Vec<u64>, usize) {
    let mut lines = Lines::new(open(path).expect("opens"));
    let mut all = Vec::new();
    while let Some(batch) = lines.next_batch(1 << 20).expect("reads") {
        let text = String::from_utf8_lossy(&batch.text).into_owned();
        for (i, l) in text.split('\n').enumerate() {
            all.push((batch.first_line + i as u64, l.to_owned()));
        }
    }
    let first: Vec<&str> = all.iter().take(20).map(|(_, l)| l.as_str()).collect();
    let mut parser = detect(&first).expect("a format is found");
    let (mut read, mut unread, mut users) = (0, Vec::new(), 0);
    for (n, l) in &all {
        match parser.parse(l) {
            Ok(Some(e)) => {
                read += 1;
                users += usize::from(e.user.is_some());
            }
            Ok(None) => {}
            Err(_) => unread.push(*n),
        }
    }
    (parser.format(), read, unread, users)
}

#[test]
fn shared_log_samples() {
    let Some(shared) = mannerly_testsupport::shared_dir("the access-log samples") else {
        println!("SKIPPED: ../shared not found beside the checkout, so the access-log samples were not read (set MANNERLY_SHARED)");
        return;
    };
    // (file, format, lines read, lines left unread and why they may be)
    let expected: &[(&str, Format, usize, &[u64])] = &[
        ("access-missing-ident_lnav.log", Format::Combined, 3, &[]),
        ("alb_crowdsec.log", Format::Alb, 14, &[]),
        // TLS handshakes sent to a plain-HTTP port: read, as requests
        // that were not HTTP.
        ("apache-malformed_crowdsec.log", Format::Combined, 11, &[]),
        // Line 11 is Caddy's reverse proxy talking, not a request: skipped.
        ("caddy-json_crowdsec.jsonl", Format::Caddy, 10, &[]),
        (
            "cloudflare-logpush_lnav_1.jsonl",
            Format::Cloudflare,
            15,
            &[],
        ),
        (
            "cloudflare-logpush_lnav_ripe.jsonl",
            Format::Cloudflare,
            1,
            &[],
        ),
        ("cloudfront_crowdsec.log", Format::CloudFront, 2, &[]),
        ("cloudfront_dpetzold_multiple.log", Format::W3c, 6, &[]),
        // Lines 3-5 are TLS failures HAProxy logs, not requests: skipped.
        ("haproxy_crowdsec.log", Format::Haproxy, 2, &[]),
        (
            "ipv6-compressed-empty-quotes_crowdsec.log",
            Format::Combined,
            5,
            &[],
        ),
        ("ipv6-full-form_crowdsec.log", Format::Combined, 2, &[]),
        // Line 9 is a line of nginx's error log, not a request: skipped.
        ("nginx-combined_crowdsec.log", Format::Combined, 8, &[]),
        // Garbage request lines: read, as requests that were not HTTP.
        ("nginx-malformed_crowdsec.log", Format::Combined, 12, &[]),
        // The "invalid" lines lack trailing fields an audit does not need.
        ("s3_nekrassov01_contains_unmatch.log", Format::S3, 5, &[]),
        ("traefik-clf_crowdsec.log", Format::TraefikClf, 7, &[]),
        // Line 6 is a plugin's debug output, not a request: skipped.
        ("traefik-json_crowdsec.jsonl", Format::TraefikJson, 6, &[]),
    ];
    let mut failures = Vec::new();
    for (file, format, n, unread) in expected {
        let got = read(&shared.join("logs").join(file).to_string_lossy());
        println!("{file}: {} read {}, unread {:?}", got.0, got.1, got.2);
        if got != (*format, *n, unread.to_vec()) {
            failures.push(format!(
                "{file}: got {got:?}, expected {:?}",
                (format, n, unread)
            ));
        }
    }
    let listed = std::fs::read_dir(shared.join("logs"))
        .expect("lists")
        .count()
        - 1;
    assert_eq!(listed, expected.len(), "a sample is not checked");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn shared_log_samples_name_their_signed_in_users() {
    let Some(shared) = mannerly_testsupport::shared_dir("the access-log samples") else {
        println!("SKIPPED: ../shared not found beside the checkout, so the access-log samples were not read (set MANNERLY_SHARED)");
        return;
    };
    // The S3 log's every request was signed by its bucket's owner (the
    // console, SigV2); Caddy's one basic-auth request names Bob, and one
    // of nginx's names user123 (its next line, `- [time]`, names none).
    // No other sample logs a user.
    for entry in std::fs::read_dir(shared.join("logs")).expect("lists") {
        let path = entry.expect("an entry").path();
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
        if file == "README.md" {
            continue;
        }
        let want = match file {
            "s3_nekrassov01_contains_unmatch.log" => 5,
            "caddy-json_crowdsec.jsonl" | "nginx-combined_crowdsec.log" => 1,
            _ => 0,
        };
        let users = read_users(&path.to_string_lossy()).3;
        assert_eq!(users, want, "{file}");
    }
}
