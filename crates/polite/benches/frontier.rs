//! Frontier throughput and peak memory at 1 M and 10 M URLs over 100,000
//! hosts, in memory and on disk.
//!
//! Each configuration runs in a child process of this binary, so its peak
//! RSS (`VmHWM`) is its own. A run enqueues every URL (hosts interleaved,
//! four priorities), then, on disk, syncs, closes and reopens the store
//! (what a restart after a crash costs), then releases and completes every
//! URL on a fake clock (each host's 1 s delay holds; nothing sleeps). The
//! per-release figure is the scheduling overhead a crawler pays per fetch:
//! `next` + `complete`, including the store's write batches on disk.
//!
//! Every call goes through the [`Frontier`] trait (its futures driven by
//! `testing::block_on`), so the figures include what the async contract
//! costs the in-process backend.
//!
//! Run: `cargo bench -p mannerly-polite --bench frontier`
//! (`MANNERLY_BENCH_SIZES=1000000` for the 1 M runs only).

use std::process::Command;
use std::time::Instant;

use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
use mannerly_polite::frontier::{Admission, Frontier, FrontierConfig, LocalFrontier, Next};
use mannerly_polite::testing::block_on;

const HOSTS: u64 = 100_000;

fn config() -> FrontierConfig {
    FrontierConfig {
        robots_gate: false,
        max_total: u64::MAX,
        max_keys: u64::MAX,
        ..FrontierConfig::on_disk()
    }
}

fn open(mode: &str, dir: &std::path::Path) -> LocalFrontier {
    let p = Politeness::new(Config::default());
    match mode {
        "memory" => LocalFrontier::in_memory(p, config()),
        _ => LocalFrontier::open(dir, p, config()).expect("open"),
    }
}

/// Prints `enqueue_s reopen_s release_s peak_kb disk_bytes`.
fn child(mode: &str, urls: u64) {
    let dir = std::env::temp_dir().join(format!("mannerly-frontier-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut f = open(mode, &dir);
    let t = Instant::now();
    for i in 0..urls {
        let url = format!("https://h{}.example/dir/page-{}.html", i % HOSTS, i / HOSTS);
        let a = block_on(Frontier::enqueue(
            &mut f,
            &url,
            (i % 4) as u8,
            UnixMillis::EPOCH,
        ))
        .expect("enqueue");
        assert_eq!(a, Admission::Queued, "{url}");
    }
    let enqueue = t.elapsed().as_secs_f64();
    let mut reopen = 0.0;
    if mode == "disk" {
        block_on(Frontier::sync(&mut f)).expect("sync");
        drop(f);
        let t = Instant::now();
        f = open(mode, &dir);
        reopen = t.elapsed().as_secs_f64();
    }
    let ok = Outcome::Status {
        status: 200,
        latency: 100,
        retry_after: None,
    };
    let t = Instant::now();
    let (mut now, mut released) = (UnixMillis::EPOCH, 0u64);
    loop {
        match block_on(Frontier::next(&mut f, now)).expect("next") {
            Next::Fetch(r) => {
                block_on(Frontier::complete(&mut f, &r, &ok, now)).expect("complete");
                released += 1;
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    let release = t.elapsed().as_secs_f64();
    assert_eq!(released, urls);
    block_on(Frontier::sync(&mut f)).expect("sync");
    drop(f);
    let disk = dir_size(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{enqueue} {reopen} {release} {} {disk}",
        mannerly_testsupport::peak_rss_kb()
    );
}

fn dir_size(p: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let mode = &args[i + 1];
        let urls: u64 = args[i + 2].parse().expect("urls");
        child(mode, urls);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let sizes: Vec<u64> = std::env::var("MANNERLY_BENCH_SIZES")
        .unwrap_or_else(|_| "1000000,10000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let exe = std::env::current_exe().expect("exe");
    println!("frontier: {HOSTS} hosts, 1 s delay each, fake clock; enqueue, then release + complete every URL");
    println!(
        "{:<7} {:>11} {:>14} {:>18} {:>14} {:>10} {:>10} {:>9}",
        "backend",
        "URLs",
        "enqueue URL/s",
        "release+done URL/s",
        "ns per release",
        "reopen s",
        "peak MiB",
        "disk MiB"
    );
    for &urls in &sizes {
        for mode in ["memory", "disk"] {
            let out = Command::new(&exe)
                .args(["--child", mode, &urls.to_string()])
                .output()
                .expect("child");
            if !out.status.success() {
                println!(
                    "{mode:<7} {urls:>11} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                );
                continue;
            }
            let line = String::from_utf8_lossy(&out.stdout);
            let v: Vec<f64> = line
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            let [enq, reopen, rel, peak, disk] = v[..] else {
                println!("{mode:<7} {urls:>11} bad child output: {line}");
                continue;
            };
            let n = urls as f64;
            println!(
                "{mode:<7} {urls:>11} {:>14.0} {:>18.0} {:>14.0} {:>10} {:>10.0} {:>9}",
                n / enq,
                n / rel,
                rel / n * 1e9,
                if mode == "disk" {
                    format!("{reopen:.1}")
                } else {
                    "-".into()
                },
                peak / 1024.0,
                if mode == "disk" {
                    format!("{:.0}", disk / 1048576.0)
                } else {
                    "-".into()
                },
            );
        }
    }
}
