//! The crawler's page (Crawler Best Practices): what the crawler is, how
//! to block it, how its data is used, whom to contact, and where its IP
//! ranges are (`<link rel="client-ranges">`). Written from one
//! [`Description`] for an operator's kit, and read back ([`facts`]) when
//! any operator's published identity is checked. Sans-IO.

/// What an operator says of its crawler: the one source of the kit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// Its product token, as robots.txt groups name it (`ExampleBot`).
    pub token: String,
    /// Its version, in the User-Agent (`1.0`).
    pub version: String,
    /// Who runs it.
    pub operator: String,
    /// The page's own URL (https), named in the User-Agent.
    pub page: String,
    /// Where the JAFAR file will be served (https).
    pub ranges_url: String,
    /// What it crawls for.
    pub purpose: String,
    /// How the data it collects is used.
    pub data_use: String,
    /// Whom to contact (`mailto:` or an https URL).
    pub contact: String,
    /// Whether it renders pages (runs their scripts).
    #[serde(default)]
    pub renders: bool,
    /// The networks it crawls from (CIDR).
    pub ranges: Vec<String>,
    /// Its Web Bot Auth key directory, if it signs.
    #[serde(default)]
    pub key_directory: Option<String>,
    /// Its Signature Agent Card, if it has one.
    #[serde(default)]
    pub card: Option<String>,
}

/// Why a description's URL cannot be published as written: it must be
/// an https URL with nothing a URL must percent-encode (a space, a quote,
/// an angle bracket), since it goes as written into the page, a `Link`
/// header and the User-Agent.
fn url_problem(url: &str) -> Option<&'static str> {
    let https = url::Url::parse(url).is_ok_and(|u| u.scheme() == "https" && u.host().is_some());
    if !https {
        return Some("an https URL is needed");
    }
    let unsafe_char = |c: char| c.is_whitespace() || c.is_control() || "\"<>\\^`{|}".contains(c);
    if url.contains(unsafe_char) {
        return Some(
            "percent-encode its spaces, quotes and angle brackets: it is published as written",
        );
    }
    None
}

