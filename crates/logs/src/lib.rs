//! Access logs read into one request record.
//!
//! A site's servers, proxies and CDNs each write their own layout; an
//! audit needs the same few facts from all of them: when, from which
//! address, to which host and path, the answer's status and size, the
//! User-Agent, and (where the server logs them) the user it was made as,
//! the Retry-After it sent and the Web Bot Auth signature headers.
//! [`Entry`] holds those; a [`Parser`] makes entries from one file's
//! lines; [`detect`] finds a file's [`Format`] from its first lines;
//! [`open`] reads plain, gzip and zstd files and [`Lines`] splits them
//! with a cap on a line's length.
//!
//! ```
//! use mannerly_logs::{detect, Format};
//!
//! let line = r#"192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /a?b=1 HTTP/1.1" 200 512 "-" "Mozilla/5.0 (compatible; Googlebot/2.1)""#;
//! let mut parser = detect(&[line]).expect("a combined log");
//! assert_eq!(parser.format(), Format::Combined);
//! let entry = parser.parse(line).expect("readable").expect("a request");
//! assert_eq!(entry.target, "/a?b=1");
//! assert_eq!(entry.status, Some(200));
//! assert_eq!(entry.stamp.millis, 1_791_640_536_000);
//! ```
//!
//! # Design notes
//!
//! - **Borrowed where possible.** Fields point into the line; only an
//!   escaped value (`\"` in a quoted field, `%20` in CloudFront, JSON
//!   escapes) is copied.
//! - **One file, one format**, found by trying every format on the first
//!   lines and keeping the one that reads most of them. A line the format
//!   cannot read is an error the caller counts; it never ends the file.
//! - **Time as logged, with its precision.** A stamp keeps how precise the
//!   log was (a second for combined logs, a millisecond or better for the
//!   others), so a judge of gaps knows how much a gap may be off.

#![deny(missing_docs)]

mod apache;
mod clf;
mod detect;
mod elb;
mod haproxy;
mod json;
mod nginx;
mod read;
mod s3;
mod scan;
mod stamp;
#[cfg(unix)]
pub mod tail;
mod w3c;

use std::borrow::Cow;
use std::net::IpAddr;

pub use apache::{apache_to_nginx, ApacheFormatError};
pub use detect::{detect, Format, Layout, LayoutError, Parser, UnknownFormat};
pub use json::JsonFieldsError;
pub use nginx::LogFormatError;
pub use read::{open, Batch, Lines, OpenError, MAX_LINE};
pub use stamp::{parse_rfc3339, Stamp};

/// One request as a log recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// When, as logged.
    pub stamp: Stamp,
    /// The client's address (the peer, or the client a proxy names).
    pub client: Option<IpAddr>,
    /// The virtual host, when the log has one (without a port).
    pub host: Option<Cow<'a, str>>,
    /// The method (empty when the request line was not HTTP).
    pub method: Cow<'a, str>,
    /// Path and query as requested (the raw request text when the request
    /// line was not HTTP).
    pub target: Cow<'a, str>,
    /// The status sent, when logged (`None` for `-` or 0).
    pub status: Option<u16>,
    /// Bytes sent, when logged.
    pub bytes: Option<u64>,
    /// The User-Agent (empty when absent or `-`).
    pub user_agent: Cow<'a, str>,
    /// The Retry-After header the server sent, when the log records it.
    pub retry_after: Option<Cow<'a, str>>,
    /// Whether the line's layout records Retry-After (an nginx
    /// `log_format` or Apache `LogFormat` with it, nginx JSON with
    /// `sent_http_retry_after`, Caddy's response headers), so that
    /// `retry_after: None` means the server sent none; when false, the log
    /// cannot tell.
    pub retry_after_logged: bool,
    /// The Web Bot Auth headers, when the log records them.
    pub signature: Option<Box<Signature<'a>>>,
    /// The user the request was made as, when the log records one (`%u`
    /// of common and combined logs, nginx's `$remote_user`, S3's
    /// requester, W3C's `cs-username`, Caddy's `user_id`, Traefik's
    /// `ClientUsername`); `None` for `-` or empty. Most servers log a user
    /// they authenticated; nginx logs the Basic name a client sends,
    /// checked or not.
    pub user: Option<Cow<'a, str>>,
    /// What `mannerly gate` answered (`allow`, `deny`, `slow`), when the
    /// log records its `X-Mannerly-Action` (an nginx `log_format` with
    /// `$gate_action` or `$upstream_http_x_mannerly_action`).
    pub gate: Option<Cow<'a, str>>,
}

