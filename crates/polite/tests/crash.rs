//! Crash tests: a child process writes the on-disk frontier and reports
//! each operation once it has returned; the parent kills it with SIGKILL at
//! a random point, reopens the store, and checks that
//! - every URL reported queued and not reported done is still queued (the
//!   ones that were in flight come back: at-least-once),
//! - no URL reported done is queued again,
//! - no host's politeness state went backward (requests started and the
//!   next-allowed time never decrease; the delay never falls below the
//!   minimum).
//!
//! The same store is killed and reopened `CRASH_ROUNDS` times (default
//! 200), so recovery also runs on stores that were themselves recovered.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
use mannerly_polite::frontier::{
    block_on, Admission, Frontier, FrontierConfig, LocalFrontier, Next,
};

mod common;
use common::Rng;

const CHILD_ENV: &str = "MANNERLY_CRASH_CHILD";

/// Kills in a clean close land within this many ms of its start at first
/// (a close that pads the whole journal takes about 1 s in a debug build
/// here), then, once a close finished first, within the time it took.
const CLOSE_MS: u64 = 1_400;

fn config() -> FrontierConfig {
    FrontierConfig {
        robots_gate: false,
        window: 4,
        expected_urls: 100_000,
        ..FrontierConfig::on_disk()
    }
}

