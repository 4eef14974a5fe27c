//! The signals that stop a long-running command: Ctrl-C (SIGINT) and, on
//! Unix, SIGTERM, what `kill`, systemd and `docker stop` send. Both stop
//! it gracefully; a crawl stopped by either exits with the shell's status
//! for that signal (130, 143).

use std::sync::atomic::{AtomicU8, Ordering};

/// The exit status of the last stop signal received (130 until one is).
static STOPPED_BY: AtomicU8 = AtomicU8::new(130);

/// A stop signal, by the name the user knows it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// SIGINT.
    CtrlC,
    /// SIGTERM.
    Term,
}

impl Stop {
    /// The status a process ended by it exits with: 128 + its number.
    pub(crate) fn status(self) -> u8 {
        match self {
            Stop::CtrlC => 130,
            Stop::Term => 143,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Stop::CtrlC => "Ctrl-C",
            Stop::Term => "SIGTERM",
        }
    }
}

/// Waits for Ctrl-C or SIGTERM, and remembers which (see [`stopped_by`]).
pub(crate) async fn stop_signal() -> std::io::Result<Stop> {
    #[cfg(unix)]
    let stop = {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.map(|()| Stop::CtrlC)?,
            _ = term.recv() => Stop::Term,
        }
    };
    #[cfg(not(unix))]
    let stop = tokio::signal::ctrl_c().await.map(|()| Stop::CtrlC)?;
    STOPPED_BY.store(stop.status(), Ordering::SeqCst);
    Ok(stop)
}

/// The exit status of a command a stop signal ended: 130 for Ctrl-C, 143
/// for SIGTERM.
pub(crate) fn stopped_by() -> u8 {
    STOPPED_BY.load(Ordering::SeqCst)
}
