//! Signature Agent Cards (draft-meunier-webbotauth-registry, editor's copy
//! of September 2026): a JSON document in the OAuth client metadata
//! namespace, with a `web_bot_auth` object that says what a bot is.
//!
//! [`check_card`] checks one as a client must, without I/O: the caller
//! fetches it (GET, no redirects) and hands over what came back.
//!
//! ```
//! use mannerly_botauth::card::{Card, WebBotAuth};
//! let card = Card {
//!     client_id: Some("https://crawler.example/bot".into()),
//!     client_name: Some("Example Bot".into()),
//!     jwks_uri: Some("https://crawler.example/.well-known/http-message-signatures-directory".into()),
//!     web_bot_auth: Some(WebBotAuth {
//!         expected_user_agent: vec!["Mozilla/5.0 (compatible; ExampleBot/1.0*".into()],
//!         product_token: Some("ExampleBot".into()),
//!         ..WebBotAuth::default()
//!     }),
//!     ..Card::default()
//! };
//! assert!(card.matches_user_agent("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://crawler.example)"));
//! assert!(!card.matches_user_agent("Mozilla/5.0 (compatible; OtherBot/2.0)"));
//! ```

use serde::{Deserialize, Serialize};

use crate::base::Response;
use crate::directory::Jwks;
use crate::{Jwk, StaticKeys, UnixMillis};

/// A Signature Agent Card. Members this crate does not know are ignored
/// when read, as the draft requires.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// The card's own URL (CIMD's `client_id`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client_id: Option<String>,
    /// A name for people.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client_name: Option<String>,
    /// A page about the bot.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client_uri: Option<String>,
    /// A logo.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub logo_uri: Option<String>,
    /// How to reach its operator (`mailto:...`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub contacts: Vec<String>,
    /// The JWK Set's URL (https).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub jwks_uri: Option<String>,
    /// The keys inline (never beside `jwks_uri`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub jwks: Option<Jwks>,
    /// What the bot is.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub web_bot_auth: Option<WebBotAuth>,
}

/// The card's `web_bot_auth` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebBotAuth {
    /// User-Agent strings or prefixes (`*` a wildcard) the bot sends.
    #[serde(
        rename = "expected-user-agent",
        skip_serializing_if = "Vec::is_empty",
        default,
        with = "one_or_many"
    )]
    pub expected_user_agent: Vec<String>,
    /// The robots.txt product token the bot obeys (RFC 9309 §2.2.1).
    #[serde(
        rename = "rfc9309-product-token",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub product_token: Option<String>,
    /// Whether the bot claims to follow robots.txt (default false).
    #[serde(rename = "rfc9309-compliance", default)]
    pub rfc9309_compliance: bool,
    /// `fetcher` (a user's request) or `crawler` (autonomous).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub trigger: Option<String>,
    /// What the collected data is for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub purpose: Option<String>,
    /// What the bot looks for.
    #[serde(
        rename = "targeted-content",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub targeted_content: Option<String>,
    /// How origins can slow it.
    #[serde(
        rename = "rate-control",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub rate_control: Option<String>,
    /// How fast it expects to go.
    #[serde(
        rename = "rate-expectation",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub rate_expectation: Option<String>,
    /// Endpoints it predictably asks for.
    #[serde(rename = "known-urls", skip_serializing_if = "Vec::is_empty", default)]
    pub known_urls: Vec<String>,
    /// Its IP address list (https).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ips_uri: Option<String>,
}

/// `expected-user-agent` is one string or an array of them.
mod one_or_many {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[String], s: S) -> Result<S::Ok, S::Error> {
        match v {
            [one] => s.serialize_str(one),
            many => s.collect_seq(many),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        Ok(match OneOrMany::deserialize(d)? {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        })
    }
}

impl Card {
    /// Whether `ua` is one the card expects: equal to an entry, or
    /// starting with it, `*` matching any run of characters. A card with
    /// no expectation matches nothing.
    pub fn matches_user_agent(&self, ua: &str) -> bool {
        self.web_bot_auth
            .as_ref()
            .is_some_and(|w| w.expected_user_agent.iter().any(|p| prefix_glob(p, ua)))
    }

