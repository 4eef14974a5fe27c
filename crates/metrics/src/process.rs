//! The standard process families, read from `/proc/self` on Linux at each
//! encoding (left out where `/proc` cannot be read).

use std::fmt::Write as _;

use crate::family::Kind;
use crate::registry::{head, number, Format};

/// Clock ticks per second of `/proc/self/stat` (`CLK_TCK`, 100 on Linux).
const TICKS: f64 = 100.0;

/// CPU seconds (user + system) and resident bytes of this process.
pub fn read() -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces: fields are counted after its `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some((ticks as f64 / TICKS, kb * 1024))
}

pub(crate) fn encode(out: &mut String, format: Format) {
    let Some((cpu, rss)) = read() else { return };
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
