//! `Signature-Agent` as the working group's editor's copy reads it (§5.2.1,
//! §5.2.2, §5.5), and the identifier a verified request is attributed to.
//!
//! - The header is a Dictionary. The member a signature names is the one
//!   keyed to its own label; a signature that covers the member of
//!   another label is attributed to nothing by it (§5.2.2).
//! - A member that carries parameters is ignored, as if absent.
//! - The legacy bare String (draft -00 and meunier-02) is read as a
//!   dictionary with one member keyed to the label of the signature that
//!   covers it.
//! - Senders of -00 keyed their member by a name of their own
//!   (`agent1="..."` for signature `sig1`). Where a signature covers
//!   exactly one member and the header has none keyed to its label, that
//!   member is read: the two texts do not conflict there.

use sfv::{BareItem, Dictionary, InnerList, ListEntry, Parser};

use super::Rejection;

/// The agent a signature names: the member value as sent (what is
/// fetched), or nothing.
pub(super) fn claimed(
    covered: &InnerList,
    label: &str,
    raw: Option<&str>,
    web_bot_auth: bool,
) -> Result<Option<String>, Rejection> {
    let keys: Vec<Option<&str>> = covered
        .items
        .iter()
        .filter(|i| {
            i.bare_item
                .as_string()
                .is_some_and(|s| s.as_str() == "signature-agent")
        })
        .map(|i| {
            i.params
                .get("key")
                .and_then(|k| k.as_string())
                .map(|k| k.as_str())
        })
        .collect();
    let Some(raw) = raw else {
        if keys.is_empty() {
            return Ok(None);
        }
        let why = "signature-agent is covered but the header is missing";
        return Err(Rejection::SignatureAgent(why));
    };
    if raw.trim_start().starts_with('"') {
        return legacy(&keys, raw, web_bot_auth);
    }
    let dict = Parser::new(raw.as_bytes())
        .parse::<Dictionary>()
        .map_err(|e| Rejection::MalformedHeader {
            header: "Signature-Agent",
            detail: format!("is not a structured-field dictionary: {e}"),
        })?;
    // Covering the whole field covers every member in it.
    let whole = keys.contains(&None);
    let own = keys.contains(&Some(label)) || (whole && dict.contains_key(label));
    let chosen = if own {
        Some(label)
    } else if dict.contains_key(label) && web_bot_auth {
        let why = "the Signature-Agent member keyed to this signature's label is not covered";
        return Err(Rejection::SignatureAgent(why));
    } else {
        // -00 senders: one covered member under a name of its own.
        match (keys.as_slice(), whole) {
            ([Some(only)], _) => Some(*only),
            (_, true) if dict.len() == 1 => dict.keys().next().map(|k| k.as_str()),
            _ => None,
        }
    };
    Ok(chosen.and_then(|k| plain_string(dict.get(k)?)))
}

/// The bare-string form: one member, keyed to the label covering it.
fn legacy(
    keys: &[Option<&str>],
    raw: &str,
    web_bot_auth: bool,
) -> Result<Option<String>, Rejection> {
    if !keys.contains(&None) {
        if web_bot_auth {
            let why = "Signature-Agent is present but not covered by the signature";
            return Err(Rejection::SignatureAgent(why));
        }
        return Ok(None);
    }
    let item = Parser::new(raw.as_bytes())
        .parse::<sfv::Item>()
        .map_err(|e| Rejection::MalformedHeader {
            header: "Signature-Agent",
            detail: format!("is neither a dictionary nor a string: {e}"),
        })?;
    Ok(plain_string(&ListEntry::Item(item)))
}

/// A member's URL: a String without parameters, else nothing (§5.2.1: a
/// member with parameters is ignored).
fn plain_string(entry: &ListEntry) -> Option<String> {
    match entry {
        ListEntry::Item(i) if i.params.is_empty() => match &i.bare_item {
            BareItem::String(s) => Some(s.as_str().to_owned()),
            _ => None,
        },
        _ => None,
    }
}

/// The identifier of a Signature-Agent URL (§5.5): the URL after RFC 3986
/// §6.2.2 and §6.2.3 normalisation, without its query or fragment. `None`
/// when the value is not an absolute URL.
///
/// ```
/// use mannerly_botauth::agent_identifier;
/// assert_eq!(
///     agent_identifier("HTTPS://Crawler.Example:443/%7Ekeys/./jwks.json?v=2").as_deref(),
///     Some("https://crawler.example/~keys/jwks.json")
/// );
/// ```
pub fn agent_identifier(value: &str) -> Option<String> {
    let mut url = url::Url::parse(value).ok()?;
    if url.cannot_be_a_base() {
        return None;
    }
    url.set_query(None);
    url.set_fragment(None);
    let path = normalise_escapes(url.path());
    url.set_path(&path);
    Some(url.to_string())
}

/// Percent-escapes of unreserved characters decoded, the others in upper
/// case (RFC 3986 §6.2.2.1 and §6.2.2.2).
fn normalise_escapes(path: &str) -> String {
    let b = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                let c = char::from(u8::try_from(h * 16 + l).unwrap_or(0));
                if c.is_ascii_alphanumeric() || "-._~".contains(c) {
                    out.push(c);
                } else {
                    out.push('%');
                    out.push(char::from(b[i + 1]).to_ascii_uppercase());
                    out.push(char::from(b[i + 2]).to_ascii_uppercase());
                }
                i += 3;
                continue;
            }
        }
        out.push(char::from(b[i]));
        i += 1;
    }
    out
}