    /// The robots.txt product token, if the card names one.
    pub fn product_token(&self) -> Option<&str> {
        self.web_bot_auth.as_ref()?.product_token.as_deref()
    }
}

/// Whether `pattern` (with `*` wildcards) matches a prefix of `text`.
fn prefix_glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in parts {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// What a client had of a card: where it came from, and the response.
#[derive(Debug, Clone)]
pub struct Fetched<'a> {
    /// The URL the card was asked for (or is served at, for a file).
    pub url: Option<&'a str>,
    /// The response, when it was fetched (status and headers).
    pub response: Option<&'a Response>,
    /// The keys of the card's `jwks_uri`, when the caller fetched them, to
    /// check a signature made by them.
    pub jwks_uri_keys: Option<Vec<Jwk>>,
    /// The time signatures are checked at.
    pub now: UnixMillis,
}

/// The card, if it could be read, and every problem found.
#[derive(Debug, Clone, Default)]
pub struct CardReport {
    /// The card as read.
    pub card: Option<Card>,
    /// Why a client must refuse it (empty: valid).
    pub problems: Vec<String>,
    /// What was checked and held (for people).
    pub notes: Vec<String>,
}

/// Checks a card as a client must (the registry draft, §3.1 and §4.1):
/// a 200 to a GET, no redirect, a JSON object, `client_id` identical to
/// the URL it came from, not both `jwks` and `jwks_uri`, https for
/// `jwks_uri` and `ips_uri`, and signatures, when present, covering
/// `Content-Digest` and verifying. Unknown members are ignored.
pub fn check_card(body: &[u8], from: &Fetched<'_>) -> CardReport {
    let mut report = CardReport::default();
    if let Some(r) = from.response {
        if (300..400).contains(&r.status) {
            report.problems.push(format!(
                "HTTP {}: a card is not fetched through redirects (§3.1.1)",
                r.status
            ));
            return report;
        }
        if r.status != 200 {
            report.problems.push(format!(
                "HTTP {}: anything but 200 is an error (§3.1.1)",
                r.status
            ));
            return report;
        }
    }
    let card = match parse(body, &mut report) {
        Some(c) => c,
        None => return report,
    };
    check_members(&card, from, &mut report);
    check_forms(&card, &mut report);
    if let Some(r) = from.response {
        check_signatures(&card, body, r, from, &mut report);
    }
    report.card = Some(card);
    report
}

/// The card from JSON: an object with at least one member; a known member
/// of the wrong type is a problem.
fn parse(body: &[u8], report: &mut CardReport) -> Option<Card> {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            report.problems.push(format!("not JSON: {e}"));
            return None;
        }
    };
    let Some(object) = value.as_object() else {
        report.problems.push("not a JSON object".into());
        return None;
    };
    if object.is_empty() {
        report
            .problems
            .push("no parameter at all (a card has at least one, §3)".into());
        return None;
    }
    let members: Vec<String> = object.keys().take(3).map(|k| format!("{k:?}")).collect();
    match serde_json::from_value::<Card>(value) {
        Ok(c)
            if serde_json::to_value(&c)
                .is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty())) =>
        {
            report.problems.push(format!(
                "no parameter the draft defines ({} unknown, so ignored): a card has at least one (§3)",
                members.join(", ")
            ));
            None
        }
        Ok(c) => Some(c),
        Err(e) => {
            report
                .problems
                .push(format!("a member has the wrong type: {e}"));
            None
        }
    }
}

