//! Typed values of the directives beyond Allow and Disallow.
//!
//! Each value remembers the line it came from. Values that cannot be read
//! are not silently dropped: the parser records a diagnostic naming the
//! line and what was wrong.

use std::borrow::Cow;
use std::time::Duration;

/// A `Sitemap:` URL.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sitemap {
    /// The URL as written; bytes that are not UTF-8 are percent-encoded.
    pub url: String,
    /// The line it is on (1-based).
    pub line: u32,
}

/// A `Crawl-delay:` value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CrawlDelay {
    /// The delay; fractions are kept (`0.5` is half a second).
    pub delay: Duration,
    /// The value as written.
    pub raw: String,
    /// The line it is on (1-based).
    pub line: u32,
}

/// A `Request-rate:` value: at most `requests` per `period`, optionally only
/// within a daily UTC window.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RequestRate {
    /// Requests allowed per period.
    pub requests: u32,
    /// The period.
    pub period: Duration,
    /// The time of day it applies in, if given (UTC).
    pub window: Option<TimeWindow>,
    /// The value as written.
    pub raw: String,
    /// The line it is on (1-based).
    pub line: u32,
}

impl RequestRate {
    /// The average interval between requests this rate allows.
    pub fn interval(&self) -> Duration {
        self.period / self.requests.max(1)
    }
}

/// A daily window in UTC, as minutes after midnight. `start > end` wraps
/// past midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TimeWindow {
    /// Start, minutes after midnight UTC.
    pub start_minute: u16,
    /// End, minutes after midnight UTC (before the start when the window wraps midnight).
    pub end_minute: u16,
}

impl TimeWindow {
    /// Whether the given minute of the day (UTC) falls in the window.
    pub fn contains(&self, minute_of_day: u16) -> bool {
        if self.start_minute <= self.end_minute {
            (self.start_minute..=self.end_minute).contains(&minute_of_day)
        } else {
            minute_of_day >= self.start_minute || minute_of_day <= self.end_minute
        }
    }
}

/// A `Visit-time:` value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VisitTime {
    /// The window.
    pub window: TimeWindow,
    /// The value as written.
    pub raw: String,
    /// The line it is on (1-based).
    pub line: u32,
}

/// A `Host:` value (Yandex's preferred mirror).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HostDirective {
    /// Scheme if one was given (`https`), else `None`.
    pub scheme: Option<String>,
    /// The host name.
    pub host: String,
    /// The port, if given.
    pub port: Option<u16>,
    /// The line it is on (1-based).
    pub line: u32,
}

/// A `Clean-param:` value (Yandex): query parameters that do not change
/// the page, optionally only under a path prefix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CleanParam {
    /// Query parameters that do not change the page.
    pub params: Vec<String>,
    /// The path prefix the rule applies to, if given.
    pub path_prefix: Option<String>,
    /// The line it is on (1-based).
    pub line: u32,
}

/// One AIPREF usage preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preference {
    /// `y`
    Allowed,
    /// `n`
    Disallowed,
    /// Absent, not a token, or a token other than `y`/`n`.
    #[default]
    Unknown,
}

impl Preference {
    /// Combines two statements: the most restrictive wins (vocab-08 §5.1).
    pub fn combine(self, other: Preference) -> Preference {
        use Preference::*;
        match (self, other) {
            (Disallowed, _) | (_, Disallowed) => Disallowed,
            (Allowed, _) | (_, Allowed) => Allowed,
            _ => Unknown,
        }
    }

    /// `y`, `n` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Preference::Allowed => "y",
            Preference::Disallowed => "n",
            Preference::Unknown => "unknown",
        }
    }
}

/// The categories of use of draft-ietf-aipref-vocab-08 (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Category {
    /// `train-ai`: using an asset to modify the learned parameters of a
    /// generative AI model (-08 narrowed it to generative models: training
    /// a model used only for non-generative tasks is not in it).
    TrainAi,
    /// `ai-use`: using an asset as input to a generative AI model, where the
    /// user did not provide it (new in -08).
    AiUse,
    /// `search`: selecting assets and directing users to them, with links
    /// and excerpts; it overrides the other categories for a use that falls
    /// under it (§4.3).
    Search,
}

impl Category {
    /// The label in a statement of preference.
    pub fn label(self) -> &'static str {
        match self {
            Category::TrainAi => "train-ai",
            Category::AiUse => "ai-use",
            Category::Search => "search",
        }
    }
}

