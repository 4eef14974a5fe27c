//! Instants as logs write them: `[10/Oct/2026:13:55:36 -0700]`,
//! RFC 3339, W3C `date time`, Unix seconds with a fraction, nanoseconds.

/// An instant from a log, with how precise the log was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    /// Milliseconds since the Unix epoch, UTC.
    pub millis: i64,
    /// How precise the logged time was, in milliseconds (1000 for whole
    /// seconds, 1 for milliseconds or better).
    pub precision_ms: u32,
}

impl Stamp {
    /// The latest instant a stamp holds, in milliseconds (2^53, about
    /// 285,000 years after 1970; the earliest is its negation). A logged
    /// time past it is held at it, so sums and differences of two instants
    /// (gaps, windows) can never overflow downstream.
    pub const MAX_MILLIS: i64 = 1 << 53;

    fn new(secs: i64, millis: i64, precision_ms: u32) -> Stamp {
        Stamp {
            millis: secs
                .saturating_mul(1000)
                .saturating_add(millis)
                .clamp(-Self::MAX_MILLIS, Self::MAX_MILLIS),
            precision_ms,
        }
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn num(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, &d| n * 10 + i64::from(d - b'0')))
}

fn month(b: &[u8]) -> Option<i64> {
    const NAMES: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    NAMES
        .iter()
        .position(|n| n.eq_ignore_ascii_case(b))
        .map(|i| i as i64 + 1)
}

fn checked(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    Some(checked_day(y, mo, d)? * 86_400 + checked_time(h, mi, s)?)
}

/// Days since 1970 of a date whose month and day are in range.
fn checked_day(y: i64, mo: i64, d: i64) -> Option<i64> {
    let ok = (1..=12).contains(&mo) && (1..=31).contains(&d);
    ok.then(|| days_from_civil(y, mo, d))
}

/// Seconds into the day of a time in range (a leap second allowed).
fn checked_time(h: i64, mi: i64, s: i64) -> Option<i64> {
    let ok = (0..=23).contains(&h) && (0..=59).contains(&mi) && (0..=60).contains(&s);
    ok.then(|| h * 3600 + mi * 60 + s)
}

/// `.123456` → (milliseconds, precision); no fraction → (0, 1000).
fn fraction(b: &[u8]) -> Option<(i64, u32, usize)> {
    let Some(rest) = b.strip_prefix(b".").or_else(|| b.strip_prefix(b",")) else {
        return Some((0, 1000, 0));
    };
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let first3: Vec<u8> = rest[..digits.min(3)].to_vec();
    let mut ms = num(&first3)?;
    for _ in first3.len()..3 {
        ms *= 10;
    }
    let precision = match digits {
        1 => 100,
        2 => 10,
        _ => 1,
    };
    Some((ms, precision, digits + 1))
}

/// `+0200`, `-07:00`, `Z` → seconds east of UTC; the bytes read.
fn offset(b: &[u8]) -> Option<(i64, usize)> {
    match b.first() {
        None => Some((0, 0)),
        Some(b'Z' | b'z') => Some((0, 1)),
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &b[1..];
            let (h, m, used) = if rest.get(2) == Some(&b':') {
                (num(rest.get(..2)?)?, num(rest.get(3..5)?)?, 6)
            } else {
                (num(rest.get(..2)?)?, num(rest.get(2..4)?)?, 5)
            };
            let secs = h * 3600 + m * 60;
            Some((if sign == b'-' { -secs } else { secs }, used))
        }
        _ => None,
    }
}

/// `10/Oct/2026:13:55:36 -0700`, with an optional fraction after the
/// seconds (`:36.123`, as HAProxy and Apache's `%{msec_frac}t` write) and
/// an optional offset (none: UTC).
pub(crate) fn clf(b: &[u8]) -> Option<Stamp> {
    use std::cell::Cell;
    /// Bytes of a time kept: `10/Oct/2026:13:55:36.123456 -0700` fits.
    const KEEP: usize = 32;
    // The last time read is kept, a thread's own: a log writes several
    // lines a second, and they share their time's text.
    thread_local!(static LAST: Cell<Option<([u8; KEEP], usize, Stamp)>> = const { Cell::new(None) });
    if let Some((key, len, stamp)) = LAST.get() {
        if len == b.len() && same_kept(&key, b) {
            return Some(stamp);
        }
    }
    let stamp = clf_uncached(b)?;
    if b.len() <= KEEP {
        let mut key = [0; KEEP];
        key[..b.len()].copy_from_slice(b);
        LAST.set(Some((key, b.len(), stamp)));
    }
    Some(stamp)
}

