//! RFC 9421 §2: component values and the signature base, always rebuilt
//! from parsed structured fields, never by echoing raw header bytes.

use sfv::{BareItem, Dictionary, FieldType, InnerList, Item, List, ListEntry, Parameters, Parser};

use crate::Error;

/// An HTTP message as the signer or verifier sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The method (`GET`).
    pub method: String,
    /// The absolute request URI.
    pub target_uri: String,
    /// Header fields in order; names are case-insensitive.
    pub headers: Vec<(String, String)>,
    /// The body, when the verifier has it: a covered `Content-Digest` is
    /// then checked against it (RFC 9530).
    pub body: Option<Vec<u8>>,
}

/// Why raw request text could not be read as a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestParseError {
    /// No text at all.
    #[error("the request is empty")]
    Empty,
    /// Line 1 is not `METHOD TARGET [VERSION]`.
    #[error("line 1 is not a request line like `GET /path HTTP/1.1`: {0:?}")]
    RequestLine(String),
    /// A line of the header block is not `Name: value`.
    #[error("line {line} is not a header (`Name: value`): {text:?}")]
    Header {
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// An origin-form target and no `Host` header.
    #[error("the request has no Host header, so its authority is unknown")]
    NoHost,
    /// The scheme given for an origin-form target is not http or https.
    #[error("scheme {0:?} is neither http nor https")]
    Scheme(String),
}

/// What follows the first empty line of raw request text (CRLF or LF
/// line endings), or `None` when there is no empty line.
fn body_of(text: &str) -> Option<Vec<u8>> {
    let crlf = text.find("\r\n\r\n").map(|i| i + 4);
    let lf = text.find("\n\n").map(|i| i + 2);
    let start = match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some(text.as_bytes()[start..].to_vec())
}

/// A response and the request it answers (for `;req` components).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header fields in order; names are case-insensitive.
    pub headers: Vec<(String, String)>,
}

impl Message {
    /// A message with no headers yet.
    pub fn new(method: &str, target_uri: &str) -> Message {
        Message {
            method: method.to_owned(),
            target_uri: target_uri.to_owned(),
            headers: Vec::new(),
            body: None,
        }
    }

    /// Reads a request as raw HTTP/1 text: the request line, then header
    /// lines up to the first empty line, and what follows it as the body
    /// (none when the text has no empty line).
    /// An origin-form target (`/path`) takes its authority from `Host`
    /// and the given `scheme` (`http` or `https`, as the connection was);
    /// an absolute-form target is used as it is. Line endings may be LF
    /// or CRLF; header values are trimmed.
    ///
    /// ```
    /// use mannerly_botauth::Message;
    /// let m = Message::parse_http("GET /a?b HTTP/1.1\r\nHost: example.com\r\nSignature: x\r\n\r\n", "https").unwrap();
    /// assert_eq!(m.target_uri, "https://example.com/a?b");
    /// assert_eq!(m.headers.len(), 2);
    /// ```
    pub fn parse_http(text: &str, scheme: &str) -> Result<Message, RequestParseError> {
        let mut lines = text.lines();
        let first = lines
            .next()
            .filter(|l| !l.trim().is_empty())
            .ok_or(RequestParseError::Empty)?;
        let mut parts = first.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return Err(RequestParseError::RequestLine(first.to_owned()));
        };
        let mut headers = Vec::new();
        for (i, line) in lines.enumerate() {
            if line.trim().is_empty() {
                break;
            }
            let Some((k, v)) = line.split_once(':') else {
                return Err(RequestParseError::Header {
                    line: i + 2,
                    text: line.to_owned(),
                });
            };
            if k.is_empty() || k.trim() != k {
                return Err(RequestParseError::Header {
                    line: i + 2,
                    text: line.to_owned(),
                });
            }
            headers.push((k.to_owned(), v.trim().to_owned()));
        }
        let target_uri = if target.starts_with("http://") || target.starts_with("https://") {
            target.to_owned()
        } else {
            if scheme != "http" && scheme != "https" {
                return Err(RequestParseError::Scheme(scheme.to_owned()));
            }
            let host = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("host"))
                .map(|(_, v)| v.clone())
                .ok_or(RequestParseError::NoHost)?;
            format!("{scheme}://{host}{target}")
        };
        Ok(Message {
            method: method.to_owned(),
            target_uri,
            headers,
            body: body_of(text),
        })
    }

    /// Adds a header field (builder style).
    pub fn header(mut self, name: &str, value: &str) -> Message {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The view of a reqwest request (method, URL, headers).
    pub fn from_reqwest(req: &reqwest::Request) -> Message {
        Message {
            method: req.method().as_str().to_owned(),
            target_uri: req.url().to_string(),
            headers: mannerly_fetch::http::header_pairs(req.headers()),
            body: req
                .body()
                .and_then(reqwest::Body::as_bytes)
                .map(<[u8]>::to_vec),
        }
    }

    /// All values of a field, trimmed and joined with `, ` (RFC 9421
    /// §2.1), or `None` when absent.
    pub fn field(&self, name: &str) -> Option<String> {
        field(&self.headers, name)
    }
}

