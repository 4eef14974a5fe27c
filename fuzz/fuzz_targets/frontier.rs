//! Untrusted URLs, Retry-After values and robots.txt pacing through the
//! frontier and the controller: no input may panic, and every URL the
//! frontier accepted is released or reported skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_polite::controller::{Config, Outcome, Politeness, RobotsPacing, UnixMillis};
use mannerly_polite::frontier::{
    block_on, Admission, Frontier, FrontierConfig, Kind, LocalFrontier, Next,
};
use mannerly_polite::key::KeyMode;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let mode = match data.first().map(|b| b % 4) {
        Some(0) => KeyMode::Host,
        Some(1) => KeyMode::HostPort,
        Some(2) => KeyMode::RegisteredDomain,
        _ => KeyMode::Ip,
    };
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            key_mode: mode,
            max_per_key: 8,
            max_total: 64,
            ..FrontierConfig::default()
        },
    );
    let retry = lines.next().unwrap_or("").to_owned();
    let _ = mannerly_time::parse_retry_after(&retry, UnixMillis::from_secs(1_800_000_000));
    let mut accepted = 0u64;
    for (i, line) in lines.by_ref().take(64).enumerate() {
        if let Some(host) = line.strip_prefix("ip ") {
            f.keyer
                .set_address(host, std::net::IpAddr::from([192, 0, 2, (i % 250) as u8]));
            continue;
        }
        if let Ok(Admission::Queued) = block_on(f.enqueue(line, (i % 7) as u8, UnixMillis::EPOCH)) {
            accepted += 1;
        }
    }
    let (mut now, mut pages, mut steps) = (UnixMillis::from_secs(1_800_000_000), 0u64, 0);
    while steps < 10_000 {
        steps += 1;
        match block_on(f.next(now)).expect("memory frontier") {
            Next::Fetch(r) => {
                if r.kind == Kind::Robots {
                    let cd = (retry.len() % 40) as f64;
                    let pacing = RobotsPacing {
                        crawl_delay: Some(cd),
                        request_rate: Some((1, 3)),
                    };
                    let origin = r.url.trim_end_matches("/robots.txt").to_owned();
                    block_on(f.robots_known(&origin, pacing, now.add_millis(1_000_000), now))
                        .expect("memory frontier");
                } else {
                    pages += 1;
                }
                let _ = f.why_not_now(&r.url, now);
                let outcome = Outcome::Status {
                    status: if steps % 3 == 0 { 429 } else { 200 },
                    latency: 10,
                    retry_after: Some(retry.clone()),
                };
                block_on(f.complete(&r, &outcome, now.add_millis(10))).expect("memory frontier");
            }
            Next::Wait { until } => now = until.max(now.add_millis(1)),
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    if steps < 10_000 {
        assert_eq!(pages + f.take_skipped().len() as u64, accepted);
    }
});