impl Entry<'_> {
    /// Whether the request came with credentials the server accepted, as
    /// far as the log can show: a user is logged and the answer was not
    /// 401, 403 or 407 (a server logs the name a client gave even when it
    /// refused the password). Such a request is the site's own user, not
    /// a stranger's crawler.
    pub fn signed_in(&self) -> bool {
        self.user.is_some() && !matches!(self.status, Some(401 | 403 | 407))
    }

    /// The entry with every field owned, free of the line it came from.
    pub fn into_owned(self) -> Entry<'static> {
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        Entry {
            stamp: self.stamp,
            client: self.client,
            host: self.host.map(own),
            method: own(self.method),
            target: own(self.target),
            status: self.status,
            bytes: self.bytes,
            user_agent: own(self.user_agent),
            retry_after: self.retry_after.map(own),
            retry_after_logged: self.retry_after_logged,
            user: self.user.map(own),
            gate: self.gate.map(own),
            signature: self.signature.map(|s| {
                Box::new(Signature {
                    signature: own(s.signature),
                    input: own(s.input),
                    agent: s.agent.map(own),
                })
            }),
        }
    }
}

/// A logged user name: `None` for `-` or empty.
fn user_of(s: Cow<'_, str>) -> Option<Cow<'_, str>> {
    Some(s).filter(|u| !u.is_empty() && u != "-")
}

/// The Web Bot Auth headers of a request (RFC 9421 `Signature` and
/// `Signature-Input`, and `Signature-Agent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature<'a> {
    /// `Signature`.
    pub signature: Cow<'a, str>,
    /// `Signature-Input`.
    pub input: Cow<'a, str>,
    /// `Signature-Agent`, if sent.
    pub agent: Option<Cow<'a, str>>,
}

/// Why a line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// A field the format needs is missing or has the wrong shape.
    #[error("{field}: {problem}")]
    Field {
        /// The field, as the format names it.
        field: &'static str,
        /// What was wrong.
        problem: String,
    },
    /// The line is not in this file's format at all.
    #[error("not a {0} line")]
    NotThisFormat(Format),
    /// The line is longer than [`MAX_LINE`] bytes.
    #[error("longer than {MAX_LINE} bytes")]
    TooLong,
}

impl LineError {
    fn field(field: &'static str, problem: impl Into<String>) -> LineError {
        LineError::Field {
            field,
            problem: problem.into(),
        }
    }
}

/// Splits `METHOD TARGET PROTO` into method and target; a request line
/// that is not HTTP gives an empty method and the text as the target.
fn request_line(request: Cow<'_, str>) -> (Cow<'_, str>, Cow<'_, str>) {
    let text: &str = &request;
    let b = text.as_bytes();
    // A method is a few bytes: a plain scan beats starting a vector search.
    let Some(m_end) = b.iter().position(|&c| c == b' ') else {
        return (Cow::Borrowed(""), request);
    };
    let t_end = memchr::memchr(b' ', &b[m_end + 1..]).map_or(b.len(), |i| m_end + 1 + i);
    // Spaces are ASCII: these are char boundaries.
    let (m, t) = (&text[..m_end], &text[m_end + 1..t_end]);
    let looks_http = !m.is_empty()
        && m.bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_')
        && !t.is_empty();
    if !looks_http {
        return (Cow::Borrowed(""), request);
    }
    let (m, t) = (m.len(), m.len() + 1..m.len() + 1 + t.len());
    match request {
        Cow::Borrowed(s) => (Cow::Borrowed(&s[..m]), Cow::Borrowed(&s[t])),
        Cow::Owned(s) => (Cow::Owned(s[..m].to_owned()), Cow::Owned(s[t].to_owned())),
    }
}

/// A target given as an absolute URL (ALB, ELB, proxies) split into host
/// and path; other targets are returned as they are.
fn split_absolute(target: Cow<'_, str>) -> (Option<Cow<'_, str>>, Cow<'_, str>) {
    let Some(rest) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    else {
        return (None, target);
    };
    let start = target.len() - rest.len();
    let end = rest.find(['/', '?']).map_or(target.len(), |i| start + i);
    let authority = &target[start..end];
    let host = strip_port(authority).to_ascii_lowercase();
    let path = if end == target.len() {
        "/".to_owned()
    } else {
        target[end..].to_owned()
    };
    (Some(Cow::Owned(host)), Cow::Owned(path))
}

