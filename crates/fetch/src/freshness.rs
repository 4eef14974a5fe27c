//! HTTP caching (RFC 9111): whether a response kept from before is still
//! fresh by its own `Cache-Control` and `Expires`, so it need not be asked
//! for again (a recrawl's pages, a crawler's published identity files).
//! Sans-IO: the stored header values and the instants in, a verdict out.
//!
//! A crawler keeps its copies as a cache does: the freshness lifetime is
//! `s-maxage`, else `max-age`, else `Expires` less `Date` (§4.2.1); the
//! page's age is its apparent age at the fetch (`Date` to the fetch, or
//! `Age` if larger) plus the time since (§4.2.3); fresh while the lifetime
//! exceeds the age. `no-cache` and `must-revalidate` pages are always
//! revalidated (asked for conditionally); `no-store` pages are asked for
//! again without validators. No heuristic freshness: a page that states
//! none is asked for (conditionally) as before.

use mannerly_time::{parse_http_date, UnixMillis};

/// What a recrawl does with a page fetched before, by its caching headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Still fresh for this many more milliseconds: not requested.
    Fresh {
        /// Milliseconds of freshness left.
        left_ms: u64,
        /// The directive that gave the lifetime (`s-maxage`, `max-age`,
        /// `Expires`).
        by: &'static str,
    },
    /// Stale, or stating no freshness, or `no-cache`/`must-revalidate`:
    /// asked for with its validators.
    Revalidate,
    /// `no-store`: asked for again, without validators (nothing was to be
    /// kept to validate against).
    Refetch,
}

/// The caching headers a page's last response carried, as stored.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stored<'a> {
    /// `Cache-Control`.
    pub cache_control: Option<&'a str>,
    /// `Expires`.
    pub expires: Option<&'a str>,
    /// `Date`.
    pub date: Option<&'a str>,
    /// `Age`.
    pub age: Option<&'a str>,
}

/// The directives of a `Cache-Control` value this module reads.
#[derive(Debug, Default, PartialEq, Eq)]
struct Directives {
    max_age: Option<u64>,
    s_maxage: Option<u64>,
    no_cache: bool,
    no_store: bool,
    must_revalidate: bool,
}

fn directives(value: &str) -> Directives {
    let mut d = Directives::default();
    for part in value.split(',') {
        let (name, arg) = match part.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a.trim().trim_matches('"'))),
            None => (part.trim(), None),
        };
        let secs = || arg.and_then(|a| a.parse::<u64>().ok());
        match name.to_ascii_lowercase().as_str() {
            // A directive given twice with different values makes the
            // response stale (§4.2.1): the smaller is kept, which is as safe.
            "max-age" => d.max_age = min_of(d.max_age, secs()),
            "s-maxage" => d.s_maxage = min_of(d.s_maxage, secs()),
            // `no-cache="field"` only forbids reusing those fields: still
            // revalidated here, the safe reading.
            "no-cache" => d.no_cache = true,
            "no-store" => d.no_store = true,
            "must-revalidate" | "proxy-revalidate" => d.must_revalidate = true,
            _ => {}
        }
    }
    d
}