/// The child's side. It only does something when the parent starts it.
#[test]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.split('|');
    let (dir, round) = (parts.next().expect("dir"), parts.next().expect("round"));
    let round: u64 = round.parse().expect("round");
    // `close`: end with a clean close that always rotates the journal.
    // `group`: operations are committed together at the end of each step,
    // as the crawler's loop does, and reported only then.
    let mode = parts.next();
    let (close, group) = (mode == Some("close"), mode == Some("group"));
    let config = FrontierConfig {
        rotate_journal_above: if close { 0 } else { u64::MAX },
        commit_every: if group { 64 } else { 1 },
        ..config()
    };
    // Reports held until the step's commit (in `group` mode).
    let mut held: Vec<String> = Vec::new();
    let ack = |held: &mut Vec<String>, line: String| {
        if group {
            held.push(line);
        } else {
            println!("{line}");
        }
    };
    let mut f = LocalFrontier::open(Path::new(dir), Politeness::new(Config::default()), config)
        .expect("open");
    let mut rng = Rng(round * 7919 + 1);
    // A clock that keeps going across rounds.
    let mut now = UnixMillis(round * 1_000_000_000);
    let mut flying = Vec::new();
    let mut mine = Vec::new();
    for step in 0..400u64 {
        let url = format!("https://h{}.test/r{round}/s{step}", rng.below(20));
        if block_on(f.enqueue(&url, rng.below(4) as u8, now)).expect("enqueue") == Admission::Queued
        {
            ack(&mut held, format!("ACK Q {url}"));
        }
        mine.push(url);
        // An earlier URL again: the on-disk seen-set must know it.
        let old = &mine[rng.below(mine.len() as u64) as usize];
        assert_eq!(
            block_on(f.enqueue(old, 0, now)).expect("enqueue"),
            Admission::Duplicate,
            "{old}"
        );
        for _ in 0..2 {
            if let Next::Fetch(r) = block_on(f.next(now)).expect("next") {
                if group {
                    // Not a report: the release may be committed before
                    // the step's end (a window refill commits), and then
                    // completed too, with the kill before the reports.
                    println!("MAY {}", r.url);
                }
                let h = f.politeness.get(&r.key).expect("state");
                ack(
                    &mut held,
                    format!(
                        "ACK S {} {} {} {}",
                        r.url,
                        r.key,
                        h.started,
                        h.next_allowed.as_millis()
                    ),
                );
                flying.push(r);
            }
        }
        // Complete most requests; leave some in flight when the kill comes.
        while flying.len() > 2 || (!flying.is_empty() && rng.below(3) > 0) {
            if let Some(r) = flying.pop() {
                let status = if rng.below(5) == 0 { 503 } else { 200 };
                let outcome = Outcome::Status {
                    status,
                    latency: 50,
                    retry_after: None,
                };
                block_on(f.complete(&r, &outcome, now.add_millis(50))).expect("complete");
                let h = f.politeness.get(&r.key).expect("state");
                ack(
                    &mut held,
                    format!(
                        "ACK D {} {} {} {}",
                        r.url,
                        r.key,
                        h.started,
                        h.next_allowed.as_millis()
                    ),
                );
            }
        }
        if group {
            f.commit().expect("commit");
            for line in held.drain(..) {
                println!("{line}");
            }
        }
        now = now.add_millis(1_000);
        // Now and then a sync, which writes the reopen summary: kills land
        // while it is being written too.
        if step % 100 == 99 {
            block_on(f.sync()).expect("sync");
        }
    }
    // Done: wait to be killed, like a crawler waiting for work; or close
    // cleanly first (the summary, the journal rotation), to be killed
    // while closing.
    println!("ACK END");
    if close {
        drop(f);
        println!("ACK CLOSED");
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

#[derive(Default)]
struct Acked {
    queued: HashSet<String>,
    done: HashSet<String>,
    /// Per key: (requests started, next allowed) last reported.
    hosts: HashMap<String, (u64, u64)>,
    /// Released in the last round and not reported done: one of these may
    /// have completed between its commit and its report (with grouped
    /// commits, several: those of the step the kill cut).
    open: HashSet<String>,
    /// The children commit in groups.
    grouped: bool,
    /// What was reported of each URL (for failure messages).
    log: HashMap<String, Vec<String>>,
}

/// When the parent kills the child.
#[derive(Clone, Copy)]
enum Kill {
    /// After reading this many reports.
    AfterReports(usize),
    /// The same, the child committing a step's operations together (with
    /// `commit_every` above 1) and reporting them after the commit.
    Grouped(usize),
    /// This long after the child starts its clean close.
    InClose(std::time::Duration),
}

/// Runs one child and kills it. For [`Kill::InClose`], how long the close
/// took when the child finished it before the kill (`None`: the kill
/// landed inside).
fn run_child(dir: &Path, round: u64, kill: Kill, acked: &mut Acked) -> Option<std::time::Duration> {
    let exe = std::env::current_exe().expect("test binary");
    let spec = match kill {
        Kill::AfterReports(_) => format!("{}|{round}", dir.display()),
        Kill::Grouped(_) => format!("{}|{round}|group", dir.display()),
        Kill::InClose(_) => format!("{}|{round}|close", dir.display()),
    };
    let kill_after = match kill {
        Kill::AfterReports(n) | Kill::Grouped(n) => n,
        Kill::InClose(_) => usize::MAX,
    };
    let mut closed = None;
    let mut ended = std::time::Instant::now();
    let mut child = Command::new(exe)
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let mut seen = 0;
    let mut killed = false;
    acked.open.clear();
    // Read `kill_after` reports, kill, then read what the child wrote
    // before it died.
    loop {
        if seen >= kill_after && !killed {
            // SIGKILL, wherever the child is (mid-commit included).
            child.kill().expect("kill");
            killed = true;
        }
        let Some(Ok(line)) = lines.next() else { break };
        if let Some(url) = line.strip_prefix("MAY ") {
            acked.open.insert(url.to_owned());
            continue;
        }
        let Some(ack) = line.strip_prefix("ACK ") else {
            continue;
        };
        seen = seen.saturating_add(1);
        if ack == "CLOSED" {
            closed = Some(ended.elapsed());
            continue;
        }
        if ack == "END" {
            ended = std::time::Instant::now();
            if let Kill::InClose(after) = kill {
                std::thread::sleep(after);
            }
            seen = usize::MAX;
            continue;
        }
        let parts: Vec<&str> = ack.split(' ').collect();
        if let Some(url) = parts.get(1) {
            acked
                .log
                .entry((*url).to_owned())
                .or_default()
                .push(format!("round {round}: {}", parts[0]));
        }
        match parts.as_slice() {
            ["Q", url] => {
                acked.queued.insert((*url).to_owned());
            }
            ["S", url, key, started, next] => {
                acked.open.insert((*url).to_owned());
                acked.hosts.insert(
                    (*key).to_owned(),
                    (started.parse().expect("n"), next.parse().expect("n")),
                );
            }
            ["D", url, key, started, next] => {
                acked.done.insert((*url).to_owned());
                acked.open.remove(*url);
                acked.hosts.insert(
                    (*key).to_owned(),
                    (started.parse().expect("n"), next.parse().expect("n")),
                );
            }
            other => panic!("unexpected line {other:?}"),
        }
    }
    let status = child.wait().expect("wait");
    assert!(
        killed && !status.success(),
        "the child was killed, not finished"
    );
    closed
}

fn check(dir: &Path, acked: &mut Acked, round: u64) -> (u64, bool) {
    let mut f = LocalFrontier::open(dir, Politeness::new(Config::default()), config())
        .unwrap_or_else(|e| panic!("round {round}: reopen: {e}"));
    let from_summary = f.opened_from_summary();
    let queued: HashSet<String> = f
        .queued_urls()
        .expect("scan")
        .into_iter()
        .map(|(_, u)| u)
        .collect();
    let lost: Vec<String> = acked
        .queued
        .difference(&acked.done)
        .filter(|u| !queued.contains(*u))
        .cloned()
        .collect();
    // At most the one completion the kill cut between commit and report
    // (with grouped commits, those of the step it cut).
    let most = if acked.grouped { usize::MAX } else { 1 };
    assert!(
        lost.len() <= most && lost.iter().all(|u| acked.open.contains(u)),
        "round {round}: queued URLs lost: {lost:?}; history {:?}",
        lost.iter().map(|u| &acked.log[u]).collect::<Vec<_>>()
    );
    acked.done.extend(lost);
    for url in &acked.done {
        assert!(
            !queued.contains(url.as_str()),
            "round {round}: {url} was done and is queued again"
        );
    }
    for (key, (started, next)) in &acked.hosts {
        let h = f
            .politeness
            .get(key)
            .unwrap_or_else(|| panic!("round {round}: {key}'s state is lost"));
        assert!(
            h.started >= *started,
            "round {round}: {key} started {} < {started}",
            h.started
        );
        assert!(
            h.next_allowed.as_millis() >= *next,
            "round {round}: {key} next {} < {next}",
            h.next_allowed.as_millis()
        );
        assert!(
            h.delay >= 1_000,
            "round {round}: {key}'s delay reset to {}",
            h.delay
        );
    }
    // Counts restored from a summary must be the store's.
    assert_eq!(f.stats().queued as usize, queued.len(), "round {round}");
    (f.stats().reissued, from_summary)
}

/// The number of rounds: the variable `name` if set to a number, else
/// `default`.
fn rounds(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn kill_minus_nine_loses_nothing() {
    let rounds = rounds("CRASH_ROUNDS", 200);
    let mut rng = Rng(0xc4a5);
    let (mut reissued, mut queued, mut done, mut summaries) = (0, 0, 0, 0);
    // A fresh store every 25 kills keeps each reopen quick; within a run of
    // 25 every kill lands on a store that earlier kills left behind.
    for run in 0..rounds.div_ceil(25) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut acked = Acked::default();
        for round in run * 25..((run + 1) * 25).min(rounds) {
            let kill = Kill::AfterReports(1 + rng.below(1_200) as usize);
            run_child(dir.path(), round, kill, &mut acked);
            let (r, s) = check(dir.path(), &mut acked, round);
            reissued += r;
            summaries += u64::from(s);
        }
        queued += acked.queued.len();
        done += acked.done.len();
    }
    assert!(queued > 1_000, "the children did work: {queued}");
    assert!(reissued > 0, "some kills landed with requests in flight");
    eprintln!(
        "{rounds} kills: {queued} URLs acknowledged queued, {done} done, {reissued} in-flight URLs re-issued, {summaries} reopens from a summary (the rest rebuilt: the summary was stale or torn)"
    );
}

/// The crawler's way: operations are handed on together, once per step
/// (`commit_every` above 1, then `LocalFrontier::commit`), and the
/// seen-set answers from the batch not yet committed. Nothing reported
/// after a commit is lost.
#[test]
fn kill_minus_nine_loses_nothing_committed_in_groups() {
    let rounds = rounds("CRASH_GROUP_ROUNDS", 50);
    let mut rng = Rng(0x6a0c);
    let (mut reissued, mut queued) = (0, 0);
    for run in 0..rounds.div_ceil(25) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut acked = Acked {
            grouped: true,
            ..Acked::default()
        };
        for round in run * 25..((run + 1) * 25).min(rounds) {
            let kill = Kill::Grouped(1 + rng.below(1_200) as usize);
            run_child(dir.path(), round, kill, &mut acked);
            reissued += check(dir.path(), &mut acked, round).0;
        }
        queued += acked.queued.len();
    }
    assert!(queued > 1_000, "the children did work: {queued}");
    assert!(reissued > 0, "some kills landed with requests in flight");
    eprintln!(
        "{rounds} kills, grouped commits: {queued} URLs acknowledged queued, {reissued} re-issued"
    );
}

