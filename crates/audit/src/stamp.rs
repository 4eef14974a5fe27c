//! How the report writes a log line's instant.

/// Unix milliseconds as RFC 3339 (UTC, milliseconds); an instant before
/// 1970 is written as the epoch.
pub(crate) fn rfc3339(millis: i64) -> String {
    mannerly_time::UnixMillis(u64::try_from(millis).unwrap_or(0)).to_rfc3339_millis()
}
