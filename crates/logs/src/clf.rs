//! The NCSA family: common (`host ident user [time] "request" status
//! bytes`), combined (plus `"referer" "user-agent"`), with a virtual host
//! in front (nginx's and Apache's `vhost_combined`), with fields after
//! (Traefik's CLF adds a request count, router, service and duration), and
//! with the ident or user field left out.

use std::borrow::Cow;

use crate::scan::Scan;
use crate::{
    bytes_of, client_of, dash_empty, host_of, request_line, split_absolute, stamp, user_of,
    valid_status, Entry, LineError,
};

/// A line of the family, as `Some` already: the value is written where
/// the caller keeps it, not copied there (an entry is some 260 bytes,
/// and this is the format of most logs).
pub(crate) fn parse(line: &str) -> Result<Option<Entry<'_>>, LineError> {
    let mut s = Scan::new(line);
    let mut before: [&str; 4] = [""; 4];
    let mut n = 0;
    while s.peek().is_some_and(|b| b != b'[') {
        let f = s
            .field()
            .ok_or_else(|| LineError::field("time", "missing"))?;
        if n == before.len() {
            return Err(LineError::field(
                "time",
                "no [time] in the first five fields",
            ));
        }
        before[n] = f;
        n += 1;
    }
    // Each field is read as an address once; `at` is the client's place.
    let (vhost, client, at) = match n {
        4 => (Some(before[0]), client_of(before[1]), 1),
        1..=3 => match client_of(before[0]) {
            None if n >= 2 => match client_of(before[1]) {
                Some(ip) => (Some(before[0]), Some(ip), 1),
                None => (None, None, n),
            },
            first => (None, first, 0),
        },
        _ => return Err(LineError::field("client", "missing")),
    };
    // The user is the field just before the time, when one follows the
    // client: with the ident left out, it is the only one (an ident is
    // `-` unless identd is asked, which servers no longer do).
    let user = (n > at + 1).then(|| before[n - 1]);
    let time = s
        .bracketed()
        .ok_or_else(|| LineError::field("time", "missing"))?;
    let stamp = stamp::clf(time.as_bytes())
        .ok_or_else(|| LineError::field("time", format!("`{time}` is not a time")))?;
    let request = s
        .quoted()
        .ok_or_else(|| LineError::field("request", "missing or unterminated quote"))?;
    let status = s
        .field()
        .ok_or_else(|| LineError::field("status", "missing"))?;
    // Each number is read once: its value, or `-`.
    let status_number = status.parse::<u16>();
    if status != "-" && status_number.is_err() {
        return Err(LineError::field("status", format!("`{status}`")));
    }
    let bytes = s
        .field()
        .ok_or_else(|| LineError::field("bytes", "missing"))?;
    let bytes_sent = bytes_of(bytes);
    if bytes != "-" && bytes_sent.is_none() {
        return Err(LineError::field("bytes", format!("`{bytes}`")));
    }
    let (user_agent, retry_after) = match s.peek() {
        Some(b'"') => combined_tail(&mut s, status)?,
        _ => (Cow::Borrowed(""), None),
    };
    let (method, target) = request_line(request);
    // A proxy's absolute-form request (`GET http://a.test/x`): its path,
    // and its host when the line names none.
    let (url_host, target) = split_absolute(target);
    Ok(Some(Entry {
        stamp,
        client,
        host: vhost.and_then(|v| host_of(Cow::Borrowed(v))).or(url_host),
        method,
        target,
        status: status_number.ok().and_then(valid_status),
        bytes: bytes_sent,
        user_agent: dash_empty(user_agent),
        retry_after,
        // A quoted field after the User-Agent may be anything: a `-`
        // there does not say that no Retry-After was sent.
        retry_after_logged: false,
        user: user.and_then(|u| user_of(Cow::Borrowed(u))),
        gate: None,
        signature: None,
    }))
}