impl Description {
    /// What is wrong with it, each said with its field; empty when none.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if mannerly_robots::product_token(&format!("{}/{}", self.token, self.version)).as_deref()
            != Some(self.token.as_str())
        {
            out.push(format!(
                "token {:?}: not a product token (letters, digits, '-' and '_')",
                self.token
            ));
        } else if mannerly_robots::is_client_library(&self.token) {
            out.push(format!(
                "token {:?}: an HTTP library's or tool's name, which every program built on it sends: give the crawler a name of its own",
                self.token
            ));
        }
        if !self
            .version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_+".contains(c))
            || self.version.is_empty()
        {
            out.push(format!(
                "version {:?}: letters, digits, '.', '-', '_' and '+' only (it follows the token in the User-Agent)",
                self.version
            ));
        }
        let optional = [("key_directory", &self.key_directory), ("card", &self.card)];
        let urls = [("page", &self.page), ("ranges_url", &self.ranges_url)]
            .into_iter()
            .chain(
                optional
                    .into_iter()
                    .filter_map(|(f, u)| Some((f, u.as_ref()?))),
            );
        for (field, url) in urls {
            if let Some(problem) = url_problem(url) {
                out.push(format!("{field} {url:?}: {problem}"));
            }
        }
        if self.page.contains(['(', ')', ';']) {
            out.push(format!(
                "page {:?}: percent-encode '(', ')' and ';': they would end the User-Agent's comment that carries it",
                self.page
            ));
        }
        let contact = &self.contact;
        if !(contact.starts_with("mailto:") && contact.len() > "mailto:".len()
            || contact.starts_with("https://") && url_problem(contact).is_none())
        {
            out.push(format!(
                "contact {contact:?}: a mailto: or https URL is needed"
            ));
        }
        for (field, text) in [
            ("purpose", &self.purpose),
            ("data_use", &self.data_use),
            ("operator", &self.operator),
        ] {
            if text.trim().is_empty() {
                out.push(format!(
                    "{field}: say it; the page is where site owners read it"
                ));
            }
        }
        out
    }

    /// The User-Agent the crawler sends: its token, version and page.
    pub fn user_agent(&self) -> String {
        format!(
            "Mozilla/5.0 (compatible; {}/{}; +{})",
            self.token, self.version, self.page
        )
    }

    /// The `Link` header to serve with the page, for machines that read
    /// headers only.
    pub fn link_header(&self) -> String {
        format!("<{}>; rel=\"client-ranges\"", self.ranges_url)
    }

    /// The page, as HTML that reads without script.
    pub fn page_html(&self) -> String {
        let e = escape;
        let token = e(&self.token);
        let mut links = format!(
            "<link rel=\"client-ranges\" href=\"{}\">\n",
            e(&self.ranges_url)
        );
        let mut signing = String::new();
        let linked = [
            (
                &self.key_directory,
                "http-message-signatures-directory",
                "It signs its requests (Web Bot Auth); its keys are in",
            ),
            (
                &self.card,
                "signature-agent-card",
                "Its Signature Agent Card:",
            ),
        ];
        for (url, rel, says) in linked {
            if let Some(url) = url {
                let url = e(url);
                links.push_str(&format!("<link rel=\"{rel}\" href=\"{url}\">\n"));
                signing.push_str(&format!("<p>{says} <a href=\"{url}\">{url}</a>.</p>\n"));
            }
        }
        let renders = match self.renders {
            true => "It renders pages: it runs their scripts, as a browser would.",
            false => "It does not render pages: it reads their HTML and runs no script.",
        };
        format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{token}</title>\n{links}</head>\n<body>\n\
<h1>{token}</h1>\n<p>{token} is {operator}'s crawler. It {purpose}</p>\n\
<p>It sends this User-Agent:</p>\n<pre>{ua}</pre>\n\
<h2>How to block it</h2>\n<p>{token} obeys robots.txt (RFC 9309) for the token <code>{token}</code>. To keep it off your whole site, put this in <code>/robots.txt</code>:</p>\n\
<pre>User-agent: {token}\nDisallow: /</pre>\n<p>Check your robots.txt with any RFC 9309 tester, for example <code>mannerly check robots.txt --agent {token} URL</code>.</p>\n\
<h2>How the data is used</h2>\n<p>{data_use}</p>\n<p>{renders}</p>\n\
<h2>Where it crawls from</h2>\n<p>Its IP ranges are published in JAFAR format at <a href=\"{ranges}\">{ranges}</a>.</p>\n{signing}\
<h2>Contact</h2>\n<p><a href=\"{contact}\">{contact_text}</a></p>\n</body>\n</html>\n",
            operator = e(&self.operator),
            purpose = e(&self.purpose),
            ua = e(&self.user_agent()),
            data_use = e(&self.data_use),
            ranges = e(&self.ranges_url),
            contact = e(&self.contact),
            contact_text = e(self.contact.trim_start_matches("mailto:")),
        )
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What a crawler's page shows, as read by a checker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Where its `client-ranges` link points (the `Link` header first),
    /// resolved against the page.
    pub client_ranges: Option<String>,
    /// Its key directory link, if any.
    pub key_directory: Option<String>,
    /// Its Signature Agent Card link, if any.
    pub card: Option<String>,
    /// It shows a robots.txt group for the token (`User-agent: TOKEN`).
    pub robots_example: bool,
    /// It names a contact (a `mailto:` link, or the word "contact").
    pub contact: bool,
    /// It mentions the token at all.
    pub names_token: bool,
}

/// Reads a crawler's page (`html`, at `base`, served with the `Link`
/// header values `link_headers`) for the facts a checker looks for.
pub fn facts(html: &str, base: &url::Url, link_headers: &[&str], token: &str) -> Facts {
    let lower = html.to_ascii_lowercase();
    let resolve = |href: &str| base.join(href.trim()).ok().map(String::from);
    let mut f = Facts {
        robots_example: lower.contains(&format!("user-agent: {}", token.to_ascii_lowercase())),
        contact: lower.contains("mailto:") || lower.contains("contact"),
        names_token: lower.contains(&token.to_ascii_lowercase()),
        ..Facts::default()
    };
    for value in link_headers {
        for (href, rels) in link_header_links(value) {
            if rels.iter().any(|r| r.eq_ignore_ascii_case("client-ranges"))
                && f.client_ranges.is_none()
            {
                f.client_ranges = resolve(&href);
            }
        }
    }
    for (rels, href) in link_elements(html) {
        let has = |name: &str| {
            rels.split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case(name))
        };
        let slot = if has("client-ranges") {
            &mut f.client_ranges
        } else if has("http-message-signatures-directory") {
            &mut f.key_directory
        } else if has("signature-agent-card") {
            &mut f.card
        } else {
            continue;
        };
        if slot.is_none() {
            *slot = resolve(&href);
        }
    }
    f
}