fn field(headers: &[(String, String)], name: &str) -> Option<String> {
    let values: Vec<&str> = headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim_matches(|c| c == ' ' || c == '\t'))
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// Serialises an inner list (with its parameters) canonically.
pub(crate) fn serialize_inner_list(il: &InnerList) -> Result<String, Error> {
    let list: List = vec![ListEntry::InnerList(il.clone())];
    list.serialize()
        .ok_or_else(|| Error::Field("an empty inner list cannot be serialised".into()))
}

fn serialize_entry(e: &ListEntry) -> Result<String, Error> {
    match e {
        ListEntry::Item(i) => Ok(i.serialize()),
        ListEntry::InnerList(il) => serialize_inner_list(il),
    }
}

fn param_str<'a>(params: &'a Parameters, name: &str) -> Option<&'a str> {
    params
        .get(name)
        .and_then(|v| v.as_string())
        .map(|s| s.as_str())
}

/// The value of one covered component.
fn component_value(
    item: &Item,
    req: &Message,
    resp: Option<&Response>,
    url: &url::Url,
) -> Result<String, Error> {
    let name = match &item.bare_item {
        BareItem::String(s) => s.as_str().to_owned(),
        _ => return Err(Error::Field("a covered component is not a string".into())),
    };
    let from_req = item.params.contains_key("req");
    let missing = |what: &str| Error::Missing(what.to_owned());
    Ok(match name.as_str() {
        "@method" => req.method.clone(),
        "@target-uri" => req.target_uri.clone(),
        "@authority" => {
            let host = url
                .host_str()
                .ok_or_else(|| missing("@authority"))?
                .to_ascii_lowercase();
            match url.port() {
                Some(p) => format!("{host}:{p}"),
                None => host,
            }
        }
        "@scheme" => url.scheme().to_ascii_lowercase(),
        "@path" => {
            let p = url.path();
            if p.is_empty() {
                "/".to_owned()
            } else {
                p.to_owned()
            }
        }
        "@query" => format!("?{}", url.query().unwrap_or("")),
        "@request-target" => match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        },
        "@status" => resp
            .ok_or_else(|| missing("@status (not a response)"))?
            .status
            .to_string(),
        n if n.starts_with('@') => {
            return Err(Error::Field(format!("unsupported derived component {n}")))
        }
        header => {
            let headers = match (resp, from_req) {
                (Some(r), false) => &r.headers,
                _ => &req.headers,
            };
            let raw = field(headers, header).ok_or_else(|| missing(header))?;
            if let Some(key) = param_str(&item.params, "key") {
                let dict: Dictionary = Parser::new(&raw)
                    .parse()
                    .map_err(|e| Error::Field(format!("{header} is not a dictionary: {e}")))?;
                let member = dict
                    .get(key)
                    .ok_or_else(|| Error::Missing(format!("{header} member {key}")))?;
                serialize_entry(member)?
            } else if item.params.contains_key("sf") {
                if let Ok(d) = Parser::new(&raw).parse::<Dictionary>() {
                    d.serialize().unwrap_or_default()
                } else if let Ok(l) = Parser::new(&raw).parse::<List>() {
                    l.serialize().unwrap_or_default()
                } else {
                    Parser::new(&raw)
                        .parse::<Item>()
                        .map_err(|e| {
                            Error::Field(format!("{header} is not a structured field: {e}"))
                        })?
                        .serialize()
                }
            } else {
                raw
            }
        }
    })
}

