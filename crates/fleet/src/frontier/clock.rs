//! The worker's view of the server's clock.

use super::*;

/// How long a [`ClockOffset`] window lasts.
const OFFSET_WINDOW: u64 = 30_000;

/// The server's clock minus this process's, in ms.
///
/// The server reads its clock after a call left, so a reply stamped `at`
/// to a call sent at `sent` gives `at - sent`: the true offset plus the
/// call's way there (at least 0), which varies from call to call. Taking
/// each reply's as it came made the worker's clock jump by that variation:
/// a host's next request, counted from a start read on one reply's offset
/// and checked on a later, larger one's, could leave early by the
/// difference (tens of ms with a loaded server). So the offset is the
/// least `at - sent` of the last 30 to 60 s: the closest to the true one,
/// still never below it (times err late, so a completion's time, and the
/// host's next request counted from it, is never put too early by a slow
/// reply), and it moves only when a better reply comes or a window ends.
/// A server clock set back is followed at its first reply; one set
/// forward (or a failover to a server whose clock is ahead) within a
/// minute, the worker's times erring early by the step until then, as
/// they would until its next reply before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ClockOffset {
    /// The least `at - sent` in the current window, and in the one before.
    current: Option<i64>,
    previous: Option<i64>,
    /// When the current window began, on this process's clock.
    since: u64,
}

impl ClockOffset {
    pub(super) fn saw(&mut self, at: UnixMillis, sent: UnixMillis) {
        let local = sent.as_millis();
        let sample = i64::try_from(at.as_millis())
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(local).unwrap_or(i64::MAX));
        if self.current.is_none() || local.saturating_sub(self.since) >= OFFSET_WINDOW {
            self.previous = self.current;
            self.current = None;
            self.since = local;
        }
        self.current = Some(self.current.map_or(sample, |c| c.min(sample)));
    }

    pub(super) fn get(&self) -> i64 {
        match (self.current, self.previous) {
            (Some(c), Some(p)) => c.min(p),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_clock_is_the_closest_reply_of_the_last_window() {
        let mut o = ClockOffset::default();
        assert_eq!(o.get(), 0);
        // The server is 500 ms ahead; calls take 3, 40 and 1 ms to get there.
        let t0 = 1_795_000_000_000;
        for (sent, way) in [(t0, 3), (t0 + 100, 40), (t0 + 200, 1), (t0 + 300, 25)] {
            o.saw(UnixMillis(sent + 500 + way), UnixMillis(sent));
        }
        assert_eq!(o.get(), 501, "the best reply, not the last one");
        // The server's clock is set back 200 ms: its first reply says so.
        let mut t = t0 + 400;
        o.saw(UnixMillis(t + 300 + 2), UnixMillis(t));
        assert_eq!(o.get(), 302);
        // Set forward 600 ms: the older, smaller offset stands (times err
        // early by up to 600 ms) until its window has passed, within a
        // minute; never beyond the truth.
        t += 1_000;
        let forward = t;
        while t < forward + 2 * OFFSET_WINDOW {
            o.saw(UnixMillis(t + 900 + 5), UnixMillis(t));
            assert!((302..=905).contains(&o.get()), "{}", o.get());
            t += 1_000;
        }
        assert_eq!(o.get(), 905);
    }
}
