//! HAProxy's HTTP log format (`option httplog`), bare or after a syslog
//! prefix: `client:port [accept-date] frontend backend/server timers
//! status bytes cookie cookie flags conns queues {captures} "request"`.
//! A captured request header block is read for the Host and User-Agent
//! when HAProxy was told to capture them (`capture request header Host`
//! and `User-Agent`), in either order: the host is the field that reads
//! as a host name, the User-Agent the other.

use std::borrow::Cow;

use crate::scan::Scan;
use crate::{
    bytes_of, client_of, host_of, request_line, split_absolute, stamp, status_of, Entry, LineError,
};

/// The captured Host and User-Agent: the host is the first field that
/// reads as a host name (letters, digits, `.`, `-`, `:`, `[`, `]`, with a
/// dot or a colon), the User-Agent the first other non-empty field.
fn host_and_agent<'a>(captured: &[&'a str]) -> (Option<&'a str>, &'a str) {
    let is_host = |f: &str| {
        !f.is_empty()
            && f.contains(['.', ':'])
            && f.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    };
    let host = captured.iter().position(|f| is_host(f));
    let agent = captured
        .iter()
        .enumerate()
        .find(|(i, f)| Some(*i) != host && !f.is_empty())
        .map_or("", |(_, f)| *f);
    (host.map(|i| captured[i]), agent)
}

pub(crate) fn parse(line: &str) -> Result<Entry<'_>, LineError> {
    // A syslog prefix ends with `haproxy[pid]: `.
    let line = match line.find("]: ") {
        Some(i) if line[..i].contains("haproxy[") => &line[i + 3..],
        _ => line,
    };
    let mut s = Scan::new(line);
    let client = s
        .field()
        .ok_or_else(|| LineError::field("client", "missing"))?;
    let time = s
        .bracketed()
        .ok_or_else(|| LineError::field("accept-date", "missing"))?;
    let stamp = stamp::clf(time.as_bytes())
        .ok_or_else(|| LineError::field("accept-date", format!("`{time}` is not a time")))?;
    let [_front, _back, _timers, status, bytes, _, _, _flags, _conns] = s
        .fields::<9>()
        .map_err(|i| LineError::field("fields", format!("only {i} after the date")))?;
    if status.parse::<i32>().is_err() {
        return Err(LineError::field("status", format!("`{status}`")));
    }
    let _queues = s.field();
    let mut captured: Vec<&str> = Vec::new();
    while let Some(block) = s.braced() {
        captured.extend(block.split('|'));
    }
    let request = s
        .quoted()
        .ok_or_else(|| LineError::field("request", "missing"))?;
    let (method, target) = request_line(request);
    let (url_host, target) = split_absolute(target);
    let (captured_host, user_agent) = host_and_agent(&captured);
    let host = url_host.or_else(|| captured_host.and_then(|h| host_of(Cow::Borrowed(h))));
    Ok(Entry {
        stamp,
        client: client_of(client),
        host,
        method,
        target,
        status: status_of(status),
        bytes: bytes_of(bytes),
        user_agent: Cow::Borrowed(user_agent),
        retry_after: None,
        retry_after_logged: false,
        user: None,
        gate: None,
        signature: None,
    })
}
