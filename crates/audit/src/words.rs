//! Words the reports share: a count with its noun, a duration as
//! precisely as the log knows it.

/// `n` and the noun, singular or plural: `1 request`, `2 requests`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Milliseconds as seconds, to the log's precision: `1 s` from a log of
/// whole seconds (not `1.000 s`, which it cannot know), `1.250 s` from one
/// of milliseconds.
pub fn seconds(ms: i64, precision_ms: u32) -> String {
    let s = ms as f64 / 1000.0;
    match precision_ms {
        p if p >= 1000 => format!("{s:.0} s"),
        p if p >= 100 => format!("{s:.1} s"),
        p if p >= 10 => format!("{s:.2} s"),
        _ => format!("{s:.3} s"),
    }
}

/// Milliseconds a rule or an answer gave (a Crawl-delay, a Retry-After),
/// as seconds to the millisecond with no trailing zeros: `2 s`, `0.5 s`.
pub fn exact_seconds(ms: i64) -> String {
    format!("{} s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds_are_said_as_precisely_as_the_log_knows_them() {
        use super::seconds;
        assert_eq!(seconds(1000, 1000), "1 s");
        assert_eq!(seconds(2000, 1000), "2 s");
        assert_eq!(seconds(1250, 1), "1.250 s");
        assert_eq!(seconds(1250, 100), "1.2 s");
        use super::exact_seconds;
        assert_eq!(exact_seconds(2000), "2 s");
        assert_eq!(exact_seconds(500), "0.5 s");
        assert_eq!(exact_seconds(60_000), "60 s");
    }
}
