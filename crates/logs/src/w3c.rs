//! W3C extended log files (IIS, CloudFront): `#Fields:` names the
//! columns, separated by spaces (IIS) or tabs (CloudFront). CloudFront's
//! standard logs without their header lines use CloudFront's columns.

use std::borrow::Cow;

use crate::{bytes_of, client_of, host_of, stamp, status_of, Entry, LineError};

/// CloudFront's standard log columns, for files without a `#Fields` line.
const CLOUDFRONT: &str = "date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Date,
    Time,
    Client,
    Method,
    Stem,
    Query,
    Status,
    Bytes,
    Agent,
    Host,
    User,
    Other,
}

/// The columns of one W3C file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Columns {
    cols: Vec<Col>,
    /// Whether values are percent-encoded (CloudFront) rather than
    /// `+`-for-space (IIS).
    percent: bool,
}

impl Columns {
    pub(crate) fn cloudfront() -> Columns {
        Columns::from_names(CLOUDFRONT, true)
    }

    fn from_names(names: &str, percent: bool) -> Columns {
        let cols = names
            .split_ascii_whitespace()
            .map(|n| match n.to_ascii_lowercase().as_str() {
                // IIS Advanced Logging writes local time under these names,
                // with no offset to say so: read as written.
                "date" | "date-local" | "date-utc" => Col::Date,
                "time" | "time-local" | "time-utc" => Col::Time,
                "c-ip" => Col::Client,
                "cs-method" => Col::Method,
                "cs-uri-stem" => Col::Stem,
                "cs-uri-query" => Col::Query,
                "sc-status" => Col::Status,
                "sc-bytes" => Col::Bytes,
                "cs(user-agent)" => Col::Agent,
                "cs-host" | "cs(host)" | "x-host-header" => Col::Host,
                "cs-username" => Col::User,
                _ => Col::Other,
            })
            .collect();
        Columns { cols, percent }
    }

    /// Reads a `#` directive; `#Fields:` replaces the columns.
    pub(crate) fn directive(&mut self, line: &str) {
        if let Some(names) = line.strip_prefix("#Fields:") {
            *self = Columns::from_names(names, names.contains("x-edge-"));
        }
    }

    pub(crate) fn parse<'a>(&self, line: &'a str) -> Result<Entry<'a>, LineError> {
        let sep = if line.contains('\t') { '\t' } else { ' ' };
        let (values, quoted): (Vec<&str>, Vec<bool>) = split_fields(line, sep).into_iter().unzip();
        if values.len() != self.cols.len() {
            return Err(LineError::field(
                "#Fields",
                format!("{} values for {} columns", values.len(), self.cols.len()),
            ));
        }
        let get = |c: Col| {
            self.cols
                .iter()
                .position(|&x| x == c)
                .map(|i| values[i])
                .filter(|v| *v != "-")
        };
        let (date, time) = (get(Col::Date), get(Col::Time));
        let stamp = match (date, time) {
            (Some(d), Some(t)) => stamp::w3c(d, t),
            _ => None,
        }
        .ok_or_else(|| LineError::field("date time", "missing or not a time"))?;
        let stem = get(Col::Stem).ok_or_else(|| LineError::field("cs-uri-stem", "missing"))?;
        let target = match get(Col::Query) {
            Some(q) => Cow::Owned(format!("{stem}?{q}")),
            None => Cow::Borrowed(stem),
        };
        let host = if self.percent {
            // CloudFront's cs(Host) is its own distribution name; the
            // site is x-host-header, which comes later.
            let at = self.cols.iter().rposition(|&c| c == Col::Host);
            at.map(|i| values[i]).filter(|v| *v != "-")
        } else {
            get(Col::Host)
        };
        Ok(Entry {
            stamp,
            client: get(Col::Client).and_then(client_of),
            host: host.and_then(|h| host_of(Cow::Borrowed(h))),
            method: Cow::Borrowed(get(Col::Method).unwrap_or("GET")),
            target,
            status: get(Col::Status).and_then(status_of),
            bytes: get(Col::Bytes).and_then(bytes_of),
            user_agent: match self.cols.iter().position(|&x| x == Col::Agent) {
                // A quoted value is as it was sent; an unquoted one has
                // `+` (or `%20`) for its spaces.
                Some(i) if quoted.get(i) == Some(&true) => Cow::Borrowed(values[i]),
                _ => get(Col::Agent).map_or(Cow::Borrowed(""), |a| self.decode(a)),
            },
            retry_after: None,
            retry_after_logged: false,
            user: get(Col::User).map(Cow::Borrowed),
            gate: None,
            signature: None,
        })
    }

    fn decode<'a>(&self, v: &'a str) -> Cow<'a, str> {
        if self.percent {
            percent_decode(v)
        } else if v.contains('+') {
            Cow::Owned(v.replace('+', " "))
        } else {
            Cow::Borrowed(v)
        }
    }
}

/// A line's values, each with whether it was quoted: split at `sep`,
/// except inside a value in double quotes (IIS Advanced Logging quotes its
/// values, spaces and all), whose quotes are taken off.
fn split_fields(line: &str, sep: char) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        if let Some(inner) = rest.strip_prefix('"') {
            // The closing quote is the one followed by the separator or
            // the end of the line.
            let close = inner
                .match_indices('"')
                .map(|(i, _)| i)
                .find(|&i| inner[i + 1..].is_empty() || inner[i + 1..].starts_with(sep));
            if let Some(i) = close {
                out.push((&inner[..i], true));
                match inner[i + 1..].strip_prefix(sep) {
                    Some(next) => rest = next,
                    None => return out,
                }
                continue;
            }
        }
        match rest.split_once(sep) {
            Some((value, next)) => {
                out.push((value, false));
                rest = next;
            }
            None => {
                out.push((rest, false));
                return out;
            }
        }
    }
}

/// `%20` → ` ` (CloudFront encodes spaces and some bytes twice: `%2520`
/// decodes once, as CloudFront documents).
fn percent_decode(v: &str) -> Cow<'_, str> {
    if !v.contains('%') {
        return Cow::Borrowed(v);
    }
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iis() {
        let mut c = Columns::cloudfront();
        c.directive("#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken");
        let e = c
            .parse("2026-03-01 10:00:00 10.0.0.1 GET /a q=1 443 - 192.0.2.9 Mozilla/5.0+(compatible;+bingbot/2.0) - 200 0 0 15")
            .expect("iis");
        assert_eq!(e.target, "/a?q=1");
        assert_eq!(e.user_agent, "Mozilla/5.0 (compatible; bingbot/2.0)");
        assert_eq!(percent_decode("a%20b%2"), "a b%2");
    }

    #[test]
    fn iis_advanced_logging_quotes_its_values() {
        let mut c = Columns::cloudfront();
        c.directive("#Fields: date-local time-local s-computername c-ip cs-method cs-uri-stem cs-uri-query sc-status cs(User-Agent) cs(Referer)");
        let e = c
            .parse(r#"2026-03-01 10:00:00 "WEB01" "192.0.2.9" "GET" "/a b" "q=1" 200 "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)" "-""#)
            .expect("quoted");
        assert_eq!(e.target, "/a b?q=1");
        assert_eq!(e.status, Some(200));
        assert_eq!(
            e.user_agent,
            "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
        );
        fn values(l: &str) -> Vec<&str> {
            split_fields(l, ' ').into_iter().map(|v| v.0).collect()
        }
        assert_eq!(values(r#"a "b c" "" d"#), ["a", "b c", "", "d"]);
        assert_eq!(values(r#""un closed x"#), ["\"un", "closed", "x"]);
    }
}