/// Preferences for the categories of draft-ietf-aipref-vocab-08
/// (`train-ai`, `ai-use`, `search`).
///
/// Non-exhaustive: a later vocabulary may add categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct UsagePreferences {
    /// Training generative AI models (`train-ai`).
    pub train_ai: Preference,
    /// Input to generative AI models (`ai-use`, vocab-08).
    pub ai_use: Preference,
    /// Search (`search`).
    pub search: Preference,
}

impl UsagePreferences {
    /// Parses a statement of preference (an RFC 9651 dictionary such as
    /// `train-ai=n, ai-use=n, search=y`) as vocab-08 §6.5 says: unknown keys and all
    /// parameters are ignored, a value other than the tokens `y` and `n` is
    /// unknown, and a dictionary that does not parse leaves everything
    /// unknown (the error is returned alongside).
    pub fn parse(bytes: &[u8]) -> (UsagePreferences, Option<String>) {
        let dict: sfv::Dictionary = match sfv::Parser::new(bytes).parse() {
            Ok(d) => d,
            Err(e) => return (UsagePreferences::default(), Some(e.to_string())),
        };
        let get = |label: &str| -> Preference {
            match dict.get(label) {
                Some(sfv::ListEntry::Item(item)) => {
                    match item.bare_item.as_token().map(|t| t.as_str()) {
                        Some("y") => Preference::Allowed,
                        Some("n") => Preference::Disallowed,
                        _ => Preference::Unknown,
                    }
                }
                _ => Preference::Unknown,
            }
        };
        (
            UsagePreferences {
                train_ai: get("train-ai"),
                ai_use: get("ai-use"),
                search: get("search"),
            },
            None,
        )
    }

    /// Combines per category, the most restrictive winning.
    pub fn combine(self, other: UsagePreferences) -> UsagePreferences {
        UsagePreferences {
            train_ai: self.train_ai.combine(other.train_ai),
            ai_use: self.ai_use.combine(other.ai_use),
            search: self.search.combine(other.search),
        }
    }

    /// The preference for one category.
    pub fn get(&self, category: Category) -> Preference {
        match category {
            Category::TrainAi => self.train_ai,
            Category::AiUse => self.ai_use,
            Category::Search => self.search,
        }
    }

    /// The preference for a use that falls under `categories`: when one of
    /// them is `search`, the search preference decides (vocab-08 §4.3: it
    /// overrides the others, e.g. a ranking model trained and used only
    /// for search); otherwise the most restrictive of them.
    pub fn for_use(&self, categories: &[Category]) -> Preference {
        if categories.contains(&Category::Search) {
            return self.search;
        }
        categories
            .iter()
            .map(|c| self.get(*c))
            .reduce(Preference::combine)
            .unwrap_or(Preference::Unknown)
    }
}

/// A `Content-Usage:` rule (draft-ietf-aipref-attach-05 §3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ContentUsageRule {
    /// The path as written, when the value starts with `/`.
    pub path: Option<String>,
    /// The path as matched (percent-normalised).
    pub effective_path: Option<String>,
    /// The statement of preference as written.
    pub preference: String,
    /// The preferences it states.
    pub preferences: UsagePreferences,
    /// The line it is on (1-based).
    pub line: u32,
}

/// The usage preferences that apply to one URL.
///
/// Non-exhaustive: a later vocabulary may add categories.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[non_exhaustive]
pub struct ContentUsage {
    /// Training generative AI models (`train-ai`).
    pub train_ai: Preference,
    /// Input to generative AI models (`ai-use`, vocab-08).
    pub ai_use: Preference,
    /// Search (`search`).
    pub search: Preference,
    /// Lines of the robots.txt Content-Usage rules that decided (empty
    /// when none matched).
    pub lines: Vec<u32>,
    /// Whether a `Content-Usage` header field was combined in
    /// ([`Robots::content_usage_with_header`](crate::Robots::content_usage_with_header)).
    pub from_header: bool,
}

pub(crate) fn combine_usage(rules: &[&ContentUsageRule]) -> ContentUsage {
    let mut prefs = UsagePreferences::default();
    for r in rules {
        prefs = prefs.combine(r.preferences);
    }
    ContentUsage {
        train_ai: prefs.train_ai,
        ai_use: prefs.ai_use,
        search: prefs.search,
        lines: rules.iter().map(|r| r.line).collect(),
        from_header: false,
    }
}

