//! A process's CPU time and memory read from `/proc` on Linux, and the
//! standard process families written from it at each encoding (left out
//! where `/proc` cannot be read).

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
}