fn check_members(card: &Card, from: &Fetched<'_>, report: &mut CardReport) {
    match (&card.client_id, from.url) {
        (Some(id), Some(url)) if id != url => report.problems.push(format!(
            "client_id {id:?} is not the URL the card came from, {url:?} (compared as strings, §3.1.1)"
        )),
        (Some(_), Some(_)) => report.notes.push("client_id is the card's URL".into()),
        (None, Some(_)) => report
            .problems
            .push("no client_id: a card fetched from its URL must carry it (§3.1.1)".into()),
        (_, None) => report
            .notes
            .push("client_id not compared: no URL given (--url)".into()),
    }
    if let Some(id) = &card.client_id {
        if !id.starts_with("https://") {
            report
                .problems
                .push(format!("client_id {id:?} is not an https URL"));
        }
    }
    if card.jwks.is_some() && card.jwks_uri.is_some() {
        report
            .problems
            .push("both jwks and jwks_uri: a card carries one or the other (§3.1.2)".into());
    }
    let wba = card.web_bot_auth.as_ref();
    let uris = [
        ("jwks_uri", card.jwks_uri.as_deref()),
        ("ips_uri", wba.and_then(|w| w.ips_uri.as_deref())),
    ];
    for (name, uri) in uris {
        if let Some(u) = uri.filter(|u| !u.starts_with("https://")) {
            report
                .problems
                .push(format!("{name} {u:?} is not https (§3.1.2, §3.2.10)"));
        }
    }
    if let Some(t) = wba.and_then(|w| w.trigger.as_deref()) {
        if t != "fetcher" && t != "crawler" {
            report.problems.push(format!(
                "trigger {t:?} is neither \"fetcher\" nor \"crawler\" (§3.2.4)"
            ));
        }
    }
    if let Some(jwks) = &card.jwks {
        let (_, dropped) = crate::directory::usable_entries("", jwks.keys.clone());
        report
            .problems
            .extend(dropped.iter().map(|p| format!("jwks: {p}")));
    }
}

/// Members whose values must have a form: URLs, URIs, a product token, a
/// User-Agent a header can carry.
fn check_forms(card: &Card, report: &mut CardReport) {
    let absolute = |u: &str| url::Url::parse(u).is_ok();
    for (name, uri) in [
        ("client_uri", &card.client_uri),
        ("logo_uri", &card.logo_uri),
    ] {
        if let Some(u) = uri.as_deref().filter(|u| !absolute(u)) {
            report
                .problems
                .push(format!("{name} {u:?} is not a URL (§3.1)"));
        }
    }
    for c in card.contacts.iter().filter(|c| !absolute(c)) {
        let hint = if c.contains('@') {
            format!(": write \"mailto:{c}\"")
        } else {
            String::new()
        };
        report
            .problems
            .push(format!("contacts: {c:?} is not a URI (§3.1){hint}"));
    }
    let Some(wba) = &card.web_bot_auth else {
        return;
    };
    if let Some(t) = &wba.product_token {
        let token = |c: char| c.is_ascii_alphabetic() || c == '_' || c == '-';
        if t.is_empty() || !t.chars().all(token) {
            report.problems.push(format!(
                "rfc9309-product-token {t:?} is not a product token: letters, '_' and '-' only (§3.2.2; RFC 9309 §2.2.1)"
            ));
        } else if mannerly_robots::is_client_library(t) {
            report.problems.push(format!(
                "rfc9309-product-token {t:?} names an HTTP library or tool, which every program built on it sends: a crawler's token is its own"
            ));
        }
    }
    for ua in &wba.expected_user_agent {
        if ua.trim().is_empty() || mannerly_robots::unsendable_char(ua).is_some() {
            report.problems.push(format!(
                "expected-user-agent {ua:?} is not a User-Agent a request can carry (§3.2.1)"
            ));
        }
    }
}

