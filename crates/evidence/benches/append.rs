//! What one evidence record costs the crawler: a record like a crawl's
//! page record, built, serialised, hashed into its host's chain and
//! appended to `records.jsonl`, over 1,000 hosts; and, in the same run,
//! the parts alone (serialising; serialising and hashing).
//!
//! Run: `cargo bench -p mannerly-evidence --bench append`
//! (`MANNERLY_BENCH_RECORDS=N`, default 200,000).

use std::time::Instant;

use mannerly_evidence::{
    Decision, Delay, DelaySource, EvidenceLog, Kind, Record, RobotsState, RobotsUsed,
};
use sha2::Digest;

fn record(i: usize) -> Record {
    let host = format!("h{}.example.test", i % 1000);
    Record {
        time: mannerly_time::UnixMillis(1_790_000_000_000 + i as u64).to_rfc3339_millis(),
        url: format!("http://{host}/section/page-{i}.html"),
        host: host.clone(),
        kind: Kind::Page,
        user_agent: "mannerly-bench/0.1 (+https://example.test/bot)".into(),
        robots: Some(RobotsUsed {
            url: format!("http://{host}/robots.txt"),
            sha256: Some("ab".repeat(32)),
            fetched: Some("2026-11-28T04:00:00.000Z".into()),
            status: Some(200),
            state: RobotsState::Parsed,
            why: None,
        }),
        decision: Some(Decision {
            allowed: true,
            line: Some(3),
            rule: Some("allow: /section/".into()),
        }),
        delay: Delay {
            required_s: 1.0,
            since_previous_s: Some(1.013),
            source: DelaySource::CrawlDelay,
        },
        ..Record::blank()
    }
}

fn main() {
    let n: usize = std::env::var("MANNERLY_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("open");
    let per = |t: Instant| t.elapsed().as_secs_f64() * 1e6 / n as f64;

    let t = Instant::now();
    let mut bytes = 0;
    for i in 0..n {
        bytes += record(i).canonical_bytes().expect("serialises").len();
    }
    let built = per(t);
    let t = Instant::now();
    let mut x = 0u8;
    for i in 0..n {
        x ^= sha2::Sha256::digest(record(i).canonical_bytes().expect("serialises"))[0];
    }
    let hashed = per(t);
    let t = Instant::now();
    for i in 0..n {
        log.append(record(i)).expect("append");
    }
    let appended = per(t);
    println!(
        "evidence append, {n} records over 1,000 hosts ({} B each)",
        bytes / n
    );
    println!("  built and serialised     {built:6.2} µs a record");
    println!("  ... and hashed           {hashed:6.2} µs ({x})");
    println!("  ... and chained, written {appended:6.2} µs");
}
