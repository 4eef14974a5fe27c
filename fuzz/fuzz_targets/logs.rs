//! Feeds arbitrary bytes to every access-log line parser (each format, and
//! an nginx `log_format`), to format detection, to the batch reader, and
//! the entries read to the audit: nothing panics, and the reader's lines
//! stay under the cap.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_audit::{Auditor, Catalogue, Options, RobotsBook, Unchecked};
use mannerly_logs::{detect, Format, Lines, Parser, MAX_LINE};

const LOG_FORMAT: &str = r#"$host $remote_addr [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" $sent_http_retry_after $msec"#;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.lines().take(64).collect();
    let mut book = RobotsBook::new();
    book.add(None, None, "r".into(), b"User-agent: *\nDisallow: /p\nCrawl-delay: 1\n");
    let mut auditor = Auditor::new(&book, Catalogue::builtin(), Options::default(), 1);
    let mut parsers: Vec<Parser> = Format::names()
        .filter_map(|n| n.parse::<Format>().ok())
        .filter_map(|f| Parser::new(f).ok())
        .collect();
    parsers.extend(Parser::log_format(LOG_FORMAT).ok());
    parsers.extend(detect(&lines).ok());
    for p in &mut parsers {
        for l in &lines {
            if let Ok(Some(e)) = p.parse(l) {
                auditor.feed(0, &e, &Unchecked);
            }
        }
    }
    let report = auditor.finish();
    let _ = mannerly_audit::render::text(&report);
    let _ = mannerly_audit::render::html(&report);
    let mut reader = Lines::new(data);
    while let Ok(Some(batch)) = reader.next_batch(1) {
        for line in batch.text.split(|b| *b == b'\n') {
            assert!(line.len() <= MAX_LINE);
        }
        // The next batch is read over this one's bytes.
        reader.give_back(batch.text);
    }
});