/// Whether `b` (at most `key`'s length) is what `key` starts with. A time's
/// text is 16 to 32 bytes: two 16-byte compares, overlapping, see it all
/// without a call to `memcmp` (2 % of an audit's CPU, once per line).
fn same_kept<const N: usize>(key: &[u8; N], b: &[u8]) -> bool {
    let n = b.len();
    match (key.get(..n), n) {
        (Some(k), 16..) => {
            let ends = |s: &[u8]| -> Option<([u8; 16], [u8; 16])> {
                Some((*s.first_chunk::<16>()?, *s.last_chunk::<16>()?))
            };
            ends(k).is_some_and(|e| Some(e) == ends(b))
        }
        (Some(k), _) => k == b,
        (None, _) => false,
    }
}

fn clf_uncached(b: &[u8]) -> Option<Stamp> {
    if b.len() < 20 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' {
        return None;
    }
    let day = clf_day(b.first_chunk::<11>()?)?;
    let (h, mi, s) = (num(&b[12..14])?, num(&b[15..17])?, num(&b[18..20])?);
    let (ms, precision, used) = fraction(&b[20..])?;
    let rest = &b[20 + used..];
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let (off, used) = offset(rest)?;
    if used != rest.len() {
        return None;
    }
    let seconds = day * 86_400 + checked_time(h, mi, s)?;
    Some(Stamp::new(seconds - off, ms, precision))
}

/// The day of a CLF time (`10/Oct/2026`), in days since 1970. The last
/// one read is kept, a thread's own: a log's lines share their day, and
/// reading it was a third of reading the time.
fn clf_day(b: &[u8; 11]) -> Option<i64> {
    use std::cell::Cell;
    thread_local!(static LAST: Cell<Option<([u8; 11], i64)>> = const { Cell::new(None) });
    if let Some((key, days)) = LAST.get() {
        if &key == b {
            return Some(days);
        }
    }
    let (d, mo, y) = (num(&b[0..2])?, month(&b[3..6])?, num(&b[7..11])?);
    let days = checked_day(y, mo, d)?;
    LAST.set(Some((*b, days)));
    Some(days)
}

/// RFC 3339 / ISO 8601: `2026-03-01T01:00:00Z`, `2026-03-01T01:00:00.5+02:00`
/// (a space may stand for the `T`; no offset means UTC).
pub fn parse_rfc3339(text: &str) -> Option<Stamp> {
    let b = text.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, s) = (num(&b[11..13])?, num(&b[14..16])?, num(&b[17..19])?);
    let (ms, precision, used) = fraction(&b[19..])?;
    let (off, used2) = offset(&b[19 + used..])?;
    if 19 + used + used2 != b.len() {
        return None;
    }
    Some(Stamp::new(
        checked(y, mo, d, h, mi, s)? - off,
        ms,
        precision,
    ))
}

/// W3C's two fields, `2026-03-01` and `01:00:00` (UTC).
pub(crate) fn w3c(date: &str, time: &str) -> Option<Stamp> {
    let mut joined = String::with_capacity(date.len() + time.len() + 1);
    joined.push_str(date);
    joined.push('T');
    joined.push_str(time);
    parse_rfc3339(&joined)
}

/// Unix seconds with an optional fraction (`1693840791.7564995`).
pub(crate) fn unix_seconds(text: &str) -> Option<Stamp> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let secs = num(whole.as_bytes()).or_else(|| whole.parse().ok())?;
    let (ms, precision, _) = if frac.is_empty() {
        (0, 1000, 0)
    } else {
        fraction(&text.as_bytes()[whole.len()..])?
    };
    Some(Stamp::new(secs, ms, precision))
}

