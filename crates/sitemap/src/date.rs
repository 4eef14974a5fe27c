//! W3C Datetime (the profile of ISO 8601 sitemaps use) and RFC 822 dates
//! (RSS). Invalid dates are `None`, never an error.

/// A parsed `lastmod`: what was written, and the instant it denotes (UTC
/// seconds since the epoch; a date without a time is its midnight UTC).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LastMod {
    /// The value as written.
    pub raw: String,
    /// `None` when the value is not a valid date: "unknown".
    pub unix: Option<i64>,
}

impl LastMod {
    /// A W3C datetime (`2026-11-20`, `2026-11-20T10:00:00+01:00`), parsed if valid.
    pub fn w3c(raw: &str) -> LastMod {
        LastMod {
            raw: raw.to_owned(),
            unix: parse_w3c(raw),
        }
    }

    /// An RFC 822 date (RSS `pubDate`), parsed if valid.
    pub fn rfc822(raw: &str) -> LastMod {
        LastMod {
            raw: raw.to_owned(),
            unix: parse_rfc822(raw).or_else(|| parse_w3c(raw)),
        }
    }
}

fn digits(s: &str, n: usize) -> Option<i64> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn instant(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, offset_min: i64) -> Option<i64> {
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60)
}

/// `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDThh:mmTZD`,
/// `YYYY-MM-DDThh:mm:ssTZD`, `YYYY-MM-DDThh:mm:ss.sTZD`; TZD is `Z` or
/// `±hh:mm`. Also accepted, as real files use them: a space instead of `T`,
/// `±hhmm`, and a missing TZD (read as UTC).
pub fn parse_w3c(s: &str) -> Option<i64> {
    let s = s.trim();
    let y = digits(s.get(..4)?, 4)?;
    if s.len() == 4 {
        return instant(y, 1, 1, 0, 0, 0, 0);
    }
    if s.as_bytes().get(4) != Some(&b'-') {
        return None;
    }
    let mo = digits(s.get(5..7)?, 2)?;
    if s.len() == 7 {
        return instant(y, mo, 1, 0, 0, 0, 0);
    }
    if s.as_bytes().get(7) != Some(&b'-') {
        return None;
    }
    let d = digits(s.get(8..10)?, 2)?;
    if s.len() == 10 {
        return instant(y, mo, d, 0, 0, 0, 0);
    }
    if !matches!(s.as_bytes().get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let rest = &s[11..];
    let h = digits(rest.get(..2)?, 2)?;
    if rest.as_bytes().get(2) != Some(&b':') {
        return None;
    }
    let mi = digits(rest.get(3..5)?, 2)?;
    let mut i = 5;
    let mut sec = 0;
    if rest.as_bytes().get(5) == Some(&b':') {
        sec = digits(rest.get(6..8)?, 2)?;
        i = 8;
        if rest.as_bytes().get(8) == Some(&b'.') {
            let frac = rest[9..].bytes().take_while(u8::is_ascii_digit).count();
            if frac == 0 {
                return None;
            }
            i = 9 + frac;
        }
    }
    let tz = &rest[i..];
    let offset = match tz {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match tz.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let body = &tz[1..];
            // `get` keeps a crafted non-ASCII zone from splitting a char.
            let (oh, om) = match body.len() {
                5 if body.as_bytes()[2] == b':' => {
                    (digits(body.get(..2)?, 2)?, digits(body.get(3..)?, 2)?)
                }
                4 => (digits(body.get(..2)?, 2)?, digits(body.get(2..)?, 2)?),
                2 => (digits(body, 2)?, 0),
                _ => return None,
            };
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 60 + om)
        }
    };
    instant(y, mo, d, h, mi, sec, offset)
}

