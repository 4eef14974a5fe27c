//! Any layout given as an nginx `log_format` string: literal text and
//! `$variables`, each variable's value running up to the literal text
//! that follows it.

use std::borrow::Cow;

use crate::{
    bytes_of, client_of, dash_empty, host_of, request_line, stamp, status_of, Entry, LineError,
    Signature,
};

/// A `log_format` string that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LogFormatError {
    /// Two variables with no text between them cannot be told apart.
    #[error("`${0}` and `${1}` have no text between them, so where one ends cannot be told")]
    Adjacent(String, String),
    /// Without a time the log cannot be judged.
    #[error("the format has no time ($time_local, $time_iso8601 or $msec)")]
    NoTime,
    /// Without a request nothing is known of what was asked.
    #[error("the format has no request ($request, $request_uri or $uri)")]
    NoRequest,
    /// A `${` without its `}`.
    #[error("`${{` at byte {0} is not closed")]
    Unclosed(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Var(String),
}

/// A compiled `log_format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogFormat {
    parts: Vec<Part>,
}

fn is_var_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl LogFormat {
    pub(crate) fn compile(format: &str) -> Result<LogFormat, LogFormatError> {
        let b = format.as_bytes();
        let (mut parts, mut text, mut i) = (Vec::new(), String::new(), 0);
        while i < b.len() {
            if b[i] == b'$' && i + 1 < b.len() && (b[i + 1] == b'{' || is_var_byte(b[i + 1])) {
                let (name, next) = if b[i + 1] == b'{' {
                    let end = format[i..].find('}').ok_or(LogFormatError::Unclosed(i))? + i;
                    (&format[i + 2..end], end + 1)
                } else {
                    let len = b[i + 1..].iter().take_while(|&&c| is_var_byte(c)).count();
                    (&format[i + 1..i + 1 + len], i + 1 + len)
                };
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                if let Some(Part::Var(prev)) = parts.last() {
                    return Err(LogFormatError::Adjacent(prev.clone(), name.to_owned()));
                }
                parts.push(Part::Var(name.to_ascii_lowercase()));
                i = next;
            } else {
                let ch = format[i..].chars().next().unwrap_or(' ');
                text.push(ch);
                i += ch.len_utf8();
            }
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        let has = |names: &[&str]| {
            parts
                .iter()
                .any(|p| matches!(p, Part::Var(v) if names.contains(&v.as_str())))
        };
        if !has(&["time_local", "time_iso8601", "msec"]) {
            return Err(LogFormatError::NoTime);
        }
        if !has(&["request", "request_uri", "uri"]) {
            return Err(LogFormatError::NoRequest);
        }
        Ok(LogFormat { parts })
    }

    /// The variables' values in one line, in order.
    fn values<'a>(&self, line: &'a str) -> Result<Vec<(&str, &'a str)>, LineError> {
        let mut out = Vec::new();
        let mut rest = line;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Text(t) => {
                    rest = rest
                        .strip_prefix(t.as_str())
                        .ok_or_else(|| LineError::field("log_format", format!("expected `{t}`")))?;
                }
                Part::Var(name) => {
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Text(t)) => rest.find(t.as_str()).ok_or_else(|| {
                            LineError::field("log_format", format!("no `{t}` after ${name}"))
                        })?,
                        _ => rest.len(),
                    };
                    out.push((name.as_str(), &rest[..end]));
                    rest = &rest[end..];
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn parse<'a>(&self, line: &'a str) -> Result<Entry<'a>, LineError> {
        let values = self.values(line)?;
        let get = |names: &[&str]| {
            values
                .iter()
                .find(|(n, _)| names.contains(n))
                .map(|(_, v)| *v)
                .filter(|v| !v.is_empty() && *v != "-")
        };
        let stamp = get(&["time_local"])
            .and_then(|t| stamp::clf(t.as_bytes()))
            .or_else(|| get(&["time_iso8601"]).and_then(stamp::parse_rfc3339))
            .or_else(|| get(&["msec"]).and_then(stamp::unix_seconds))
            .ok_or_else(|| LineError::field("time", "missing or not a time"))?;
        let (method, target) = match get(&["request"]) {
            Some(r) => request_line(Cow::Borrowed(r)),
            None => {
                let uri = get(&["request_uri", "uri"]).unwrap_or("/");
                let target = match get(&["args", "query_string"]) {
                    Some(a) if !uri.contains('?') => Cow::Owned(format!("{uri}?{a}")),
                    _ => Cow::Borrowed(uri),
                };
                (
                    Cow::Borrowed(get(&["request_method"]).unwrap_or("GET")),
                    target,
                )
            }
        };
        let (url_host, target) = crate::split_absolute(target);
        let signature = match (get(&["http_signature"]), get(&["http_signature_input"])) {
            (Some(s), Some(i)) => Some(Box::new(Signature {
                signature: Cow::Borrowed(s),
                input: Cow::Borrowed(i),
                agent: get(&["http_signature_agent"]).map(Cow::Borrowed),
            })),
            _ => None,
        };
        Ok(Entry {
            stamp,
            client: get(&["remote_addr", "realip_remote_addr", "binary_remote_addr"])
                .and_then(client_of),
            host: get(&["host", "http_host", "server_name"])
                .and_then(|h| host_of(Cow::Borrowed(h)))
                .or(url_host),
            method,
            target,
            status: get(&["status"]).and_then(status_of),
            bytes: get(&["body_bytes_sent", "bytes_sent"]).and_then(bytes_of),
            user_agent: dash_empty(Cow::Borrowed(get(&["http_user_agent"]).unwrap_or(""))),
            retry_after: get(&["sent_http_retry_after"]).map(Cow::Borrowed),
            retry_after_logged: values.iter().any(|(n, _)| *n == "sent_http_retry_after"),
            user: get(&["remote_user"]).map(Cow::Borrowed),
            gate: get(&["gate_action", "upstream_http_x_mannerly_action"]).map(Cow::Borrowed),
            signature,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_layout() {
        let f = LogFormat::compile(r#"$host $remote_addr [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" ra=$sent_http_retry_after"#)
            .expect("compiles");
        let e = f
            .parse(r#"a.test 192.0.2.1 [01/Mar/2026:10:00:00 +0000] "GET /x HTTP/1.1" 429 0 "Bot/1" ra=30"#)
            .expect("parses");
        assert_eq!(e.retry_after.as_deref(), Some("30"));
        assert_eq!(e.host.as_deref(), Some("a.test"));
        assert!(matches!(
            LogFormat::compile("$remote_addr$status $time_local $request"),
            Err(LogFormatError::Adjacent(..))
        ));
        assert_eq!(LogFormat::compile("$status"), Err(LogFormatError::NoTime));
    }
}
