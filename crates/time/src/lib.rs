//! One time type for every mannerly crate: [`UnixMillis`], an instant as
//! milliseconds since the Unix epoch, with the [`Clock`] it comes from,
//! HTTP-dates, and the one Retry-After parser.
//!
//! Policy code never reads the system clock: it is handed a `UnixMillis`,
//! or a [`Clock`] to ask. Tests use [`FakeClock`] and move time by hand,
//! so 30 days pass in microseconds and nothing ever sleeps.
//!
//! Why milliseconds since the epoch, and not [`std::time::SystemTime`] or
//! [`std::time::Instant`]: a crawler persists its politeness state
//! (next-allowed times, Retry-After deadlines, robots.txt expiries) and
//! reads it back after a restart, possibly on another machine of a fleet,
//! so times must be plain, portable numbers on a clock that keeps going
//! across processes. Milliseconds are fine enough for request pacing and
//! an `u64` of them lasts 584 million years. Durations stay
//! [`std::time::Duration`] or plain milliseconds, never a `UnixMillis`.
//!
//! ```
//! use std::time::Duration;
//! use mannerly_time::{parse_retry_after, Clock, FakeClock, UnixMillis};
//!
//! let clock = FakeClock::new(UnixMillis::from_secs(1_795_168_800));
//! assert_eq!(clock.now().to_string(), "2026-11-20T10:00:00Z");
//! clock.advance(Duration::from_secs(90));
//! let now = clock.now();
//! // Retry-After as delta-seconds or as an HTTP-date: the instant to wait for.
//! assert_eq!(parse_retry_after("120", now), Some(now + Duration::from_secs(120)));
//! let date = "Fri, 20 Nov 2026 10:05:00 GMT";
//! assert_eq!(parse_retry_after(date, now).map(|t| t.millis_since(now)), Some(210_000));
//! ```

#![deny(missing_docs)]

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An instant: milliseconds since 1970-01-01T00:00:00Z (UTC).
///
/// Serialises as the bare number, so stored state stays readable and
/// compatible with stores that kept plain milliseconds.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct UnixMillis(pub u64);

impl UnixMillis {
    /// The epoch itself.
    pub const EPOCH: UnixMillis = UnixMillis(0);
    /// The farthest representable instant.
    pub const MAX: UnixMillis = UnixMillis(u64::MAX);

    /// The instant `ms` milliseconds after the epoch.
    pub const fn from_millis(ms: u64) -> UnixMillis {
        UnixMillis(ms)
    }

    /// The instant `secs` seconds after the epoch.
    pub const fn from_secs(secs: u64) -> UnixMillis {
        UnixMillis(secs.saturating_mul(1000))
    }

    /// Milliseconds since the epoch.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// Whole seconds since the epoch (rounded down), as signature
    /// parameters and HTTP-dates count.
    pub const fn as_secs(self) -> u64 {
        self.0 / 1000
    }

    /// The system clock's reading, clamped to the epoch when the system
    /// clock is set before 1970.
    pub fn now() -> UnixMillis {
        UnixMillis::from(SystemTime::now())
    }

    /// `ms` milliseconds later (saturating at [`UnixMillis::MAX`]).
    #[must_use]
    pub const fn add_millis(self, ms: u64) -> UnixMillis {
        UnixMillis(self.0.saturating_add(ms))
    }

    /// `ms` milliseconds earlier (saturating at the epoch).
    #[must_use]
    pub const fn sub_millis(self, ms: u64) -> UnixMillis {
        UnixMillis(self.0.saturating_sub(ms))
    }

    /// Milliseconds from `earlier` to `self`; 0 when `earlier` is later.
    pub const fn millis_since(self, earlier: UnixMillis) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// The duration from `earlier` to `self`; zero when `earlier` is later.
    pub const fn duration_since(self, earlier: UnixMillis) -> Duration {
        Duration::from_millis(self.millis_since(earlier))
    }