/// A JSON number or string of seconds, milliseconds or nanoseconds since
/// the epoch (told apart by size), or an RFC 3339 string.
pub(crate) fn json(v: &serde_json::Value) -> Option<Stamp> {
    match v {
        serde_json::Value::String(s) => parse_rfc3339(s).or_else(|| unix_seconds(s)),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(match i {
                    i if i > 100_000_000_000_000_000 => Stamp::new(0, i / 1_000_000, 1),
                    i if i > 100_000_000_000_000 => Stamp::new(0, i / 1000, 1),
                    i if i > 100_000_000_000 => Stamp::new(0, i, 1),
                    i => Stamp::new(i, 0, 1000),
                })
            } else {
                let f = n.as_f64()?;
                let ms = (f * 1000.0).round();
                (ms.is_finite() && ms.abs() < 1e17).then(|| Stamp::new(0, ms as i64, 1))
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {

    proptest::proptest! {
        /// The kept time's compare says what slice equality says, for
        /// texts of every length up to the kept size and a little past.
        #[test]
        fn a_kept_time_is_matched_exactly(
            a in proptest::collection::vec(b'0'..b'3', 0..=32),
            change in proptest::option::of((0usize..40, b'0'..b'3')),
            longer in proptest::collection::vec(b'0'..b'3', 0..=8),
        ) {
            // The same text, or one byte changed, or more bytes after it.
            let mut b = a.clone();
            match change {
                Some((i, x)) if i < b.len() => b[i] = x,
                Some(_) => b.extend_from_slice(&longer),
                None => {}
            }
            let mut key = [0u8; 32];
            key[..a.len()].copy_from_slice(&a);
            let kept = b.len() == a.len() && super::same_kept(&key, &b);
            proptest::prop_assert_eq!(kept, a == b);
        }
    }

    #[test]
    fn a_time_beyond_any_log_is_held_at_the_bound() {
        assert_eq!(Stamp::new(i64::MAX / 7, 999, 1).millis, Stamp::MAX_MILLIS);
        assert_eq!(Stamp::new(i64::MIN / 7, 0, 1000).millis, -Stamp::MAX_MILLIS);
        assert_eq!(Stamp::new(1_772_359_200, 123, 1).millis, 1_772_359_200_123);
    }

    use super::*;

    #[test]
    fn common_log_times() {
        let t = clf(b"10/Oct/2000:13:55:36 -0700").expect("clf");
        assert_eq!(t.millis, 971_211_336_000);
        assert_eq!(t.precision_ms, 1000);
        let t = clf(b"14/Jan/2015:12:48:57.127").expect("haproxy");
        assert_eq!((t.millis % 1000, t.precision_ms), (127, 1));
        assert!(clf(b"32/Oct/2000:13:55:36 -0700").is_none());
        assert!(clf(b"10/Foo/2000:13:55:36 -0700").is_none());
    }

    proptest::proptest! {
        /// The day kept from the line before never changes a reading:
        /// any two times read in turn read as each does alone, on a
        /// thread of its own.
        #[test]
        fn the_kept_day_never_changes_a_reading(
            a in "[0-3][0-9]/(Jan|Feb|Mar|Dec|Foo)/(1999|2026|0000):[0-2][0-9]:[0-6][0-9]:[0-6][0-9] [+-][01][0-9]00",
            b in "[0-3][0-9]/(Jan|Feb|Mar|Dec|Foo)/(1999|2026|0000):[0-2][0-9]:[0-6][0-9]:[0-6][0-9] [+-][01][0-9]00",
        ) {
            let alone = |t: String| std::thread::spawn(move || clf(t.as_bytes())).join().ok().flatten();
            let (first, second) = (clf(a.as_bytes()), clf(b.as_bytes()));
            proptest::prop_assert_eq!(first, alone(a));
            proptest::prop_assert_eq!(second, alone(b));
        }
    }

    #[test]
    fn rfc3339_times() {
        let a = parse_rfc3339("2026-03-01T01:00:00Z").expect("z");
        let b = parse_rfc3339("2026-03-01T03:00:00+02:00").expect("offset");
        assert_eq!(a.millis, b.millis);
        let c = parse_rfc3339("2021-12-08T14:02:43.587782192Z").expect("nanos");
        assert_eq!((c.millis % 1000, c.precision_ms), (587, 1));
        assert!(parse_rfc3339("2026-13-01T01:00:00Z").is_none());
        assert!(parse_rfc3339("2026-03-01T01:00:00Zjunk").is_none());
    }

    #[test]
    fn numbers() {
        let ns = serde_json::json!(1_712_790_000_100_000_000_i64);
        assert_eq!(json(&ns).expect("ns").millis, 1_712_790_000_100);
        let f = serde_json::json!(1_693_840_791.756_499_5);
        assert_eq!(json(&f).expect("float").millis, 1_693_840_791_756);
    }
}
