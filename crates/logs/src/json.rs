//! One JSON object per line: Caddy, Traefik, Cloudflare Logpush, and
//! nginx's `escape=json` formats (whose keys the operator chooses; the
//! usual names of nginx's variables are read).

use std::borrow::Cow;

use serde_json::Value;

use crate::{
    client_of, host_of, request_line, split_absolute, stamp, status_of, user_of, Entry, LineError,
    Signature,
};

/// Whose JSON a file holds, told by its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Caddy,
    Traefik,
    Cloudflare,
    Nginx,
}

impl Dialect {
    pub(crate) fn of(v: &Value) -> Option<Dialect> {
        let has = |k: &str| v.get(k).is_some();
        if v.get("request").is_some_and(Value::is_object) && (has("ts") || has("status")) {
            Some(Dialect::Caddy)
        } else if has("RequestPath") || has("RequestMethod") && has("ClientHost") {
            Some(Dialect::Traefik)
        } else if has("ClientRequestURI") || has("ClientRequestHost") {
            Some(Dialect::Cloudflare)
        } else if has("remote_addr") || has("http_user_agent") || has("request_uri") {
            Some(Dialect::Nginx)
        } else {
            None
        }
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        // Caddy keeps each header as a list of values.
        Value::Array(a) => text(a.first()),
        _ => None,
    }
}

/// The places a dialect keeps each fact.
struct Keys {
    time: &'static [&'static str],
    client: &'static [&'static str],
    host: &'static [&'static str],
    method: &'static [&'static str],
    target: &'static [&'static str],
    status: &'static [&'static str],
    bytes: &'static [&'static str],
    /// The authenticated user.
    user: &'static [&'static str],
    /// Where request headers are, and how a header's key is made.
    headers: fn(&Value, &str) -> Option<String>,
    retry_after: fn(&Value) -> Option<String>,
    /// Whether the line records Retry-After at all, sent or not.
    retry_after_logged: fn(&Value) -> bool,
}

fn caddy_header(v: &Value, name: &str) -> Option<String> {
    text(v.get("request")?.get("headers")?.get(name))
}

fn traefik_header(v: &Value, name: &str) -> Option<String> {
    text(v.get(format!("request_{name}").as_str()))
}

fn cloudflare_header(v: &Value, name: &str) -> Option<String> {
    if name == "User-Agent" {
        return text(v.get("ClientRequestUserAgent"));
    }
    let headers = v.get("RequestHeaders")?.as_object()?;
    let lower = name.to_ascii_lowercase();
    text(
        headers
            .iter()
            .find(|(k, _)| k.to_ascii_lowercase() == lower)
            .map(|(_, v)| v),
    )
}

fn nginx_header(v: &Value, name: &str) -> Option<String> {
    let key = format!("http_{}", name.to_ascii_lowercase().replace('-', "_"));
    text(v.get(key.as_str())).or_else(|| match name {
        "User-Agent" => text(v.get("user_agent")),
        _ => None,
    })
}

const CADDY: Keys = Keys {
    time: &["ts"],
    client: &["/request/client_ip", "/request/remote_ip"],
    host: &["/request/host"],
    method: &["/request/method"],
    target: &["/request/uri"],
    status: &["status"],
    bytes: &["size"],
    user: &["user_id"],
    headers: caddy_header,
    retry_after: |v| text(v.get("resp_headers")?.get("Retry-After")),
    // Caddy logs every response header.
    retry_after_logged: |v| v.get("resp_headers").is_some_and(Value::is_object),
};

const TRAEFIK: Keys = Keys {
    time: &["StartUTC", "time", "StartLocal"],
    client: &["ClientHost", "ClientAddr"],
    host: &["RequestHost", "RequestAddr"],
    method: &["RequestMethod"],
    target: &["RequestPath"],
    status: &["DownstreamStatus", "OriginStatus"],
    bytes: &["DownstreamContentSize"],
    user: &["ClientUsername"],
    headers: traefik_header,
    retry_after: |v| text(v.get("downstream_Retry-After")),
    // Traefik keeps the headers its configuration names: which, a line
    // does not say.
    retry_after_logged: |_| false,
};

