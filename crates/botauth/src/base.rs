//! RFC 9421 §2: component values and the signature base, always rebuilt
//! from parsed structured fields, never by echoing raw header bytes.

use sfv::{BareItem, Dictionary, FieldType, InnerList, Item, List, ListEntry, Parameters, Parser};

use crate::Error;

/// An HTTP message as the signer or verifier sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub method: String,
    /// The absolute request URI.
    pub target_uri: String,
    /// Header fields in order; names are case-insensitive.
    pub headers: Vec<(String, String)>,
}

/// A response and the request it answers (for `;req` components).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Message {
    pub fn new(method: &str, target_uri: &str) -> Message {
        Message {
            method: method.to_owned(),
            target_uri: target_uri.to_owned(),
            headers: Vec::new(),
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Message {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The view of a reqwest request (method, URL, headers).
    pub fn from_reqwest(req: &reqwest::Request) -> Message {
        Message {
            method: req.method().as_str().to_owned(),
            target_uri: req.url().to_string(),
            headers: req
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
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
fn component_value(item: &Item, req: &Message, resp: Option<&Response>) -> Result<String, Error> {
    let name = match &item.bare_item {
        BareItem::String(s) => s.as_str().to_owned(),
        _ => return Err(Error::Field("a covered component is not a string".into())),
    };
    let from_req = item.params.contains_key("req");
    let url =
        url::Url::parse(&req.target_uri).map_err(|e| Error::Field(format!("target URI: {e}")))?;
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

/// The signature base for the covered components `covered` (the parsed
/// Signature-Input member) over `req` (and `resp`, for a response).
pub fn signature_base(
    covered: &InnerList,
    req: &Message,
    resp: Option<&Response>,
) -> Result<String, Error> {
    let mut out = String::new();
    let mut seen = Vec::new();
    for item in &covered.items {
        let id = item.serialize();
        if seen.contains(&id) {
            return Err(Error::Field(format!("component {id} is covered twice")));
        }
        seen.push(id.clone());
        let value = component_value(item, req, resp)?;
        if value.contains('\n') {
            return Err(Error::Field(format!("component {id} contains a newline")));
        }
        out.push_str(&format!("{id}: {value}\n"));
    }
    out.push_str(&format!(
        "\"@signature-params\": {}",
        serialize_inner_list(covered)?
    ));
    Ok(out)
}