impl ContentUsage {
    /// The categories' preferences, without where they came from.
    pub fn preferences(&self) -> UsagePreferences {
        UsagePreferences {
            train_ai: self.train_ai,
            ai_use: self.ai_use,
            search: self.search,
        }
    }

    /// The preference for a use under `categories` (search overriding the
    /// others: [`UsagePreferences::for_use`]).
    pub fn for_use(&self, categories: &[Category]) -> Preference {
        self.preferences().for_use(categories)
    }

    /// `train-ai=n, ai-use=unknown, search=y`: every category, for people
    /// and logs.
    pub fn summary(&self) -> String {
        format!(
            "train-ai={}, ai-use={}, search={}",
            self.train_ai.as_str(),
            self.ai_use.as_str(),
            self.search.as_str()
        )
    }
}

/// Text for a value: UTF-8 as it is, other bytes percent-encoded.
pub(crate) fn bytes_to_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for b in chunk.invalid() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            out
        }
    }
}

/// Whether `s` is an absolute http(s) URL with a host.
pub(crate) fn is_absolute_http_url(s: &str) -> bool {
    let b = s.as_bytes();
    let scheme = |name: &[u8]| {
        b.get(..name.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(name))
    };
    let rest = if scheme(b"https://") {
        &b[8..]
    } else if scheme(b"http://") {
        &b[7..]
    } else {
        return false;
    };
    let host_end = rest
        .iter()
        .position(|c| matches!(c, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority = &rest[..host_end];
    // Whitespace and controls (ASCII's are all at or below the space, or
    // DEL), read without stopping so that the loop is vectorised.
    let spaced = b
        .iter()
        .fold(false, |seen, &c| seen | (c <= b' ') | (c == 0x7F));
    !authority.is_empty() && !authority.starts_with(b":") && !spaced
}

pub(crate) fn parse_sitemap(value: &[u8]) -> Result<String, String> {
    let url = bytes_to_text(value);
    if is_absolute_http_url(&url) {
        Ok(url)
    } else if url.is_empty() {
        Err("the Sitemap line has no URL".into())
    } else {
        Err(format!(
            "`{url}` is not an absolute http(s) URL; crawlers only follow Sitemap lines like `Sitemap: https://example.com/sitemap.xml`"
        ))
    }
}

pub(crate) fn parse_crawl_delay(value: &[u8]) -> Result<CrawlDelay, String> {
    let raw = bytes_to_text(value);
    let ok_syntax = {
        let mut parts = raw.splitn(2, '.');
        let int = parts.next().unwrap_or("");
        let frac = parts.next();
        !int.is_empty()
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
    };
    if !ok_syntax {
        return Err(format!(
            "Crawl-delay `{raw}` is not a number of seconds; engines disagree on such values (some read the leading digits, some ignore the line)"
        ));
    }
    let secs: f64 = raw
        .parse()
        .map_err(|_| format!("Crawl-delay `{raw}` is not a number of seconds"))?;
    let delay = Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| *d <= Duration::from_secs(86_400 * 365))
        .ok_or_else(|| format!("Crawl-delay `{raw}` is too large to mean anything"))?;
    Ok(CrawlDelay {
        delay,
        raw,
        line: 0,
    })
}

fn parse_period(s: &str) -> Option<Duration> {
    let (num, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: u64 = num.parse().ok()?;
    let mul = match unit.to_ascii_lowercase().as_str() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(mul).map(Duration::from_secs)
}

fn parse_hhmm(s: &str) -> Option<u16> {
    let digits: String = s.chars().filter(|&c| c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) || s.len() > 5 {
        return None;
    }
    let h: u16 = digits[..2].parse().ok()?;
    let m: u16 = digits[2..].parse().ok()?;
    (h < 24 && m < 60).then_some(h * 60 + m)
}

fn parse_window(s: &str) -> Option<TimeWindow> {
    let (a, b) = s.split_once('-')?;
    Some(TimeWindow {
        start_minute: parse_hhmm(a.trim())?,
        end_minute: parse_hhmm(b.trim())?,
    })
}

pub(crate) fn parse_request_rate(value: &[u8]) -> Result<RequestRate, String> {
    let raw = bytes_to_text(value);
    let mut parts = raw.split_ascii_whitespace();
    let rate = parts.next().unwrap_or("");
    let window = parts.next();
    let err = || {
        format!("Request-rate `{raw}` is not `requests/period` such as `1/10s` (units s, m, h, d)")
    };
    if parts.next().is_some() {
        return Err(err());
    }
    let (n, period) = rate.split_once('/').ok_or_else(err)?;
    let requests: u32 = n.parse().map_err(|_| err())?;
    let period = parse_period(period).ok_or_else(err)?;
    if requests == 0 || period.is_zero() {
        return Err(format!("Request-rate `{raw}` allows no requests at all"));
    }
    let window = match window {
        Some(w) => Some(parse_window(w).ok_or_else(err)?),
        None => None,
    };
    Ok(RequestRate {
        requests,
        period,
        window,
        raw,
        line: 0,
    })
}

pub(crate) fn parse_visit_time(value: &[u8]) -> Result<VisitTime, String> {
    let raw = bytes_to_text(value);
    let window = parse_window(&raw)
        .ok_or_else(|| format!("Visit-time `{raw}` is not a UTC range such as `0100-0645`"))?;
    Ok(VisitTime {
        window,
        raw,
        line: 0,
    })
}

pub(crate) fn parse_host(value: &[u8]) -> Result<HostDirective, String> {
    let raw = bytes_to_text(value);
    let (scheme, rest) = match raw.split_once("://") {
        Some((s, r)) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => {
            (Some(s.to_ascii_lowercase()), r)
        }
        Some(_) => {
            return Err(format!(
                "Host `{raw}` has a scheme other than http or https"
            ))
        }
        None => (None, raw.as_str()),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.contains(']') || h.ends_with(']') => (
            h,
            Some(
                p.parse::<u16>()
                    .map_err(|_| format!("Host `{raw}` has an invalid port"))?,
            ),
        ),
        _ => (rest, None),
    };
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'[' | b']' | b':'));
    if !valid {
        return Err(format!(
            "Host `{raw}` is not a host name such as `www.example.com`"
        ));
    }
    Ok(HostDirective {
        scheme,
        host: host.to_ascii_lowercase(),
        port,
        line: 0,
    })
}