/// RFC 822 / RFC 2822 dates as RSS uses them: `Sat, 07 Sep 2002 00:00:01 GMT`,
/// with or without the weekday, numeric zones or the common names.
pub fn parse_rfc822(s: &str) -> Option<i64> {
    let s = s.trim();
    let s = match s.find(',') {
        Some(i) => s[i + 1..].trim(),
        None => s,
    };
    let mut parts = s.split_ascii_whitespace();
    let d: i64 = parts.next()?.parse().ok()?;
    let mon = parts.next()?.to_ascii_lowercase();
    let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let mo = months.iter().position(|m| mon.starts_with(m))? as i64 + 1;
    let y: i64 = parts.next()?.parse().ok()?;
    let y = if y < 100 {
        if y < 50 {
            2000 + y
        } else {
            1900 + y
        }
    } else {
        y
    };
    let time = parts.next().unwrap_or("00:00:00");
    let mut t = time.split(':');
    let h: i64 = t.next()?.parse().ok()?;
    let mi: i64 = t.next()?.parse().ok()?;
    let sec: i64 = t.next().map_or(Some(0), |x| x.parse().ok())?;
    // RFC 822 requires a zone; without one the instant is unknown.
    let zone = parts.next()?;
    let offset = match zone.to_ascii_uppercase().as_str() {
        "GMT" | "UT" | "UTC" | "Z" => 0,
        "EST" => -300,
        "EDT" => -240,
        "CST" => -360,
        "CDT" => -300,
        "MST" => -420,
        "MDT" => -360,
        "PST" => -480,
        "PDT" => -420,
        z if z.len() == 5 && (z.starts_with('+') || z.starts_with('-')) => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            sign * (z.get(1..3)?.parse::<i64>().ok()? * 60 + z.get(3..5)?.parse::<i64>().ok()?)
        }
        _ => return None,
    };
    instant(y, mo, d, h, mi, sec, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_w3c_form() {
        let day = parse_w3c("2005-01-01");
        assert_eq!(day, Some(1_104_537_600));
        assert_eq!(parse_w3c("2005"), day);
        assert_eq!(parse_w3c("2005-01"), day);
        assert_eq!(parse_w3c("2005-01-01T00:00Z"), day);
        assert_eq!(parse_w3c("2005-01-01T00:00:00Z"), day);
        assert_eq!(parse_w3c("2005-01-01T00:00:00.123456Z"), day);
        assert_eq!(parse_w3c("2005-01-01T01:00:00+01:00"), day);
        assert_eq!(parse_w3c("2004-12-31T19:00:00-05:00"), day);
        assert_eq!(parse_w3c("2005-01-01T01:00+0100"), day);
        assert_eq!(parse_w3c("2005-01-01 00:00:00"), day);
        for bad in [
            "",
            "05-01-01",
            "2005-13-01",
            "2005-02-30",
            "2005-01-01T25:00Z",
            "2005-01-01T00:00:00.Z",
            "yesterday",
            "2005/01/01",
            "2005-01-01T00:00+25:00",
        ] {
            assert_eq!(parse_w3c(bad), None, "{bad}");
        }
        assert_eq!(parse_w3c("2024-02-29"), Some(1_709_164_800));
    }

    #[test]
    fn crafted_non_ascii_zones_do_not_panic() {
        for z in ["+1é2", "+é12", "+1éé", "-ab:é"] {
            assert_eq!(parse_w3c(&format!("2005-01-01T00:00:00{z}")), None, "{z}");
            assert_eq!(
                parse_rfc822(&format!("01 Jan 2005 00:00:00 {z}")),
                None,
                "{z}"
            );
        }
    }

    #[test]
    fn rfc822() {
        assert_eq!(
            parse_rfc822("Sat, 01 Jan 2005 00:00:00 GMT"),
            parse_w3c("2005-01-01")
        );
        assert_eq!(
            parse_rfc822("01 Jan 2005 01:00:00 +0100"),
            parse_w3c("2005-01-01")
        );
        assert_eq!(
            parse_rfc822("Fri, 31 Dec 2004 16:00 PST"),
            parse_w3c("2005-01-01")
        );
        assert_eq!(parse_rfc822("not a date"), None);
    }
}
