//! Helpers shared by mannerly's tests and benches (a dev-dependency only).
//!
//! - [`shared_dir`]: where the `../shared` suites are, with the project's
//!   rule for when they are missing: in CI (`CI` set) that is a failure,
//!   elsewhere the caller prints that it skipped them.
//! - [`peak_rss_kb`]: this process's peak resident set (`VmHWM`), for
//!   benches that run each engine in a child process.
//! - [`RedisServer`]: a throwaway `redis-server` on 127.0.0.1 (installed by
//!   `.ci/run`; outside CI its absence skips the test), and
//!   [`RedisCluster`], three or more of them made a Cluster.
//! - [`dns_server`]: a DNS server on 127.0.0.1 answering from tables.
//! - [`warcio_check`]: WARC files read back with warcio.
//! - [`Browser`]: headless chromium through chromedriver, for the tests
//!   of pages (skipped outside CI when missing).

#![deny(missing_docs)]

/// The instant tests on a fake clock start at: 2026-11-20T10:00:00Z.
pub const T0: mannerly_time::UnixMillis = mannerly_time::UnixMillis::from_secs(1_795_168_800);

use std::path::PathBuf;

mod browser;
mod dns;
mod redis;
pub use browser::{artifacts, Browser, BROKEN_WORDS_JS};
pub use dns::dns_server;
pub use redis::{RedisCluster, RedisServer};

/// The `shared/` checkout beside the repository (`MANNERLY_SHARED`
/// overrides it), or `None` when it is absent outside CI.
///
/// # Panics
///
/// In CI (`CI` set) when the directory is missing, naming `what` must run.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MANNERLY_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{} is missing: CI must run {what}", dir.display());
    }
    None
}

/// Reads every WARC file in `dir` back with warcio (`warcio check`,
/// digests verified), through the Python `MANNERLY_PYTHON` names (`.ci/run`
/// provides one). Without it: a failure in CI, a SKIPPED line elsewhere.
///
/// # Panics
///
/// When a file does not read back, or in CI without `MANNERLY_PYTHON`.
pub fn warcio_check(dir: &std::path::Path) {
    let Some(python) = std::env::var_os("MANNERLY_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must check the WARC files with warcio (MANNERLY_PYTHON)"
        );
        println!("SKIPPED: the WARC files were not read back with warcio (set MANNERLY_PYTHON)");
        return;
    };
    for e in std::fs::read_dir(dir).expect("the WARC directory") {
        let path = e.expect("entry").path();
        let check = std::process::Command::new(&python)
            .args([
                "-c",
                "import sys; from warcio.cli import main; sys.exit(main(sys.argv[1:]))",
                "check",
            ])
            .arg(&path)
            .output()
            .expect("run warcio");
        assert!(
            check.status.success(),
            "warcio check {}: {}{}",
            path.display(),
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

/// Peak resident set of this process in KiB (`VmHWM` from
/// `/proc/self/status`), or 0 where that is unavailable.
pub fn peak_rss_kb() -> u64 {
    mannerly_metrics::process::usage().map_or(0, |u| u.peak_rss_bytes / 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn peak_rss_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(super::peak_rss_kb() > 0);
        }
    }
}
