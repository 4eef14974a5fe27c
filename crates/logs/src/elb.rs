//! AWS load balancers: ALB (`type time elb client:port target:port
//! t1 t2 t3 elb_status target_status received sent "request" "agent" ...`)
//! and the classic ELB (the same without the leading type).

use crate::scan::Scan;
use crate::{
    bytes_of, client_of, dash_empty, request_line, split_absolute, stamp, status_of, Entry,
    LineError,
};

/// An ALB line (`alb`) or a classic ELB line (`!alb`).
pub(crate) fn parse(line: &str, alb: bool) -> Result<Entry<'_>, LineError> {
    let mut s = Scan::new(line);
    if alb {
        let kind = s.field().unwrap_or_default();
        if !matches!(kind, "http" | "https" | "h2" | "grpcs" | "ws" | "wss") {
            return Err(LineError::field("type", format!("`{kind}`")));
        }
    }
    let time = s.field().unwrap_or_default();
    let stamp = stamp::parse_rfc3339(time)
        .ok_or_else(|| LineError::field("time", format!("`{time}` is not a time")))?;
    let [_elb, client, _target, _, _, _, elb_status, target_status, _received] = s
        .fields::<9>()
        .map_err(|i| LineError::field("fields", format!("only {i} after the time")))?;
    let sent = s.field().unwrap_or_default();
    let request = s
        .quoted()
        .ok_or_else(|| LineError::field("request", "missing"))?;
    let agent = s.quoted().unwrap_or_default();
    let (method, target) = request_line(request);
    let (host, target) = split_absolute(target);
    Ok(Entry {
        stamp,
        client: client_of(client),
        host,
        method,
        target,
        status: status_of(elb_status).or_else(|| status_of(target_status)),
        bytes: bytes_of(sent),
        user_agent: dash_empty(agent),
        retry_after: None,
        retry_after_logged: false,
        user: None,
        gate: None,
        signature: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn classic() {
        let e = parse(r#"2015-05-13T23:39:43.945958Z my-loadbalancer 192.168.131.39:2817 10.0.0.1:80 0.000073 0.001048 0.000057 200 200 0 29 "GET http://www.example.com:80/a?b HTTP/1.1" "curl/7.38.0" - -"#, false)
            .expect("elb");
        assert_eq!(e.host.as_deref(), Some("www.example.com"));
        assert_eq!(e.target, "/a?b");
        assert_eq!(e.user_agent, Cow::Borrowed("curl/7.38.0"));
    }
}
