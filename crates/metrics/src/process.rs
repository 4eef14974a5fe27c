//! A process's CPU time and memory read from `/proc` on Linux, and the
//! standard process families written from it at each encoding (left out
//! where `/proc` cannot be read); the exact CPU time of the children a
//! process has waited for, from the kernel.

use std::fmt::Write as _;

use crate::family::Kind;
use crate::text::{head, number, Format};

/// Clock ticks per second of `/proc/<pid>/stat` (`CLK_TCK`, 100 on Linux).
const TICKS: f64 = 100.0;

/// What `/proc` says of one process: the one reader of it in mannerly
/// (the process families, the demo's measure of a command, the tests'
/// peak RSS).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Usage {
    /// User and system CPU seconds.
    pub cpu_seconds: f64,
    /// Resident bytes now (`VmRSS`).
    pub rss_bytes: u64,
    /// The most resident bytes so far (`VmHWM`).
    pub peak_rss_bytes: u64,
}

/// [`Usage`] of this process, or `None` where `/proc` cannot be read.
pub fn usage() -> Option<Usage> {
    read_proc("self")
}

/// [`Usage`] of process `pid`, or `None` where it is gone or `/proc`
/// cannot be read.
pub fn usage_of(pid: u32) -> Option<Usage> {
    read_proc(&pid.to_string())
}

/// [`Usage`] of process `root` and every process descended from it, now:
/// the CPU seconds of each (with those of its children it has waited
/// for, so a finished child counts too), and the resident bytes of all
/// of them together (`rss_bytes`; `peak_rss_bytes` is the most any one
/// of them held). `None` when `root` is gone or `/proc` cannot be read.
pub fn tree_usage(root: u32) -> Option<Usage> {
    let mut parent: Vec<(u32, u32)> = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some((ppid, _)) = stat_of(pid) {
            parent.push((pid, ppid));
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while let Some(&p) = tree.get(i) {
        tree.extend(parent.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    let mut total = usage_of(root).map(|_| Usage {
        cpu_seconds: 0.0,
        rss_bytes: 0,
        peak_rss_bytes: 0,
    })?;
    for pid in tree {
        let (Some(u), Some((_, waited))) = (usage_of(pid), stat_of(pid)) else {
            continue;
        };
        total.cpu_seconds += u.cpu_seconds + waited;
        total.rss_bytes += u.rss_bytes;
        total.peak_rss_bytes = total.peak_rss_bytes.max(u.peak_rss_bytes);
    }
    Some(total)
}

/// The CPU seconds of every child this process has waited for, and of
/// the children they waited for, to the microsecond (`getrusage` of
/// `RUSAGE_CHILDREN`): exact where sampling `/proc` counts in 10 ms ticks
/// and misses what a child spends after the last sample. `None` where the
/// system cannot tell.
pub fn waited_children_cpu_seconds() -> Option<f64> {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrusage, UsageWho};
        let u = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
        let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        Some(secs(u.user_time()) + secs(u.system_time()))
    }
    #[cfg(not(unix))]
    None
}

/// A process's parent, and the CPU seconds of the children it waited for
/// (`cutime` and `cstime`).
fn stat_of(pid: u32) -> Option<(u32, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ppid = f.get(1)?.parse().ok()?;
    let waited = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
    Some((ppid, waited as f64 / TICKS))
}

fn read_proc(pid: &str) -> Option<Usage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields are counted after its `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime (fields 14 and 15 of stat(5)).
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |field: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some(Usage {
        cpu_seconds: ticks as f64 / TICKS,
        rss_bytes: kib("VmRSS:")? * 1024,
        peak_rss_bytes: kib("VmHWM:").unwrap_or(0) * 1024,
    })
}

pub(crate) fn encode(out: &mut String, format: Format) {
    let Some(Usage {
        cpu_seconds: cpu,
        rss_bytes: rss,
        ..
    }) = usage()
    else {
        return;
    };
    head(
        out,
        "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.",
        Kind::Counter,
        format,
    );
    let _ = writeln!(out, "process_cpu_seconds_total {}", number(cpu));
    head(
        out,
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        Kind::Gauge,
        format,
    );
    let _ = writeln!(out, "process_resident_memory_bytes {rss}");
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            let u = super::usage().expect("/proc/self");
            assert!(u.rss_bytes > 0 && u.peak_rss_bytes >= u.rss_bytes, "{u:?}");
            assert_eq!(super::usage_of(u32::MAX), None);
        }
    }

    /// A wrapper that only waits is measured with the work of what it
    /// started: the demo's `-- CMD` is often a script.
    #[test]
    #[cfg(unix)]
    fn a_tree_counts_the_work_of_the_processes_a_wrapper_started() {
        if !cfg!(target_os = "linux") {
            return;
        }
        use std::os::unix::process::CommandExt;
        // Some 2 CPU s of work (400,000 turns, about 0.3 s, sometimes came
        // in under the 0.3 s waited for, and the test then waited out the
        // wrapper's sleep and failed), in a process group of its own so
        // the unfinished work is stopped with the wrapper.
        let busy = "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done";
        let mut child = std::process::Command::new("sh")
            .args(["-c", &format!("sh -c '{busy}'; sleep 30")])
            .process_group(0)
            .spawn()
            .expect("sh");
        let pid = child.id();
        let start = std::time::Instant::now();
        let mut tree = 0.0;
        // Until the busy child has run a while (it is waited for, then
        // the wrapper sleeps): no fixed wait.
        while tree < 0.3 && start.elapsed() < std::time::Duration::from_secs(60) {
            tree = super::tree_usage(pid).map_or(0.0, |u| u.cpu_seconds);
            std::thread::yield_now();
        }
        let own = super::usage_of(pid).map_or(0.0, |u| u.cpu_seconds);
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .status();
        let _ = child.kill();
        let _ = child.wait();
        assert!(tree >= 0.3, "the tree's CPU: {tree} s");
        assert!(own < 0.1, "the wrapper's own: {own} s");
    }

    /// A child's work is counted once it is waited for, with the work of
    /// the child it waited for (a wrapper's crawler).
    #[test]
    #[cfg(unix)]
    fn waited_children_are_counted_with_what_they_waited_for() {
        let before = super::waited_children_cpu_seconds().expect("getrusage");
        let busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
        let mut child = std::process::Command::new("sh")
            .args(["-c", &format!("sh -c '{busy}'")])
            .spawn()
            .expect("sh");
        assert!(child.wait().expect("wait").success());
        let after = super::waited_children_cpu_seconds().expect("getrusage");
        assert!(after > before, "{before} → {after}");
    }
}