pub(crate) fn parse_clean_param(value: &[u8]) -> Result<CleanParam, String> {
    let raw = bytes_to_text(value);
    let mut parts = raw.split_ascii_whitespace();
    let params: Vec<String> = parts
        .next()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    let path_prefix = parts.next().map(str::to_owned);
    if params.is_empty() {
        return Err(format!("Clean-param `{raw}` names no parameters"));
    }
    if parts.next().is_some() {
        return Err(format!(
            "Clean-param `{raw}` has more than a parameter list and a path"
        ));
    }
    Ok(CleanParam {
        params,
        path_prefix,
        line: 0,
    })
}

/// A dictionary's keys as written, in order, repeats included.
struct KeysInOrder(Vec<String>);

impl<'de> sfv::visitor::DictionaryVisitor<'de> for KeysInOrder {
    type Out = Vec<String>;
    type Error = std::convert::Infallible;

    fn entry(
        &mut self,
        key: &'de sfv::KeyRef,
    ) -> Result<impl sfv::visitor::EntryVisitor<'de>, Self::Error> {
        self.0.push(key.as_str().to_owned());
        Ok(sfv::visitor::Ignored)
    }

    fn finish(self) -> Result<Vec<String>, Self::Error> {
        Ok(self.0)
    }
}

/// The labels vocab-08 defines (§6.1); other labels are ignored.
pub const CATEGORY_LABELS: [&str; 3] = ["train-ai", "ai-use", "search"];

