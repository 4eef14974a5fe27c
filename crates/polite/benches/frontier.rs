//! Frontier throughput and peak memory at 1 M and 10 M URLs over 100,000
//! hosts, in memory and on disk.
//!
//! Each configuration runs in a child process of this binary, so its peak
//! RSS (`VmHWM`) is its own. A run enqueues every URL (hosts interleaved,
//! four priorities), then, on disk, syncs, closes and reopens the store
//! twice: from the summary a clean close leaves (what `--resume` costs),
//! and with the summary removed, rebuilding from every queued URL and seen
//! fingerprint (what a restart after a crash costs), then releases and completes every
//! URL on a fake clock (each host's 1 s delay holds; nothing sleeps), closes,
//! and reopens once more (a finished crawl's store: its queue and flight
//! keyspaces emptied, which once left fjall's old journals to be replayed
//! at every open). The per-release figure is the scheduling overhead a crawler pays per fetch:
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
        // `MANNERLY_BENCH_ROTATE_ABOVE=18446744073709551615` measures a
        // close that leaves fjall's journal as it is.
        rotate_journal_above: std::env::var("MANNERLY_BENCH_ROTATE_ABOVE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(FrontierConfig::on_disk().rotate_journal_above),
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

/// One step of a run, in its own process (a reopen in the process that
/// just closed the store would wait for that store's background work).
/// `memory`: everything, prints `enqueue_s release_s peak_kb`;
/// `disk-fill`: enqueue, sync, close, prints `enqueue_s peak_kb close_s`
/// (the close includes the journal rotation that makes the reopen quick);
/// `disk-resume`: open from the summary, prints `open_s peak_kb`;
/// `disk-rebuild`: remove the summary, open, release everything, prints
/// `open_s release_s peak_kb disk_bytes`;
/// `disk-reopen`: open the store everything was released from, from its
/// summary, prints `open_s peak_kb`.
fn child(mode: &str, urls: u64, dir: &std::path::Path) {
    let peak = mannerly_testsupport::peak_rss_kb;
    match mode {
        "disk-resume" => {
            let t = Instant::now();
            let f = open("disk", dir);
            let s = t.elapsed().as_secs_f64();
            assert!(f.opened_from_summary(), "a clean close leaves a summary");
            assert_eq!(f.stats().queued, urls);
            println!("{s} {}", peak());
            return;
        }
        "disk-reopen" => {
            let t = Instant::now();
            let f = open("disk", dir);
            let s = t.elapsed().as_secs_f64();
            assert!(f.opened_from_summary(), "a clean close leaves a summary");
            assert_eq!(f.stats().queued, 0);
            println!("{s} {}", peak());
            return;
        }
        "disk-rebuild" => {
            std::fs::remove_file(dir.join("summary.bin")).expect("the summary");
            let t = Instant::now();
            let mut f = open("disk", dir);
            let s = t.elapsed().as_secs_f64();
            assert!(!f.opened_from_summary());
            let release = release_all(&mut f, urls);
            block_on(Frontier::sync(&mut f)).expect("sync");
            drop(f);
            println!("{s} {release} {} {}", peak(), dir_size(dir));
            return;
        }
        _ => {}
    }
    let mut f = open(mode, dir);
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
    if mode == "disk-fill" {
        let t = Instant::now();
        block_on(Frontier::sync(&mut f)).expect("sync");
        drop(f);
        println!("{enqueue} {} {}", peak(), t.elapsed().as_secs_f64());
        return;
    }
    let release = release_all(&mut f, urls);
    println!("{enqueue} {release} {}", peak());
}

/// Releases and completes every URL on a fake clock; the seconds it took.
fn release_all(f: &mut LocalFrontier, urls: u64) -> f64 {
    let ok = Outcome::Status {
        status: 200,
        latency: 100,
        retry_after: None,
    };
    let t = Instant::now();
    let (mut now, mut released) = (UnixMillis::EPOCH, 0u64);
    loop {
        match block_on(Frontier::next(f, now)).expect("next") {
            Next::Fetch(r) => {
                block_on(Frontier::complete(f, &r, &ok, now)).expect("complete");
                released += 1;
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    assert_eq!(released, urls);
    t.elapsed().as_secs_f64()
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

/// Runs one step in a child process; its numbers.
fn step(mode: &str, urls: u64, dir: &std::path::Path) -> Result<Vec<f64>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args([
            "--child",
            mode,
            &urls.to_string(),
            &dir.display().to_string(),
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let mode = &args[i + 1];
        let urls: u64 = args[i + 2].parse().expect("urls");
        child(mode, urls, std::path::Path::new(&args[i + 3]));
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
    println!("frontier: {HOSTS} hosts, 1 s delay each, fake clock; enqueue, then release + complete every URL");
    println!("(disk: filled and closed, then reopened in a new process from the summary, then in another with it removed)");
    println!(
        "{:<7} {:>11} {:>14} {:>18} {:>14} {:>11} {:>14} {:>14} {:>14} {:>10} {:>9}",
        "backend",
        "URLs",
        "enqueue URL/s",
        "release+done URL/s",
        "ns per release",
        "close s",
        "reopen s (sum)",
        "rebuild s",
        "reopen s (done)",
        "peak MiB",
        "disk MiB"
    );
    for &urls in &sizes {
        let dir =
            std::env::temp_dir().join(format!("mannerly-frontier-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let n = urls as f64;
        match step("memory", urls, &dir) {
            Ok(v) if v.len() == 3 => println!(
                "{:<7} {urls:>11} {:>14.0} {:>18.0} {:>14.0} {:>11} {:>14} {:>14} {:>14} {:>10.0} {:>9}",
                "memory",
                n / v[0],
                n / v[1],
                v[1] / n * 1e9,
                "-",
                "-",
                "-",
                "-",
                v[2] / 1024.0,
                "-"
            ),
            Ok(v) => println!("memory  {urls:>11} bad child output: {v:?}"),
            Err(e) => println!("memory  {urls:>11} failed: {e}"),
        }
        let disk = (|| -> Result<Vec<f64>, String> {
            let fill = step("disk-fill", urls, &dir)?;
            let resume = step("disk-resume", urls, &dir)?;
            let rebuild = step("disk-rebuild", urls, &dir)?;
            let after = step("disk-reopen", urls, &dir)?;
            match (&fill[..], &resume[..], &rebuild[..], &after[..]) {
                ([enq, p1, close], [reopen, p2], [re, rel, p3, disk], [again, p4]) => Ok(vec![
                    *enq,
                    *reopen,
                    *re,
                    *rel,
                    p1.max(*p2).max(*p3).max(*p4),
                    *disk,
                    *close,
                    *again,
                ]),
                _ => Err(format!(
                    "bad child output: {fill:?} {resume:?} {rebuild:?} {after:?}"
                )),
            }
        })();
        let _ = std::fs::remove_dir_all(&dir);
        match disk {
            Ok(v) => println!(
                "{:<7} {urls:>11} {:>14.0} {:>18.0} {:>14.0} {:>11.2} {:>14.3} {:>14.1} {:>14.3} {:>10.0} {:>9.0}",
                "disk",
                n / v[0],
                n / v[3],
                v[3] / n * 1e9,
                v[6],
                v[1],
                v[2],
                v[7],
                v[4] / 1024.0,
                v[5] / 1048576.0
            ),
            Err(e) => println!("disk    {urls:>11} failed: {e}"),
        }
    }
}