fn check_signatures(
    card: &Card,
    body: &[u8],
    r: &Response,
    from: &Fetched<'_>,
    report: &mut CardReport,
) {
    let signed = r
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("signature-input"));
    if !signed {
        if card.jwks.is_some() {
            report.notes.push(
                "unsigned: a card with inline jwks is RECOMMENDED to be signed (§3.1.3)".into(),
            );
        }
        return;
    }
    let mut keys: Vec<Jwk> = card
        .jwks
        .as_ref()
        .map(|j| j.keys.clone())
        .unwrap_or_default();
    keys.extend(from.jwks_uri_keys.clone().unwrap_or_default());
    let url = from.url.unwrap_or("https://invalid.example/");
    let set = StaticKeys::new(keys);
    let need = (None, crate::proof::CARD_COVERS);
    match crate::proof::verify_body(url, r, body, &set, from.now, need) {
        Ok(proven) if proven.is_empty() => report.problems.push(
            "signed, but by no key the card or its jwks_uri holds: the signature cannot be checked"
                .into(),
        ),
        Ok(proven) => report.notes.push(format!(
            "signature verified (covering Content-Digest) by {}",
            proven.join(", ")
        )),
        Err(e) => report.problems.push(format!("signature: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyPair;

    const URL: &str = "https://crawler.example/bot";

    fn signed_card(pair: &KeyPair, covers_authority: bool) -> (String, Response) {
        let body = serde_json::json!({
            "client_id": URL,
            "jwks": { "keys": [pair.public_jwk()] },
        })
        .to_string();
        let now = UnixMillis::from_secs(1_800_000_000);
        let mut r = crate::proof::sign_body(
            std::slice::from_ref(pair),
            URL,
            Vec::new(),
            body.as_bytes(),
            (now, 60),
            "card",
        )
        .expect("sign");
        if !covers_authority {
            // The draft asks only that Content-Digest be covered: re-sign
            // over it alone.
            let input =
                r#"binding0=("content-digest");created=1800000000;expires=1800000060;keyid="KID""#
                    .replace("KID", &pair.keyid());
            let base = format!(
                "\"content-digest\": {}\n\"@signature-params\": {}",
                crate::digest::content_digest(body.as_bytes()),
                &input["binding0=".len()..]
            );
            let sig = base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                pair.sign(base.as_bytes()),
            );
            r.headers.retain(|(k, _)| !k.starts_with("Signature"));
            r.headers.push(("Signature-Input".into(), input));
            r.headers
                .push(("Signature".into(), format!("binding0=:{sig}:")));
        }
        (body, r)
    }

    #[test]
    fn a_card_signed_over_its_digest_alone_is_valid() {
        let pair = KeyPair::generate();
        for covers_authority in [true, false] {
            let (body, response) = signed_card(&pair, covers_authority);
            let report = check_card(
                body.as_bytes(),
                &Fetched {
                    url: Some(URL),
                    response: Some(&response),
                    jwks_uri_keys: None,
                    now: UnixMillis::from_secs(1_800_000_010),
                },
            );
            assert!(report.problems.is_empty(), "{:?}", report.problems);
            assert!(report
                .notes
                .iter()
                .any(|n| n.contains("signature verified")));
        }
    }

    #[test]
    fn user_agents_match_as_prefixes_with_wildcards() {
        let card = Card {
            web_bot_auth: Some(WebBotAuth {
                expected_user_agent: vec!["Mozilla/5.0 ExampleBot".into(), "Other*/2".into()],
                ..WebBotAuth::default()
            }),
            ..Card::default()
        };
        assert!(card.matches_user_agent("Mozilla/5.0 ExampleBot/1.1"));
        assert!(card.matches_user_agent("OtherCrawler/2.0"));
        assert!(!card.matches_user_agent("Mozilla/5.0 (Windows NT 10.0)"));
        assert!(!Card::default().matches_user_agent("anything"));
    }

    #[test]
    fn members_whose_form_is_wrong_are_each_named() {
        let body = br#"{"client_uri":"not a url","logo_uri":"https://e.com/logo.png",
            "contacts":["bot@e.com","mailto:ok@e.com","someone"],
            "web_bot_auth":{"rfc9309-product-token":"Example Bot",
            "expected-user-agent":["ExampleBot/1.0","x\ny",""]}}"#;
        let report = check_card(
            body,
            &Fetched {
                url: None,
                response: None,
                jwks_uri_keys: None,
                now: UnixMillis::from_secs(1_800_000_010),
            },
        );
        let p = report.problems.join("\n");
        assert_eq!(report.problems.len(), 6, "{p}");
        for says in [
            "client_uri \"not a url\" is not a URL",
            "contacts: \"bot@e.com\" is not a URI (§3.1): write \"mailto:bot@e.com\"",
            "contacts: \"someone\" is not a URI (§3.1)",
            "rfc9309-product-token \"Example Bot\" is not a product token",
            "expected-user-agent \"x\\ny\"",
            "expected-user-agent \"\"",
        ] {
            assert!(p.contains(says), "{says}: {p}");
        }
    }

    #[test]
    fn an_http_librarys_token_is_no_crawlers_own() {
        let body = br#"{"web_bot_auth":{"rfc9309-product-token":"python-requests"}}"#;
        let fetched = Fetched {
            url: None,
            response: None,
            jwks_uri_keys: None,
            now: UnixMillis::from_secs(1_800_000_010),
        };
        let report = check_card(body, &fetched);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p
                    .contains("rfc9309-product-token \"python-requests\" names an HTTP library")),
            "{:?}",
            report.problems
        );
    }
}