/// The combined format's quoted Referer and User-Agent, and what follows
/// them: a quoted Retry-After (seconds or an HTTP date) after a 429 or 503
/// is kept, as `mannerly demo` and the nginx layout the README gives log
/// it. A quote left open is a damaged line, never another format's.
fn combined_tail<'a>(
    s: &mut Scan<'a>,
    status: &str,
) -> Result<(Cow<'a, str>, Option<Cow<'a, str>>), LineError> {
    let unterminated = |what: &'static str| LineError::field(what, "unterminated quote");
    s.quoted().ok_or_else(|| unterminated("referer"))?;
    let user_agent = match s.peek() {
        Some(b'"') => s.quoted().ok_or_else(|| unterminated("user-agent"))?,
        _ => Cow::Borrowed(""),
    };
    let mut retry_after = None;
    while s.peek() == Some(b'"') {
        let field = s.quoted().ok_or_else(|| unterminated("a last field"))?;
        if matches!(status, "429" | "503") && retry_after.is_none() && is_retry_after(&field) {
            retry_after = Some(field);
        }
    }
    Ok((user_agent, retry_after))
}

/// Whether a value reads as a Retry-After header: delay seconds, or an
/// HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
fn is_retry_after(v: &str) -> bool {
    (!v.is_empty() && v.len() <= 10 && v.bytes().all(|b| b.is_ascii_digit()))
        || (v.ends_with(" GMT") && v.len() == 29)
}

/// Whether the fields after the User-Agent look like Traefik's
/// (`count "router" "service" 12ms`).
pub(crate) fn is_traefik(line: &str) -> bool {
    line.trim_end().ends_with("ms") && line.matches('"').count() >= 10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Entry<'_>, LineError> {
        super::parse(line).map(|e| e.expect("a request"))
    }

    #[test]
    fn shapes() {
        let e = parse(r#"www.a.test:80 192.0.2.1 - - [08/Jun/2020:08:04:43 +0000] "GET /x HTTP/1.1" 301 0 "-" "UA""#)
            .expect("vhost");
        assert_eq!(e.host.as_deref(), Some("www.a.test"));
        assert_eq!(e.client, "192.0.2.1".parse().ok());
        let e = parse(r#"192.0.2.1 [20/Jul/2009:22:59:29 +0000] "GET /v HTTP/1.0" 404 46210 "-" "gPXE/0.9.7""#)
            .expect("no ident");
        assert_eq!(e.user_agent, "gPXE/0.9.7");
        let e = parse(r#"192.0.2.1 - - [08/Dec/2021:09:16:05 +0000] "GET /u?t=1 HTTP/1.1" 200 405 "-" "-" 502 "r@docker" "http://172.17.0.3:80" 0ms"#)
            .expect("traefik");
        assert_eq!((e.target.as_ref(), e.user_agent.as_ref()), ("/u?t=1", ""));
        let e = parse(r#"1.2.3.4 - - [17/Oct/2023:05:57:49 +1100] "\x16\x03\x01" 400 226 "-" "-""#)
            .expect("garbage request");
        assert_eq!((e.method.as_ref(), e.status), ("", Some(400)));
        let e = parse(r#"::1 - - [17/Oct/2023:05:57:49 +1100] "GET / HTTP/1.1" 200 1"#)
            .expect("common");
        assert_eq!(e.user_agent, "");
        let e = parse(r#"192.0.2.1 - - [08/Dec/2021:09:16:05 +0000] "GET http://a.test:8080/p?q=1 HTTP/1.1" 200 5 "-" "Bot/1""#)
            .expect("a proxy's absolute form");
        assert_eq!(
            (e.host.as_deref(), e.target.as_ref()),
            (Some("a.test"), "/p?q=1")
        );
        assert!(parse(r#"1.2.3.4 - - [29/Jul/2023:10:26:07 -0700] "batman""#).is_err());
        assert!(parse("2021/12/01 13:53:33 [error] 31#31: *46 \"/x\" is not found").is_err());
    }
}
