//! What the server keeps: its configuration and counters ([`State`]),
//! each request it saw ([`RequestRecord`]) and how the access log writes
//! one; what a request asked besides its path ([`Asked`]).

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::Request;
use parking_lot::Mutex;

use crate::config::WebConfig;

/// One request the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// Host header without the port, lower-cased.
    pub host: String,
    /// The port it came in on.
    pub port: u16,
    /// The method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The User-Agent header, if any.
    pub user_agent: Option<String>,
    /// The Web Bot Auth headers sent (Signature-Agent, Signature-Input,
    /// Signature), as sent.
    pub signature_headers: Vec<(String, String)>,
    /// The request carried If-None-Match or If-Modified-Since.
    pub conditional: bool,
    /// The request carried Authorization or Cookie.
    pub credentials: bool,
    /// Since the server started.
    pub started: Duration,
    /// When the response (including its body) was done, if it was.
    pub finished: Option<Duration>,
    /// Requests to this host in flight when this one started, itself
    /// included.
    pub in_flight_at_start: usize,
    /// The status answered (`None` for a reset connection).
    pub status: Option<u16>,
    /// The Retry-After header sent, if any.
    pub retry_after: Option<String>,
    /// The body's length, when it declared one.
    pub bytes: Option<u64>,
}

/// The layout of [`TestWeb::access_log`](crate::TestWeb::access_log), as an nginx `log_format`: the
/// combined format with the virtual host in front, times to the
/// millisecond (as Apache's `%{msec_frac}t` writes them), and the
/// Retry-After sent as a last field.
pub const ACCESS_LOG_FORMAT: &str = r#"$host $remote_addr - - [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$sent_http_retry_after""#;

pub(crate) struct State {
    pub(crate) config: Mutex<WebConfig>,
    /// Changes made to generated pages, per (host, path).
    pub(crate) versions: Mutex<HashMap<(String, String), u32>>,
    pub(crate) start: Instant,
    /// The wall clock when `start` was taken.
    pub(crate) wall_start: std::time::SystemTime,
    pub(crate) records: Mutex<Vec<RequestRecord>>,
    pub(crate) counters: Mutex<HashMap<(String, u16, String), usize>>,
    pub(crate) in_flight: Mutex<HashMap<String, Arc<AtomicUsize>>>,
    pub(crate) max_in_flight: Mutex<HashMap<String, usize>>,
}

/// What a request asked besides its path: its validators, and the
/// authority it named.
pub(crate) struct Asked {
    pub(crate) if_none_match: Option<String>,
    pub(crate) if_modified_since: Option<String>,
    pub(crate) authority: String,
}

impl Asked {
    pub(crate) fn of(req: &Request<Incoming>) -> Asked {
        let header = |name: hyper::header::HeaderName| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        Asked {
            if_none_match: header(hyper::header::IF_NONE_MATCH),
            if_modified_since: header(hyper::header::IF_MODIFIED_SINCE),
            authority: header(hyper::header::HOST).unwrap_or_default(),
        }
    }
}

/// `[26/Nov/2026:03:59:31.123 +0000]`'s inside, from RFC 3339.
pub(crate) fn clf_time(at: std::time::SystemTime) -> String {
    let millis = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let iso = mannerly_time::UnixMillis(millis).to_rfc3339_millis();
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = iso[5..7].parse::<usize>().unwrap_or(1).clamp(1, 12);
    format!(
        "{}/{}/{}:{} +0000",
        &iso[8..10],
        MONTHS[month - 1],
        &iso[0..4],
        &iso[11..23]
    )
}