/// `host:port` → `host` (and `[v6]:port` → `v6`).
fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

/// A host as every part of mannerly compares hosts: lower-cased, without
/// its port, an IPv6 literal without its brackets (`[::1]:8080` is `::1`,
/// `A.test:80` is `a.test`); `-` and empty are none. Log lines' hosts are
/// read so, and whatever is compared with them (evidence records, the
/// robots.txt book's hosts) must be too.
pub fn host_key(authority: &str) -> Option<Cow<'_, str>> {
    host_of(Cow::Borrowed(authority))
}

/// [`host_key`] of a field that may be owned already.
fn host_of(raw: Cow<'_, str>) -> Option<Cow<'_, str>> {
    if raw.is_empty() || raw == "-" {
        return None;
    }
    let bare = strip_port(&raw);
    if bare.len() == raw.len() && !raw.bytes().any(|b| b.is_ascii_uppercase()) {
        return Some(raw);
    }
    Some(Cow::Owned(bare.to_ascii_lowercase()))
}

/// A status field: `-`, `0` and non-numbers are none.
fn status_of(s: &str) -> Option<u16> {
    s.parse::<u16>().ok().and_then(valid_status)
}

/// A status number, when it is one a server sends.
fn valid_status(n: u16) -> Option<u16> {
    (100..=999).contains(&n).then_some(n)
}

/// A byte count: `-` is none.
fn bytes_of(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// A client field: an address, possibly with a port.
fn client_of(s: &str) -> Option<IpAddr> {
    if let Some(v4) = dotted_quad(s.as_bytes()) {
        return Some(IpAddr::V4(v4));
    }
    s.parse()
        .ok()
        .or_else(|| strip_port(s).parse().ok())
        .or_else(|| s.rsplit_once(':').and_then(|(a, _)| a.parse().ok()))
}

/// An IPv4 address in the form every log writes (four decimal parts,
/// none with a leading zero), read without the general parser; `None`
/// for anything else, which the general parser then reads as it would.
fn dotted_quad(b: &[u8]) -> Option<std::net::Ipv4Addr> {
    if b.len() < 7 || b.len() > 15 {
        return None;
    }
    // One pass: the part being read, its value and its digits so far.
    let mut parts = [0u8; 4];
    let (mut part, mut value, mut digits) = (0, 0u16, 0);
    for &c in b {
        if c == b'.' {
            let slot = parts.get_mut(part).filter(|_| digits > 0 && part < 3)?;
            *slot = u8::try_from(value).ok()?;
            (part, value, digits) = (part + 1, 0, 0);
            continue;
        }
        let d = c.wrapping_sub(b'0');
        // A digit; at most three to a part, and none after a leading zero.
        if d > 9 || digits == 3 || (digits == 1 && value == 0) {
            return None;
        }
        (value, digits) = (value * 10 + u16::from(d), digits + 1);
    }
    if part != 3 || digits == 0 {
        return None;
    }
    parts[3] = u8::try_from(value).ok()?;
    Some(parts.into())
}

/// `-` and empty mean no value.
fn dash_empty(s: Cow<'_, str>) -> Cow<'_, str> {
    if s == "-" {
        Cow::Borrowed("")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The quick reading of an IPv4 address agrees with the general
        /// parser wherever it answers, and answers for every address.
        #[test]
        fn dotted_quads_read_as_the_general_parser_reads_them(
            s in "[0-9.]{0,17}",
            ip in any::<u32>(),
        ) {
            if let Some(v4) = super::dotted_quad(s.as_bytes()) {
                prop_assert_eq!(Ok(v4), s.parse::<std::net::Ipv4Addr>());
            }
            let addr = std::net::Ipv4Addr::from(ip);
            prop_assert_eq!(super::dotted_quad(addr.to_string().as_bytes()), Some(addr));
        }

        /// Four parts of up to three digits, leading zeros and all: read
        /// exactly as the general parser reads them.
        #[test]
        fn four_numbers_read_exactly_as_the_general_parser_reads_them(
            parts in prop::collection::vec("[0-9]{1,3}", 4),
        ) {
            let s = parts.join(".");
            prop_assert_eq!(super::dotted_quad(s.as_bytes()), s.parse::<std::net::Ipv4Addr>().ok());
        }
    }
}
