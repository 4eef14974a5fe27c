//! Times in messages and headers.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `2026-11-20T10:00Z` (UTC, to the minute; seconds shown when not zero).
pub fn fmt_time(t: SystemTime) -> String {
    let secs = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    if ss == 0 {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
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

/// Parses an HTTP-date (RFC 9110 §5.6.7, all three historic forms).
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(s.trim()).ok()
}

/// Formats an HTTP-date.
pub fn fmt_http_date(t: SystemTime) -> String {
    httpdate::fmt_http_date(t)
}

/// A fixed, readable start time for tests: 2026-11-20T10:00Z.
pub fn test_epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_795_168_800)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_time(UNIX_EPOCH), "1970-01-01T00:00Z");
        assert_eq!(fmt_time(test_epoch()), "2026-11-20T10:00Z");
        assert_eq!(
            fmt_time(test_epoch() + Duration::from_secs(61)),
            "2026-11-20T10:01:01Z"
        );
        assert_eq!(
            fmt_time(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00Z"
        );
    }
}