const CLOUDFLARE: Keys = Keys {
    time: &["EdgeStartTimestamp", "EdgeEndTimestamp"],
    client: &["ClientIP"],
    host: &["ClientRequestHost"],
    method: &["ClientRequestMethod"],
    target: &["ClientRequestURI", "ClientRequestPath"],
    status: &["EdgeResponseStatus", "OriginResponseStatus"],
    bytes: &["EdgeResponseBytes"],
    user: &[],
    headers: cloudflare_header,
    retry_after: |v| {
        let h = v.get("ResponseHeaders")?.as_object()?;
        text(
            h.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
                .map(|(_, v)| v),
        )
    },
    // Logpush sends the response headers its job names: which, a line
    // does not say.
    retry_after_logged: |_| false,
};

const NGINX: Keys = Keys {
    time: &[
        "time_iso8601",
        "time_local",
        "msec",
        "time",
        "@timestamp",
        "timestamp",
    ],
    client: &["remote_addr", "client", "client_ip", "ip"],
    host: &["host", "http_host", "server_name"],
    method: &["request_method", "method"],
    target: &["request_uri", "uri", "path"],
    status: &["status"],
    bytes: &["body_bytes_sent", "bytes_sent", "size"],
    user: &["remote_user"],
    headers: nginx_header,
    retry_after: |v| text(v.get("sent_http_retry_after")),
    retry_after_logged: |v| v.get("sent_http_retry_after").is_some(),
};

fn lookup<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    keys.iter()
        .find_map(|k| {
            if k.starts_with('/') {
                v.pointer(k)
            } else {
                v.get(*k)
            }
        })
        .filter(|x| !x.is_null())
}

fn object(line: &str) -> Result<Value, LineError> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| LineError::field("json", format!("not a JSON object: {e}")))?;
    if !v.is_object() {
        return Err(LineError::field("json", "not an object"));
    }
    Ok(v)
}

pub(crate) fn parse(line: &str, dialect: Dialect) -> Result<Entry<'static>, LineError> {
    entry(&object(line)?, dialect)
}

/// The facts `--json-fields` can name, and the nginx variable each is
/// read as.
const FACTS: [(&str, &str); 14] = [
    ("ip", "remote_addr"),
    ("time", "time"),
    ("host", "host"),
    ("method", "request_method"),
    ("uri", "request_uri"),
    ("query", "args"),
    ("request", "request"),
    ("status", "status"),
    ("bytes", "body_bytes_sent"),
    ("user_agent", "http_user_agent"),
    ("user", "remote_user"),
    ("retry_after", "sent_http_retry_after"),
    ("signature", "http_signature"),
    ("signature_input", "http_signature_input"),
];

/// `--json-fields`: which key of a JSON log holds each fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonFields {
    /// (nginx name, the log's key or `/pointer`).
    map: Vec<(&'static str, String)>,
}

/// A `--json-fields` list that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonFieldsError {
    /// An item is not `fact=key`.
    #[error("`{0}` is not fact=key")]
    Item(String),
    /// A fact this reader does not know.
    #[error("`{0}` is not one of ip, time, host, method, uri, query, request, status, bytes, user_agent, user, retry_after, signature, signature_input")]
    Fact(String),
    /// Without a time, or without a request (uri or request), nothing can
    /// be judged.
    #[error("the list needs time= and uri= (or request=)")]
    Missing,
    /// A fact named twice: which key holds it is not clear.
    #[error("`{0}` is given twice")]
    Twice(String),
}

