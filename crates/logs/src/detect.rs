//! Which format a file is in, found from its first lines, and the parser
//! that reads it.

use std::fmt;
use std::str::FromStr;

use crate::json::Dialect;
use crate::nginx::LogFormat;
use crate::w3c::Columns;
use crate::{clf, elb, haproxy, json, s3, Entry, LineError, LogFormatError};

/// The log formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Format {
    /// NCSA combined (nginx's and Apache's default), with or without a
    /// virtual host in front, with or without fields after.
    Combined,
    /// NCSA common (no referer, no User-Agent).
    Common,
    /// Traefik's CLF: combined plus count, router, service and duration.
    TraefikClf,
    /// W3C extended with `#Fields` (IIS, CloudFront).
    W3c,
    /// CloudFront's standard log without its `#` header lines.
    CloudFront,
    /// AWS Application Load Balancer.
    Alb,
    /// AWS classic Elastic Load Balancer.
    Elb,
    /// AWS S3 server access log.
    S3,
    /// HAProxy's HTTP log, bare or after a syslog prefix.
    Haproxy,
    /// Caddy's JSON access log.
    Caddy,
    /// Traefik's JSON access log.
    TraefikJson,
    /// Cloudflare Logpush (HTTP requests dataset), NDJSON.
    Cloudflare,
    /// nginx `escape=json` formats.
    NginxJson,
    /// An nginx `log_format` string given by the user.
    LogFormat,
    /// An Apache `LogFormat` string given by the user.
    ApacheFormat,
    /// JSON lines whose keys the user names (`--json-fields`).
    JsonFields,
}

const NAMES: [(Format, &str); 16] = [
    (Format::Combined, "combined"),
    (Format::Common, "common"),
    (Format::TraefikClf, "traefik-clf"),
    (Format::W3c, "w3c"),
    (Format::CloudFront, "cloudfront"),
    (Format::Alb, "alb"),
    (Format::Elb, "elb"),
    (Format::S3, "s3"),
    (Format::Haproxy, "haproxy"),
    (Format::Caddy, "caddy"),
    (Format::TraefikJson, "traefik-json"),
    (Format::Cloudflare, "cloudflare"),
    (Format::NginxJson, "nginx-json"),
    (Format::LogFormat, "log-format"),
    (Format::ApacheFormat, "apache-format"),
    (Format::JsonFields, "json-fields"),
];

/// A layout the user gives, for logs no built-in format reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layout {
    /// An nginx `log_format` string.
    Nginx(String),
    /// An Apache `LogFormat` string.
    Apache(String),
    /// JSON lines, with the key of each fact: `ip=...,time=...,uri=...`.
    JsonFields(String),
}

/// A layout that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// The nginx `log_format` string.
    #[error("--log-format: {0}")]
    Nginx(#[from] LogFormatError),
    /// The Apache `LogFormat` string.
    #[error("--apache-format: {0}")]
    Apache(#[from] crate::apache::ApacheFormatError),
    /// The `--json-fields` list.
    #[error("--json-fields: {0}")]
    JsonFields(#[from] crate::json::JsonFieldsError),
}

impl Format {
    /// The format's name, as `--format` takes it.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("?", |(_, n)| n)
    }

    /// Every format's name.
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(_, n)| *n)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no format, or lines no format reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnknownFormat {
    /// `--format` named no format.
    #[error("no format is called `{0}` (known: {known})", known = Format::names().collect::<Vec<_>>().join(", "))]
    Name(String),
    /// No format reads any of the first lines.
    #[error("no known format reads any of the first {0} lines")]
    Lines(usize),
    /// `log-format`, `apache-format` and `json-fields` need their string
    /// (a [`Layout`]).
    #[error("the `{0}` format needs its layout string")]
    NeedsString(&'static str),
}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        NAMES
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(s))
            .map(|(f, _)| *f)
            .ok_or_else(|| UnknownFormat::Name(s.to_owned()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Plain,
    Columns(Columns),
    Json(Dialect),
    Custom(LogFormat),
    Fields(json::JsonFields),
}

/// Reads one file's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parser {
    format: Format,
    state: State,
}

impl Parser {
    /// A parser for a named format (not [`Format::LogFormat`]: see
    /// [`Parser::log_format`]).
    pub fn new(format: Format) -> Result<Parser, UnknownFormat> {
        let state = match format {
            Format::W3c | Format::CloudFront => State::Columns(Columns::cloudfront()),
            Format::Caddy => State::Json(Dialect::Caddy),
            Format::TraefikJson => State::Json(Dialect::Traefik),
            Format::Cloudflare => State::Json(Dialect::Cloudflare),
            Format::NginxJson => State::Json(Dialect::Nginx),
            Format::LogFormat | Format::ApacheFormat | Format::JsonFields => {
                return Err(UnknownFormat::NeedsString(format.name()))
            }
            _ => State::Plain,
        };
        Ok(Parser { format, state })
    }

    /// A parser for an nginx `log_format` string.
    pub fn log_format(format: &str) -> Result<Parser, LogFormatError> {
        Ok(Parser {
            format: Format::LogFormat,
            state: State::Custom(LogFormat::compile(format)?),
        })
    }

    /// A parser for a layout the user gives.
    pub fn layout(layout: &Layout) -> Result<Parser, LayoutError> {
        Ok(match layout {
            Layout::Nginx(f) => Parser::log_format(f)?,
            Layout::Apache(f) => Parser {
                format: Format::ApacheFormat,
                state: State::Custom(LogFormat::compile(&crate::apache::apache_to_nginx(f)?)?),
            },
            Layout::JsonFields(spec) => Parser {
                format: Format::JsonFields,
                state: State::Fields(json::JsonFields::parse(spec)?),
            },
        })
    }

    /// The format read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Reads one line: `Ok(None)` for a blank line, a directive
    /// (`#Fields:` changes the columns that follow), or a line that is the
    /// server's own message rather than a request (an nginx error line, a
    /// HAProxy connection event, a plugin's output, another Caddy logger).
    pub fn parse<'a>(&mut self, line: &'a str) -> Result<Option<Entry<'a>>, LineError> {
        if line.len() > crate::MAX_LINE {
            return Err(LineError::TooLong);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            return Ok(None);
        }
        if line.starts_with('#') {
            if let State::Columns(c) = &mut self.state {
                c.directive(line);
                return Ok(None);
            }
        }
        if not_a_request(line, self.format) {
            return Ok(None);
        }
        let entry = match (&self.state, self.format) {
            (State::Columns(c), _) => c.parse(line),
            (State::Json(d), _) => json::parse(line, *d),
            (State::Custom(f), _) => f.parse(line),
            (State::Fields(f), _) => f.parse_line(line),
            (State::Plain, Format::Alb) => elb::parse(line, true),
            (State::Plain, Format::Elb) => elb::parse(line, false),
            (State::Plain, Format::S3) => s3::parse(line),
            (State::Plain, Format::Haproxy) => haproxy::parse(line),
            (State::Plain, _) => return clf::parse(line),
        };
        entry.map(Some)
    }
}