/// What in a well-formed statement of preference a crawler reads as
/// unknown, though the author likely meant something by it: a category
/// whose value is not the token `y` or `n` (a warning: the preference is
/// lost), and a label the vocabulary does not define (a note: ignored,
/// unless an extension defines it). Empty for a dictionary that does not
/// parse (that is said on its own).
pub(crate) fn usage_unread(pref: &str) -> Vec<(crate::Severity, String)> {
    let Ok(dict) = sfv::Parser::new(pref.as_bytes()).parse::<sfv::Dictionary>() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // The dictionary keeps only a key's last value (RFC 9651 §4.2.2): the
    // keys in order, repeats included, say what was dropped.
    let keys = sfv::Parser::new(pref.as_bytes())
        .parse_dictionary_with_visitor(KeysInOrder(Vec::new()))
        .unwrap_or_default();
    for (i, key) in keys.iter().enumerate() {
        if keys[..i].contains(key) && !keys[i + 1..].contains(key) {
            out.push((
                crate::Severity::Warning,
                format!("`{key}` is given more than once: only its last value counts"),
            ));
        }
    }
    for (key, entry) in &dict {
        let key = key.as_str();
        if !CATEGORY_LABELS.contains(&key) {
            out.push((
                crate::Severity::Info,
                format!(
                    "`{key}` is not a usage category of the AIPREF vocabulary ({}): crawlers ignore it",
                    CATEGORY_LABELS.join(", ")
                ),
            ));
            continue;
        }
        let token = match entry {
            sfv::ListEntry::Item(item) => item.bare_item.as_token().map(|t| t.as_str()),
            sfv::ListEntry::InnerList(_) => None,
        };
        if !matches!(token, Some("y" | "n")) {
            out.push((
                crate::Severity::Warning,
                format!("`{key}` has no preference: its value must be the token y or n, so crawlers read it as unknown"),
            ));
        }
    }
    out
}