impl JsonFields {
    /// Reads `ip=client.addr,time=@ts,uri=/req/path,...` (a key, or a JSON
    /// pointer starting with `/`).
    pub(crate) fn parse(spec: &str) -> Result<JsonFields, JsonFieldsError> {
        let mut map = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (fact, key) = item
                .split_once('=')
                .filter(|(f, k)| !f.is_empty() && !k.is_empty())
                .ok_or_else(|| JsonFieldsError::Item(item.to_owned()))?;
            let name = FACTS
                .iter()
                .find(|(f, _)| *f == fact.trim())
                .map(|(_, n)| *n)
                .ok_or_else(|| JsonFieldsError::Fact(fact.to_owned()))?;
            if map.iter().any(|(n, _)| *n == name) {
                return Err(JsonFieldsError::Twice(fact.trim().to_owned()));
            }
            map.push((name, key.trim().to_owned()));
        }
        let has = |n: &str| map.iter().any(|(x, _)| *x == n);
        if !has("time") || !(has("request_uri") || has("request")) {
            return Err(JsonFieldsError::Missing);
        }
        Ok(JsonFields { map })
    }

    /// Reads a line: its named keys, as nginx's JSON variables.
    pub(crate) fn parse_line(&self, line: &str) -> Result<Entry<'static>, LineError> {
        let v = object(line)?;
        let mut named = serde_json::Map::new();
        for (name, key) in &self.map {
            if let Some(x) = lookup(&v, &[key.as_str()]) {
                named.insert((*name).to_owned(), x.clone());
            }
        }
        entry(&Value::Object(named), Dialect::Nginx)
    }
}

fn entry(v: &Value, dialect: Dialect) -> Result<Entry<'static>, LineError> {
    let k = match dialect {
        Dialect::Caddy => &CADDY,
        Dialect::Traefik => &TRAEFIK,
        Dialect::Cloudflare => &CLOUDFLARE,
        Dialect::Nginx => &NGINX,
    };
    let time = lookup(v, k.time).ok_or_else(|| LineError::field("time", "missing"))?;
    let stamp = stamp::json(time)
        .or_else(|| time.as_str().and_then(|t| stamp::clf(t.as_bytes())))
        .ok_or_else(|| LineError::field("time", format!("`{time}` is not a time")))?;
    let (method, target) = method_target(v, k)?;
    let (url_host, target) = split_absolute(Cow::Owned(target));
    let host = url_host.map(|h| h.into_owned()).or_else(|| {
        text(lookup(v, k.host)).and_then(|h| host_of(Cow::Owned(h)).map(Cow::into_owned))
    });
    let header = |name: &str| (k.headers)(v, name).filter(|s| !s.is_empty() && s != "-");
    let signature = match (header("Signature"), header("Signature-Input")) {
        (Some(sig), Some(input)) => Some(Box::new(Signature {
            signature: Cow::Owned(sig),
            input: Cow::Owned(input),
            agent: header("Signature-Agent").map(Cow::Owned),
        })),
        _ => None,
    };
    Ok(Entry {
        stamp,
        client: text(lookup(v, k.client)).and_then(|c| client_of(&c)),
        host: host.map(Cow::Owned),
        method: Cow::Owned(method),
        target: Cow::Owned(target.into_owned()),
        status: text(lookup(v, k.status)).and_then(|s| status_of(&s)),
        bytes: lookup(v, k.bytes).and_then(|b| b.as_u64().or_else(|| b.as_str()?.parse().ok())),
        user_agent: Cow::Owned(header("User-Agent").unwrap_or_default()),
        retry_after: (k.retry_after)(v).map(Cow::Owned),
        retry_after_logged: (k.retry_after_logged)(v),
        user: text(lookup(v, k.user)).and_then(|u| user_of(Cow::Owned(u))),
        gate: None,
        signature,
    })
}

/// The method and target, from their own keys or from `request`.
fn method_target(v: &Value, k: &Keys) -> Result<(String, String), LineError> {
    if let Some(target) = text(lookup(v, k.target)) {
        let method = text(lookup(v, k.method)).unwrap_or_else(|| "GET".into());
        let target = match text(v.get("args")).filter(|a| !a.is_empty() && a != "-") {
            Some(args) if !target.contains('?') => format!("{target}?{args}"),
            _ => target,
        };
        return Ok((method, target));
    }
    let request = text(v.get("request")).ok_or_else(|| LineError::field("target", "missing"))?;
    let (m, t) = request_line(Cow::Owned(request));
    Ok((m.into_owned(), t.into_owned()))
}