/// The `(href, rels)` of one `Link` header value (RFC 8288), leniently.
fn link_header_links(value: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let mut params = part.split(';');
        let Some(target) = params.next().map(str::trim) else {
            continue;
        };
        let Some(href) = target.strip_prefix('<').and_then(|t| t.strip_suffix('>')) else {
            continue;
        };
        let rels = params
            .filter_map(|p| p.split_once('='))
            .filter(|(k, _)| k.trim().eq_ignore_ascii_case("rel"))
            .flat_map(|(_, v)| {
                v.trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        out.push((href.to_owned(), rels));
    }
    out
}

/// The `(rel, href)` of every `<link>` element with both, in order (a
/// lenient scan of the start tags, bounded by the text's length).
fn link_elements(html: &str) -> Vec<(String, String)> {
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<link") {
        let start = at + i + 5;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let attrs = attributes(&html[start..end]);
        let get = |name: &str| {
            attrs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if let (Some(rel), Some(href)) = (get("rel"), get("href")) {
            out.push((rel, href));
        }
        at = end;
    }
    out
}

/// A start tag's attributes (names lower-cased; quoted or bare values).
fn attributes(tag: &str) -> Vec<(String, String)> {
    let b = tag.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let name_start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'/' {
            i += 1;
        }
        let name = tag[name_start..i].to_ascii_lowercase();
        if name.is_empty() {
            i += 1;
            continue;
        }
        let mut value = String::new();
        if b.get(i) == Some(&b'=') {
            i += 1;
            match b.get(i) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let close = tag[i + 1..].find(q as char).map_or(b.len(), |e| i + 1 + e);
                    value = tag[i + 1..close].to_owned();
                    i = close + 1;
                }
                _ => {
                    let s = i;
                    while i < b.len() && !b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    value = tag[s..i].to_owned();
                }
            }
        }
        out.push((name, value.replace("&amp;", "&")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Description {
        Description {
            token: "ExampleBot".into(),
            version: "1.0".into(),
            operator: "Example & Co".into(),
            page: "https://example.com/bot".into(),
            ranges_url: "https://example.com/bot/ranges.json".into(),
            purpose: "indexes recipes for Example Search.".into(),
            data_use: "Search results only; never to train AI models.".into(),
            contact: "mailto:bot@example.com".into(),
            renders: false,
            ranges: vec!["192.0.2.0/24".into()],
            key_directory: Some(
                "https://example.com/.well-known/http-message-signatures-directory".into(),
            ),
            card: None,
        }
    }

    #[test]
    fn the_written_page_reads_back_with_every_fact() {
        let d = example();
        assert_eq!(d.problems(), Vec::<String>::new());
        let base = url::Url::parse(&d.page).expect("url");
        let f = facts(&d.page_html(), &base, &[], "ExampleBot");
        assert_eq!(
            f.client_ranges.as_deref(),
            Some("https://example.com/bot/ranges.json")
        );
        assert_eq!(f.key_directory, d.key_directory);
        assert!(f.robots_example && f.contact && f.names_token);
        assert!(d.page_html().contains("Example &amp; Co"));
        assert_eq!(
            mannerly_robots::product_token(&d.user_agent()).as_deref(),
            Some("ExampleBot")
        );
    }

    #[test]
    fn a_kit_for_an_http_librarys_token_is_refused() {
        let d = Description {
            token: "curl".into(),
            ..example()
        };
        let p = d.problems();
        assert!(
            p.iter()
                .any(|p| p.starts_with("token \"curl\": an HTTP library's or tool's name")),
            "{p:?}"
        );
    }

    #[test]
    fn a_link_header_and_relative_links_are_read() {
        let base = url::Url::parse("https://op.test/about/bot.html").expect("url");
        let f = facts(
            "<LINK href=ranges.json REL='Client-Ranges alternate'>",
            &base,
            &[],
            "X",
        );
        assert_eq!(
            f.client_ranges.as_deref(),
            Some("https://op.test/about/ranges.json")
        );
        let f = facts(
            "<link rel=\"client-ranges\" href=\"/b.json\">",
            &base,
            &["<https://op.test/a.json>; rel=\"client-ranges\", </x>; rel=next"],
            "X",
        );
        assert_eq!(
            f.client_ranges.as_deref(),
            Some("https://op.test/a.json"),
            "the header first"
        );
        assert_eq!(facts("<p>nothing</p>", &base, &[], "X"), Facts::default());
    }

    #[test]
    fn a_description_with_gaps_is_told_each() {
        let d = Description {
            token: "Bad Bot".into(),
            page: "http://example.com/bot".into(),
            contact: "bot@example.com".into(),
            data_use: " ".into(),
            ..example()
        };
        let said = d.problems().join("\n");
        for field in ["token", "page", "contact", "data_use"] {
            assert!(said.contains(field), "{field}: {said}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_page_is_read_without_a_panic(html in ".{0,400}", header in ".{0,80}") {
            let base = url::Url::parse("https://op.test/").expect("url");
            let _ = facts(&html, &base, &[&header], "ExampleBot");
        }
    }
}