fn min_of(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What to do with a page its last response (`stored`, received at
/// `fetched`) describes, at `now`.
pub fn reuse(stored: Stored<'_>, fetched: UnixMillis, now: UnixMillis) -> Reuse {
    let d = stored.cache_control.map(directives).unwrap_or_default();
    if d.no_store {
        return Reuse::Refetch;
    }
    if d.no_cache || d.must_revalidate {
        return Reuse::Revalidate;
    }
    let date = stored.date.and_then(parse_http_date);
    let (lifetime_ms, by) = match (d.s_maxage, d.max_age, stored.expires) {
        (Some(s), _, _) => (s.saturating_mul(1000), "s-maxage"),
        (None, Some(s), _) => (s.saturating_mul(1000), "max-age"),
        (None, None, Some(e)) => match (parse_http_date(e), date) {
            // An Expires that cannot be read means already expired.
            (Some(e), Some(d)) => (e.0.saturating_sub(d.0), "Expires"),
            (Some(e), None) => (e.0.saturating_sub(fetched.0), "Expires"),
            (None, _) => return Reuse::Revalidate,
        },
        (None, None, None) => return Reuse::Revalidate,
    };
    let apparent = date.map_or(0, |d| fetched.0.saturating_sub(d.0));
    let age_value = stored
        .age
        .and_then(|a| a.trim().parse::<u64>().ok())
        .map_or(0, |s| s.saturating_mul(1000));
    let age = apparent.max(age_value) + now.0.saturating_sub(fetched.0);
    if lifetime_ms > age {
        Reuse::Fresh {
            left_ms: lifetime_ms - age,
            by,
        }
    } else {
        Reuse::Revalidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mannerly_time::fmt_http_date;

    const T: UnixMillis = UnixMillis(1_800_000_000_000);

    fn cc(value: &str) -> Stored<'_> {
        Stored {
            cache_control: Some(value),
            ..Stored::default()
        }
    }

    #[test]
    fn max_age_counts_from_the_fetch_and_the_age_it_had_then() {
        let now = T.add_millis(60_000);
        assert!(matches!(
            reuse(cc("max-age=120"), T, now),
            Reuse::Fresh {
                left_ms: 60_000,
                by: "max-age"
            }
        ));
        assert_eq!(reuse(cc("max-age=60"), T, now), Reuse::Revalidate);
        // Thirty seconds old already when fetched (Age), so stale sooner.
        let aged = Stored {
            age: Some("30"),
            ..cc("max-age=80")
        };
        assert_eq!(reuse(aged, T, now), Reuse::Revalidate);
        // s-maxage comes first.
        assert!(matches!(
            reuse(cc("max-age=10, s-maxage=600"), T, now),
            Reuse::Fresh { by: "s-maxage", .. }
        ));
    }

    #[test]
    fn expires_is_read_against_the_responses_date() {
        let date = fmt_http_date(T);
        let expires = fmt_http_date(T.add_millis(3_600_000));
        let stored = Stored {
            expires: Some(&expires),
            date: Some(&date),
            ..Stored::default()
        };
        assert!(matches!(
            reuse(stored, T, T.add_millis(600_000)),
            Reuse::Fresh {
                left_ms: 3_000_000,
                by: "Expires"
            }
        ));
        assert_eq!(reuse(stored, T, T.add_millis(3_600_000)), Reuse::Revalidate);
        let bad = Stored {
            expires: Some("0"),
            ..stored
        };
        assert_eq!(
            reuse(bad, T, T),
            Reuse::Revalidate,
            "an unreadable Expires is past"
        );
        // max-age wins over Expires.
        let both = Stored {
            cache_control: Some("max-age=0"),
            ..stored
        };
        assert_eq!(reuse(both, T, T.add_millis(1)), Reuse::Revalidate);
    }

    #[test]
    fn no_cache_must_revalidate_and_no_store_are_never_reused() {
        let later = T.add_millis(1_000);
        assert_eq!(
            reuse(cc("max-age=3600, no-cache"), T, later),
            Reuse::Revalidate
        );
        assert_eq!(
            reuse(cc("max-age=3600, Must-Revalidate"), T, later),
            Reuse::Revalidate
        );
        assert_eq!(
            reuse(cc("no-store, max-age=3600"), T, later),
            Reuse::Refetch
        );
        assert_eq!(reuse(Stored::default(), T, later), Reuse::Revalidate);
        assert_eq!(reuse(cc("max-age=abc"), T, later), Reuse::Revalidate);
    }

    proptest::proptest! {
        /// Never fresh past its lifetime, whatever the headers say.
        #[test]
        fn never_fresh_past_the_lifetime(max_age in 0u64..100_000, after in 0u64..200_000_000, age in 0u64..1000) {
            let a = age.to_string();
            let value = format!("max-age={max_age}");
            let stored = Stored { age: Some(&a), ..cc(&value) };
            if let Reuse::Fresh { left_ms, .. } = reuse(stored, T, T.add_millis(after)) {
                proptest::prop_assert!(after + age * 1000 + left_ms == max_age * 1000);
            }
        }
    }
}