/// Lines servers write into their access logs that are not requests, and
/// are skipped as such rather than counted unreadable: nginx's error-log
/// lines (`2026/03/01 10:00:00 [error] ...`), HAProxy's connection events
/// (`client [date] frontend/backend: SSL handshake failure`), a plugin's
/// `DEBUG: ...` line in a JSON log, and Caddy's other loggers' JSON lines.
fn not_a_request(line: &str, format: Format) -> bool {
    let b = line.as_bytes();
    let nginx_error = b.len() > 21
        && b[4] == b'/'
        && b[7] == b'/'
        && b[10] == b' '
        && b[13] == b':'
        && b[19..].starts_with(b" [");
    let plugin = [
        "DEBUG: ",
        "INFO: ",
        "WARN: ",
        "WARNING: ",
        "ERROR: ",
        "TRACE: ",
    ]
    .iter()
    .any(|p| line.starts_with(p));
    match format {
        Format::Combined | Format::Common | Format::TraefikClf | Format::LogFormat => nginx_error,
        // Every request line quotes its request; HAProxy's own messages
        // (`Proxy www started.`, `Server be/s1 is DOWN`) and connection
        // events (`client [date] frontend/backend: SSL handshake failure`)
        // do not.
        Format::Haproxy => {
            !line.contains('"')
                || line
                    .split_once("] ")
                    .and_then(|(_, rest)| rest.split(' ').next())
                    .is_some_and(|first| first.ends_with(':'))
        }
        Format::Caddy => {
            plugin
                || line.starts_with('{')
                    && line.contains("\"logger\"")
                    && !line.contains("\"http.log.access")
                    && !line.contains("\"request\"")
        }
        Format::TraefikJson | Format::Cloudflare | Format::NginxJson => plugin,
        _ => false,
    }
}

/// The formats tried on plain lines, most particular first.
const PLAIN: [Format; 6] = [
    Format::Alb,
    Format::Elb,
    Format::S3,
    Format::Haproxy,
    Format::CloudFront,
    Format::Combined,
];

/// Finds the format of a file from its first lines (blank lines aside):
/// the format that reads the most of them.
pub fn detect(lines: &[&str]) -> Result<Parser, UnknownFormat> {
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end_matches(['\r', '\n']))
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines
        .iter()
        .any(|l| l.starts_with("#Fields:") || l.starts_with("#Version:"))
    {
        return Parser::new(Format::W3c);
    }
    let dialect = lines
        .iter()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| Dialect::of(&v));
    if let Some(d) = dialect {
        let format = match d {
            Dialect::Caddy => Format::Caddy,
            Dialect::Traefik => Format::TraefikJson,
            Dialect::Cloudflare => Format::Cloudflare,
            Dialect::Nginx => Format::NginxJson,
        };
        return Parser::new(format);
    }
    let mut best: Option<(usize, Parser)> = None;
    for format in PLAIN {
        let mut parser = Parser::new(format)?;
        let read: Vec<Entry<'_>> = lines
            .iter()
            .filter_map(|l| parser.parse(l).ok().flatten())
            .collect();
        if read.is_empty() || best.as_ref().is_some_and(|(n, _)| *n >= read.len()) {
            continue;
        }
        if format == Format::Combined {
            if lines.iter().any(|l| clf::is_traefik(l)) {
                parser.format = Format::TraefikClf;
            } else if read.iter().all(|e| e.user_agent.is_empty())
                && !lines.iter().any(|l| l.ends_with('"'))
            {
                parser.format = Format::Common;
            }
        }
        best = Some((read.len(), parser));
    }
    best.map(|(_, p)| p)
        .ok_or(UnknownFormat::Lines(lines.len()))
}