/// Kills that land while the frontier closes cleanly: writing the reopen
/// summary, flushing, and padding fjall's journal to rotate it (forced at
/// every close here). Nothing acknowledged is lost, whatever the moment.
#[test]
fn a_kill_during_a_clean_close_loses_nothing() {
    let rounds = rounds("CRASH_CLOSE_ROUNDS", 12);
    let mut rng = Rng(0xc105e);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut acked = Acked::default();
    let (mut inside, mut summaries) = (0, 0);
    let mut longest = CLOSE_MS;
    for round in 0..rounds {
        let after = std::time::Duration::from_millis(rng.below(longest));
        match run_child(dir.path(), round, Kill::InClose(after), &mut acked) {
            None => inside += 1,
            // A faster machine: aim inside the close it just took.
            Some(took) => longest = u64::try_from(took.as_millis()).unwrap_or(u64::MAX).max(1),
        }
        let (_, s) = check(dir.path(), &mut acked, round);
        summaries += u64::from(s);
    }
    assert!(
        inside * 2 >= rounds,
        "most kills landed inside the close: {inside} of {rounds}"
    );
    eprintln!(
        "{rounds} kills during a clean close ({inside} before it finished): {} URLs acknowledged queued, {summaries} reopens from a summary",
        acked.queued.len()
    );
}