/// Splits a Content-Usage value into an optional path and the preference
/// (attach-05 §3.2): a value starting with `/` has a path up to the first
/// space or tab.
pub(crate) fn parse_content_usage(
    value: &[u8],
    line: u32,
    escape: fn(&[u8]) -> Cow<'_, [u8]>,
) -> (ContentUsageRule, Option<String>) {
    let (path, pref) = if value.first() == Some(&b'/') {
        let end = value
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(value.len());
        let rest = &value[end..];
        let start = rest
            .iter()
            .position(|&b| b != b' ' && b != b'\t')
            .unwrap_or(rest.len());
        (Some(&value[..end]), &rest[start..])
    } else {
        (None, value)
    };
    let (preferences, err) = UsagePreferences::parse(pref);
    let err = err.map(|e| {
        format!(
            "Content-Usage preference `{}` is not a valid dictionary ({e}); every category is unknown",
            bytes_to_text(pref)
        )
    });
    let rule = ContentUsageRule {
        path: path.map(bytes_to_text),
        effective_path: path.map(|p| bytes_to_text(&escape(p))),
        preference: bytes_to_text(pref),
        preferences,
        line,
    };
    (rule, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`is_absolute_http_url`] written plainly: the scheme compared on a
    /// lowered copy, the host cut at a char search, whitespace and
    /// controls looked for one by one.
    fn absolute_plainly(s: &str) -> bool {
        let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
        let rest = if lower.starts_with("https://") {
            &s[8..]
        } else if lower.starts_with("http://") {
            &s[7..]
        } else {
            return false;
        };
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        !authority.is_empty()
            && !authority.starts_with(':')
            && !s
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    }

    #[test]
    fn sitemap_urls_must_be_absolute_http() {
        for (url, want) in [
            ("https://example.com/sitemap.xml", true),
            ("HTTP://Example.com", true),
            ("http://\u{e9}x.test/s.xml", true),
            ("https://", false),
            ("https://:80/s.xml", false),
            ("https:///s.xml", false),
            ("ftp://example.com/s.xml", false),
            ("/sitemap.xml", false),
            ("https://example.com/a b.xml", false),
            ("https://example.com/\u{7f}", false),
            ("https://example.com/\t", false),
        ] {
            assert_eq!(is_absolute_http_url(url), want, "{url:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn sitemap_urls_are_judged_as_written_plainly(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "http", "HTTPS", "s", ":", "//", "/", "?", "#", ";", "example.com", " ",
                    "\t", "\u{7f}", "\u{1}", "\u{e9}", "\u{a0}", "x",
                ]),
                0..8,
            )
        ) {
            let url = pieces.concat();
            proptest::prop_assert_eq!(is_absolute_http_url(&url), absolute_plainly(&url));
        }
    }

    #[test]
    fn preferences_read_as_unknown_are_each_said() {
        let said = |pref: &str| -> Vec<(crate::Severity, String)> { usage_unread(pref) };
        assert!(said("train-ai=n, ai-use=y, search=y").is_empty());
        assert!(said("train-ai;allow=n, train-ai=y").len() == 1, "a repeat");
        // vocab-08 §6.5.1's own example: both repeated, neither a token.
        let w = said("train-ai=y, train-ai, search=n, search=\"n\"");
        let text: Vec<&str> = w.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(w.len(), 4, "{text:?}");
        assert!(
            w.iter().all(|(s, _)| *s == crate::Severity::Warning),
            "{text:?}"
        );
        let w = said("train-genai=n, bots=n");
        assert!(
            w.iter()
                .all(|(s, m)| *s == crate::Severity::Info && m.contains("not a usage category")),
            "{w:?}"
        );
        assert!(
            said("train-ai=").is_empty(),
            "a parse error is said on its own"
        );
    }

    #[test]
    fn crawl_delay_values() {
        assert_eq!(
            parse_crawl_delay(b"10").map(|c| c.delay),
            Ok(Duration::from_secs(10))
        );
        assert_eq!(
            parse_crawl_delay(b"0.5").map(|c| c.delay),
            Ok(Duration::from_millis(500))
        );
        assert!(parse_crawl_delay(b"10s").is_err());
        assert!(parse_crawl_delay(b"-1").is_err());
        assert!(parse_crawl_delay(b"1.").is_err());
        assert!(parse_crawl_delay(b"99999999999999999999999").is_err());
    }

    #[test]
    fn request_rate_values() {
        let r = parse_request_rate(b"1/10s").expect("valid");
        assert_eq!((r.requests, r.period), (1, Duration::from_secs(10)));
        let r = parse_request_rate(b"3/1m 0600-0845").expect("valid");
        assert_eq!(r.interval(), Duration::from_secs(20));
        assert_eq!(
            r.window.map(|w| (w.start_minute, w.end_minute)),
            Some((360, 525))
        );
        assert!(parse_request_rate(b"0/5s").is_err());
        assert!(parse_request_rate(b"fast").is_err());
        assert!(parse_request_rate(b"1/5x").is_err());
    }

    #[test]
    fn windows_wrap() {
        let w = parse_window("2300-0100").expect("valid");
        assert!(w.contains(0) && w.contains(23 * 60 + 30) && !w.contains(120));
        assert!(parse_window("2500-0100").is_none());
    }

    #[test]
    fn host_values() {
        let h = parse_host(b"https://www.Example.com:8443").expect("valid");
        assert_eq!(
            (h.scheme.as_deref(), h.host.as_str(), h.port),
            (Some("https"), "www.example.com", Some(8443))
        );
        assert!(parse_host(b"not a host").is_err());
    }

    #[test]
    fn vocab_08_ai_use_and_the_search_override() {
        let (p, e) = UsagePreferences::parse(b"train-ai=n, ai-use=n, search=y, future-use=n");
        assert_eq!(e, None);
        assert_eq!(
            (p.train_ai, p.ai_use, p.search),
            (
                Preference::Disallowed,
                Preference::Disallowed,
                Preference::Allowed
            ),
            "an unknown label is ignored"
        );
        // A ranking model trained and used only for search: search decides.
        assert_eq!(
            p.for_use(&[Category::TrainAi, Category::Search]),
            Preference::Allowed
        );
        assert_eq!(
            p.for_use(&[Category::AiUse, Category::Search]),
            Preference::Allowed
        );
        // Generative training alone: train-ai decides.
        assert_eq!(p.for_use(&[Category::TrainAi]), Preference::Disallowed);
        // Search disallowed wins over an allowed train-ai for a search use.
        let (q, _) = UsagePreferences::parse(b"train-ai=y, search=n");
        assert_eq!(
            q.for_use(&[Category::TrainAi, Category::Search]),
            Preference::Disallowed
        );
        assert_eq!(q.for_use(&[Category::AiUse]), Preference::Unknown);
        assert_eq!(q.for_use(&[]), Preference::Unknown);
        assert_eq!(p.combine(q).ai_use, Preference::Disallowed);
        assert_eq!(Category::AiUse.label(), "ai-use");
    }

    #[test]
    fn usage_preferences() {
        let (p, e) = UsagePreferences::parse(b"train-ai=n, search=y");
        assert!(e.is_none());
        assert_eq!(
            (p.train_ai, p.search),
            (Preference::Disallowed, Preference::Allowed)
        );
        // Last value wins; non-tokens are unknown; parameters ignored.
        let (p, _) = UsagePreferences::parse(b"train-ai=y, train-ai, search=n;x=1");
        assert_eq!(
            (p.train_ai, p.search),
            (Preference::Unknown, Preference::Disallowed)
        );
        let (p, e) = UsagePreferences::parse(b"Train-AI=n");
        assert!(e.is_some());
        assert_eq!(p.train_ai, Preference::Unknown);
    }
}