/// `"@query-param";name="..."` (RFC 9421 §2.2.8): each value of the named
/// parameter, in order, decoded as a form and re-encoded with every byte
/// but `A-Za-z0-9*-._` escaped; the `name` is compared in that encoding.
fn query_param(item: &Item, url: &url::Url) -> Result<Vec<String>, Error> {
    let name = param_str(&item.params, "name")
        .ok_or_else(|| Error::Field("@query-param without a name parameter".into()))?;
    let values: Vec<String> = url
        .query_pairs()
        .filter(|(k, _)| form_encode(k) == name)
        .map(|(_, v)| form_encode(&v))
        .collect();
    if values.is_empty() {
        return Err(Error::Missing(format!("query parameter {name}")));
    }
    Ok(values)
}

/// Percent-encodes all but `A-Za-z0-9*-._`, spaces as `%20`.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"*-._".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The signature base for the covered components `covered` (the parsed
/// Signature-Input member) over `req` (and `resp`, for a response).
pub fn signature_base(
    covered: &InnerList,
    req: &Message,
    resp: Option<&Response>,
) -> Result<String, Error> {
    let mut out = String::with_capacity(256);
    let mut seen = Vec::new();
    // Parsed once per base, not once per component.
    let target = url::Url::parse(&req.target_uri).map_err(Error::TargetUri)?;
    for item in &covered.items {
        let id = item.serialize();
        if seen.contains(&id) {
            return Err(Error::Field(format!("component {id} is covered twice")));
        }
        seen.push(id.clone());
        let values = match item.bare_item.as_string().map(|s| s.as_str()) {
            Some("@query-param") => query_param(item, &target)?,
            _ => vec![component_value(item, req, resp, &target)?],
        };
        for value in values {
            if value.contains('\n') {
                return Err(Error::Field(format!("component {id} contains a newline")));
            }
            out.push_str(&id);
            out.push_str(": ");
            out.push_str(&value);
            out.push('\n');
        }
    }
    out.push_str("\"@signature-params\": ");
    out.push_str(&serialize_inner_list(covered)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_params_as_rfc9421_encodes_them() {
        // RFC 9421 §2.2.8's second example.
        let url = url::Url::parse("https://example.com/parameters?var=this%20is%20a%20big%0Amultiline%20value&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something").expect("url");
        let value = |name: &str| {
            let mut params = Parameters::new();
            params.insert(
                sfv::Key::from_string("name".into()).expect("key"),
                BareItem::String(sfv::String::from_string(name.into()).expect("string")),
            );
            let item = Item {
                bare_item: BareItem::String(
                    sfv::String::from_string("@query-param".into()).expect("s"),
                ),
                params,
            };
            query_param(&item, &url).map_err(|e| e.to_string())
        };
        assert_eq!(
            value("var"),
            Ok(vec!["this%20is%20a%20big%0Amultiline%20value".to_owned()])
        );
        assert_eq!(
            value("bar"),
            Ok(vec!["with%20plus%20whitespace".to_owned()])
        );
        assert_eq!(
            value("fa%C3%A7ade%22%3A%20"),
            Ok(vec!["something".to_owned()])
        );
        assert!(value("absent").is_err_and(|e| e.contains("query parameter absent")));
    }

    #[test]
    fn raw_requests_parse_or_say_where_they_are_wrong() {
        let m = Message::parse_http(
            "GET http://a.test/x HTTP/1.1\nSignature-Input: sig1=()\n\nbody: not a header",
            "https",
        )
        .expect("absolute form");
        assert_eq!(
            (m.method.as_str(), m.target_uri.as_str()),
            ("GET", "http://a.test/x")
        );
        assert_eq!(
            m.headers,
            [("Signature-Input".to_owned(), "sig1=()".to_owned())]
        );
        assert_eq!(
            Message::parse_http("", "https"),
            Err(RequestParseError::Empty)
        );
        assert_eq!(
            Message::parse_http("GET\n", "https"),
            Err(RequestParseError::RequestLine("GET".into()))
        );
        assert_eq!(
            Message::parse_http("GET / HTTP/1.1\nHost: a\nnot a header\n", "https"),
            Err(RequestParseError::Header {
                line: 3,
                text: "not a header".into()
            })
        );
        // RFC 9112 §5.1: no white space between the name and the colon.
        assert!(matches!(
            Message::parse_http("GET / HTTP/1.1\nHost : a\n", "https"),
            Err(RequestParseError::Header { line: 2, .. })
        ));
        assert_eq!(
            Message::parse_http("GET / HTTP/1.1\n\n", "https"),
            Err(RequestParseError::NoHost)
        );
        assert_eq!(
            Message::parse_http("GET / HTTP/1.1\nHost: a\n", "ftp"),
            Err(RequestParseError::Scheme("ftp".into()))
        );
    }
}
