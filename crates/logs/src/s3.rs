//! AWS S3 server access logs: `owner bucket [time] ip requester
//! request-id operation key "request-uri" status error bytes size total
//! turnaround "referer" "agent" version host-id sigv cipher auth host tls ...`.

use std::borrow::Cow;

use crate::scan::Scan;
use crate::{
    bytes_of, client_of, dash_empty, host_of, request_line, stamp, status_of, user_of, Entry,
    LineError,
};

pub(crate) fn parse(line: &str) -> Result<Entry<'_>, LineError> {
    let mut s = Scan::new(line);
    let _owner = s.field();
    let bucket = s
        .field()
        .ok_or_else(|| LineError::field("bucket", "missing"))?;
    let time = s
        .bracketed()
        .ok_or_else(|| LineError::field("time", "missing"))?;
    let stamp = stamp::clf(time.as_bytes())
        .ok_or_else(|| LineError::field("time", format!("`{time}` is not a time")))?;
    let ip = s.field().unwrap_or_default();
    // `-` for a request without credentials; else the account or IAM
    // user that signed it.
    let requester = s
        .field()
        .ok_or_else(|| LineError::field("requester", "missing"))?;
    s.fields::<3>()
        .map_err(|_| LineError::field("operation", "missing"))?;
    let request = s
        .quoted()
        .ok_or_else(|| LineError::field("request-uri", "missing"))?;
    let status = s.field().unwrap_or_default();
    let _error = s.field();
    let bytes = s.field().unwrap_or_default();
    s.fields::<3>()
        .map_err(|_| LineError::field("turnaround", "missing"))?;
    let _referer = s
        .quoted()
        .ok_or_else(|| LineError::field("referer", "missing"))?;
    let agent = s
        .quoted()
        .ok_or_else(|| LineError::field("user-agent", "missing"))?;
    let rest: Vec<Option<Cow<'_, str>>> = (0..6).map(|_| s.any()).collect();
    let host = rest
        .into_iter()
        .nth(5)
        .flatten()
        .and_then(host_of)
        .or_else(|| host_of(Cow::Borrowed(bucket)));
    let (method, target) = request_line(request);
    Ok(Entry {
        stamp,
        client: client_of(ip),
        host,
        method,
        target,
        status: status_of(status),
        bytes: bytes_of(bytes),
        user_agent: dash_empty(agent),
        retry_after: None,
        retry_after_logged: false,
        user: user_of(Cow::Borrowed(requester)),
        gate: None,
        signature: None,
    })
}