    /// `self + d`, or `None` past [`UnixMillis::MAX`].
    pub fn checked_add(self, d: Duration) -> Option<UnixMillis> {
        let ms = u64::try_from(d.as_millis()).ok()?;
        self.0.checked_add(ms).map(UnixMillis)
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-20T10:00:00.123Z` (the
    /// form WARC 1.1 and JSON logs use).
    /// Written digit by digit into a fixed buffer: a crawl stamps every
    /// log line, WARC record and evidence record, and `format!` with seven
    /// padded numbers cost about ten times as much.
    pub fn to_rfc3339_millis(self) -> String {
        let secs = self.as_secs();
        let (y, m, d) = civil_from_days((secs / 86_400) as i64);
        let rem = secs % 86_400;
        let Some(y) = u64::try_from(y).ok().filter(|y| *y <= 9999) else {
            return format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                rem / 3600,
                rem % 3600 / 60,
                rem % 60,
                self.0 % 1000
            );
        };
        let mut b = *b"0000-00-00T00:00:00.000Z";
        let fields = [
            (0..4, y),
            (5..7, u64::from(m)),
            (8..10, u64::from(d)),
            (11..13, rem / 3600),
            (14..16, rem % 3600 / 60),
            (17..19, rem % 60),
            (20..23, self.0 % 1000),
        ];
        for (at, n) in fields {
            put_digits(&mut b[at], n);
        }
        // Digits, dashes, colons, `T`, `.` and `Z`: ASCII, so one copy.
        String::from_utf8(b.to_vec()).unwrap_or_default()
    }

    /// Reads the form [`to_rfc3339_millis`](Self::to_rfc3339_millis)
    /// writes, `2026-11-20T10:00:00.123Z`, and the same without
    /// milliseconds; `None` for anything else (offsets other than `Z`,
    /// dates before 1970, fields out of range).
    pub fn parse_rfc3339_millis(s: &str) -> Option<UnixMillis> {
        let b = s.as_bytes();
        let num = |from: usize, len: usize| -> Option<u64> {
            let part = b.get(from..from + len)?;
            part.iter().try_fold(0u64, |n, c| {
                c.is_ascii_digit().then(|| n * 10 + u64::from(c - b'0'))
            })
        };
        let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
        if seps.iter().any(|(i, c)| b.get(*i) != Some(c)) {
            return None;
        }
        let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
        let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
        let ms = match (b.get(19), b.len()) {
            (Some(b'Z'), 20) => 0,
            (Some(b'.'), 24) if b[23] == b'Z' => num(20, 3)?,
            _ => return None,
        };
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        let days = days_from_civil(y as i64, mo as u32, d as u32);
        let (_, m2, d2) = civil_from_days(days);
        if (m2, d2) != (mo as u32, d as u32) || days < 0 {
            return None;
        }
        let secs = days as u64 * 86_400 + h * 3600 + mi * 60 + sec;
        Some(UnixMillis(secs.checked_mul(1000)?.checked_add(ms)?))
    }

    /// The same instant as a [`SystemTime`].
    pub fn to_system_time(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.0)
    }
}

impl From<SystemTime> for UnixMillis {
    fn from(t: SystemTime) -> UnixMillis {
        match t.duration_since(UNIX_EPOCH) {
            Ok(d) => UnixMillis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            Err(_) => UnixMillis::EPOCH,
        }
    }
}

impl From<UnixMillis> for SystemTime {
    fn from(t: UnixMillis) -> SystemTime {
        t.to_system_time()
    }
}

/// Saturating: adding past the end gives [`UnixMillis::MAX`].
impl Add<Duration> for UnixMillis {
    type Output = UnixMillis;
    fn add(self, d: Duration) -> UnixMillis {
        self.add_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// Saturating, as [`Add`].
impl AddAssign<Duration> for UnixMillis {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

/// Saturating: subtracting past the epoch gives the epoch.
impl Sub<Duration> for UnixMillis {
    type Output = UnixMillis;
    fn sub(self, d: Duration) -> UnixMillis {
        self.sub_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// `2026-11-20T10:00:00Z`: RFC 3339 in UTC, to the second (milliseconds
/// are not shown; [`UnixMillis::to_rfc3339_millis`] shows them).
impl fmt::Display for UnixMillis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.as_secs();
        let days = secs / 86_400;
        let rem = secs % 86_400;
        let (y, m, d) = civil_from_days(days as i64);
        let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
        write!(f, "{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
/// `n`'s last `out.len()` decimal digits, zero-padded, into `out`.
fn put_digits(out: &mut [u8], mut n: u64) {
    for c in out.iter_mut().rev() {
        *c = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day), proleptic Gregorian, to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses an HTTP-date (RFC 9110 §5.6.7, all three historic forms).
/// Dates before 1970 read as the epoch.
pub fn parse_http_date(s: &str) -> Option<UnixMillis> {
    httpdate::parse_http_date(s.trim())
        .ok()
        .map(UnixMillis::from)
}

/// Formats an HTTP-date (`Fri, 20 Nov 2026 10:00:00 GMT`).
pub fn fmt_http_date(t: UnixMillis) -> String {
    httpdate::fmt_http_date(t.to_system_time())
}

/// Parses a `Retry-After` value (RFC 9110 §10.2.3): delta-seconds (digits
/// only, surrounding white space allowed) or an HTTP-date. Returns the
/// instant the server asked to wait for; a date in the past gives `now`.
/// Anything else (negative numbers, fractions, words) is `None`: callers
/// then fall back to their own backoff. Capping is the caller's policy.
pub fn parse_retry_after(value: &str, now: UnixMillis) -> Option<UnixMillis> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for u64 means "a very long time": saturate.
        let secs = v.parse::<u64>().unwrap_or(u64::MAX);
        return Some(now.add_millis(secs.saturating_mul(1000)));
    }
    parse_http_date(v).map(|t| t.max(now))
}

/// A fixed, readable start time for tests: 2026-11-20T10:00:00Z.
pub const fn test_epoch() -> UnixMillis {
    UnixMillis::from_secs(1_795_168_800)
}

/// Where the current time comes from.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> UnixMillis;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixMillis {
        UnixMillis::now()
    }
}

/// A clock that only moves when told to. Clones share the same time.
#[derive(Debug, Clone)]
pub struct FakeClock(Arc<Mutex<UnixMillis>>);

impl FakeClock {
    /// A clock stopped at `start`.
    pub fn new(start: UnixMillis) -> Self {
        FakeClock(Arc::new(Mutex::new(start)))
    }

    /// Moves time forward.
    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += by;
    }

    /// Sets the time (backwards too: a test of a clock that jumps).
    pub fn set(&self, to: UnixMillis) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> UnixMillis {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> UnixMillis {
        (**self).now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(UnixMillis::EPOCH.to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(test_epoch().to_string(), "2026-11-20T10:00:00Z");
        assert_eq!(
            (test_epoch() + Duration::from_secs(61)).to_string(),
            "2026-11-20T10:01:01Z"
        );
        assert_eq!(
            UnixMillis::from_secs(951_782_400).to_string(),
            "2000-02-29T00:00:00Z"
        );
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes_and_nothing_else() {
        for t in [0, 1_795_168_861_005, 951_782_400_000, 4_102_444_799_999] {
            let s = UnixMillis(t).to_rfc3339_millis();
            assert_eq!(
                UnixMillis::parse_rfc3339_millis(&s),
                Some(UnixMillis(t)),
                "{s}"
            );
        }
        let whole = UnixMillis::parse_rfc3339_millis("2026-11-20T10:00:00Z");
        assert_eq!(whole, Some(test_epoch()));
        for bad in [
            "2026-02-30T00:00:00Z",
            "2026-11-20T10:00:00+01:00",
            "2026-11-20 10:00:00Z",
            "2026-11-20T10:00:00.12Z",
            "1969-12-31T23:59:59Z",
            "2026-13-01T00:00:00Z",
            "",
        ] {
            assert_eq!(UnixMillis::parse_rfc3339_millis(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc3339_with_milliseconds() {
        assert_eq!(
            UnixMillis(1_795_168_861_005).to_rfc3339_millis(),
            "2026-11-20T10:01:01.005Z"
        );
        assert_eq!(
            UnixMillis::EPOCH.to_rfc3339_millis(),
            "1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = UnixMillis::from_secs(1_800_000_000);
        assert_eq!(
            parse_retry_after("120", UnixMillis::EPOCH),
            Some(UnixMillis(120_000))
        );
        let date = fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(parse_retry_after(&date, now), Some(now.add_millis(90_000)));
        assert_eq!(parse_retry_after(" 7 ", now), Some(now.add_millis(7_000)));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
        assert_eq!(parse_retry_after("1.5", now), None);
        assert_eq!(parse_retry_after("", now), None);
        // A date in the past means "now", never a time before it.
        let past = fmt_http_date(now.sub_millis(3_600_000));
        assert_eq!(parse_retry_after(&past, now), Some(now));
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(UnixMillis::MAX)
        );
    }

    #[test]
    fn system_time_round_trip_and_saturation() {
        let t = UnixMillis(1_795_168_800_123);
        assert_eq!(UnixMillis::from(t.to_system_time()), t);
        assert_eq!(UnixMillis::MAX + Duration::from_secs(1), UnixMillis::MAX);
        assert_eq!(UnixMillis(5) - Duration::from_secs(1), UnixMillis::EPOCH);
        assert_eq!(UnixMillis(5).millis_since(UnixMillis(9)), 0);
        assert_eq!(
            UnixMillis::from(UNIX_EPOCH - Duration::from_secs(1)),
            UnixMillis::EPOCH
        );
    }

    #[test]
    fn fake_clock_moves_only_when_told() {
        let c = FakeClock::new(test_epoch());
        let shared = c.clone();
        c.advance(Duration::from_millis(1_500));
        assert_eq!(shared.now(), test_epoch().add_millis(1_500));
        c.set(UnixMillis::EPOCH);
        assert_eq!(shared.now(), UnixMillis::EPOCH);
    }

    proptest::proptest! {
        #[test]
        fn rfc3339_is_written_as_format_would(ms in proptest::prop_oneof![
            0u64..253_402_300_800_000,
            253_402_300_800_000u64..u64::MAX / 2,
        ]) {
            let t = UnixMillis(ms);
            let secs = ms / 1000;
            let (y, m, d) = civil_from_days((secs / 86_400) as i64);
            let rem = secs % 86_400;
            let want = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                rem / 3600,
                rem % 3600 / 60,
                rem % 60,
                ms % 1000
            );
            proptest::prop_assert_eq!(t.to_rfc3339_millis(), want);
            if ms < 253_402_300_800_000 {
                proptest::prop_assert_eq!(UnixMillis::parse_rfc3339_millis(&t.to_rfc3339_millis()), Some(t));
            }
        }

        #[test]
        fn http_dates_round_trip_to_the_second(secs in 0u64..253_402_300_799) {
            let t = UnixMillis::from_secs(secs);
            proptest::prop_assert_eq!(parse_http_date(&fmt_http_date(t)), Some(t));
        }

        #[test]
        fn retry_after_never_goes_back(v in ".{0,40}", now in 0u64..4_000_000_000_000) {
            let now = UnixMillis(now);
            if let Some(t) = parse_retry_after(&v, now) {
                proptest::prop_assert!(t >= now);
            }
        }
    }
}
