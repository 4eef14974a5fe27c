//! Any crawler's published identity, checked against the Crawler Best
//! Practices: from its User-Agent (or its page's URL) to its page, the
//! page's `client-ranges` link, the JAFAR file, and the key directory and
//! Signature Agent Card where linked. Each practice is reported with what
//! was found and what is wrong.
//!
//! Fetching follows JAFAR's rules for consumers: https only (unless
//! allowed), no private or reserved addresses, bounded sizes and times, at
//! most one request an hour per URL (a cache directory keeps answers, and
//! a fresher one by its own `Cache-Control` or `Expires` lasts longer).

use std::path::PathBuf;
use std::time::Duration;

use mannerly_fetch::freshness::{reuse, Reuse, Stored};
use mannerly_time::UnixMillis;

use crate::crawler_page::facts;
use crate::jafar;

/// The largest answer read (a JAFAR file of a large operator is some
/// hundreds of KiB).
const MAX_BYTES: usize = 4 << 20;
/// Answers younger than this are not asked for again (JAFAR: at most
/// hourly).
const MIN_INTERVAL_MS: u64 = 3_600_000;

/// How to check.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Fetch http URLs too (https only otherwise).
    pub allow_http: bool,
    /// Send every request through this proxy (for tests, or a site's
    /// egress).
    pub proxy: Option<String>,
    /// Where answers are kept between runs (none: every run fetches).
    pub cache: Option<PathBuf>,
    /// The product token, when the subject is a page's URL.
    pub token: Option<String>,
    /// Whole-request timeout.
    pub timeout: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            allow_http: false,
            proxy: None,
            cache: None,
            token: None,
            timeout: Duration::from_secs(10),
        }
    }
}

/// How a practice fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Met.
    Pass,
    /// Something is wrong (see the problems).
    Problem,
    /// Could not be checked (a fetch failed, or nothing to check).
    NotChecked,
}

/// One practice, as the published identity shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Item {
    /// The practice.
    pub practice: &'static str,
    /// How it fared.
    pub status: Status,
    /// What was found.
    pub found: String,
    /// What is wrong.
    pub problems: Vec<String>,
}

/// The whole check.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IdentityReport {
    /// The crawler's page.
    pub page: Option<String>,
    /// Its product token.
    pub token: Option<String>,
    /// Each practice.
    pub items: Vec<Item>,
}

impl IdentityReport {
    /// 0: every practice met; 1: problems; 2: something could not be
    /// checked.
    pub fn exit_code(&self) -> u8 {
        if self.items.iter().any(|i| i.status == Status::NotChecked) {
            2
        } else if self.items.iter().any(|i| i.status == Status::Problem) {
            1
        } else {
            0
        }
    }

    fn add(&mut self, practice: &'static str, found: String, problems: Vec<String>) {
        let status = match problems.is_empty() {
            true => Status::Pass,
            false => Status::Problem,
        };
        self.items.push(Item {
            practice,
            status,
            found,
            problems,
        });
    }

    fn not_checked(&mut self, practice: &'static str, why: String) {
        self.items.push(Item {
            practice,
            status: Status::NotChecked,
            found: why,
            problems: Vec::new(),
        });
    }
}

/// An answer, as fetched or as the cache kept it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Got {
    fetched: u64,
    status: u16,
    content_type: Option<String>,
    links: Vec<String>,
    cache_control: Option<String>,
    expires: Option<String>,
    date: Option<String>,
    body: String,
}

/// The page a User-Agent names (`+https://...`), and its product token.
pub fn page_of_user_agent(ua: &str) -> (Option<String>, Option<String>) {
    let page = mannerly_robots::page_named(ua).map(str::to_owned);
    (page, mannerly_robots::product_token(ua))
}

/// Checks the published identity `subject` names: a User-Agent, or the
/// crawler's page URL.
pub async fn check_identity(subject: &str, o: &CheckOptions) -> IdentityReport {
    let mut r = IdentityReport::default();
    let is_url = !subject.contains(char::is_whitespace) && url::Url::parse(subject).is_ok();
    let (page, token) = match is_url {
        true => (Some(subject.to_owned()), o.token.clone()),
        false => {
            let (page, token) = page_of_user_agent(subject);
            let mut problems = Vec::new();
            match &token {
                None => problems.push("no product token of its own".to_owned()),
                Some(t) if mannerly_robots::is_client_library(t) => problems.push(format!(
                    "`{t}` names an HTTP library or tool, which every program built on it \
                     sends: no product token of its own"
                )),
                Some(_) => {}
            }
            if page.is_none() {
                let problem = match mannerly_robots::page_without_scheme(subject) {
                    Some(w) => format!("no http(s) URL of a page about the crawler: `{w}` lacks its scheme, write `+https://{w}`"),
                    None => "no http(s) URL of a page about the crawler".to_owned(),
                };
                problems.push(problem);
            }
            r.add("identifiable user agent", subject.to_owned(), problems);
            (page, o.token.clone().or(token))
        }
    };
    r.page = page.clone();
    r.token = token.clone();
    let Some(page) = page else {
        r.not_checked("crawler page", "no page to check".into());
        return r;
    };
    let client = match client(o) {
        Ok(c) => c,
        Err(e) => {
            r.not_checked("crawler page", e);
            return r;
        }
    };
    let got = match get(&client, &page, o).await {
        Ok(g) => g,
        Err(e) => {
            r.not_checked("crawler page", format!("{page}: {e}"));
            return r;
        }
    };
    let Some(f) = page_item(&mut r, &page, &got, token.as_deref()) else {
        r.not_checked("published ranges", format!("{page} could not be read"));
        return r;
    };
    ranges_item(&mut r, &client, f.client_ranges.as_deref(), o).await;
    signing_item(
        &mut r,
        &client,
        (f.key_directory.as_deref(), f.card.as_deref()),
        o,
    )
    .await;
    r
}

/// The ranges a crawler's page links (`client-ranges`, a JAFAR file) for
/// `token`: the prefixes naming no service or naming it. What a site's
/// audit checks an unlisted crawler's requests against.
pub async fn page_ranges(
    page: &str,
    token: &str,
    o: &CheckOptions,
) -> Result<crate::fcrdns::IpRanges, String> {
    let client = client(o)?;
    let got = get(&client, page, o).await?;
    if got.status != 200 {
        return Err(format!("{page} answered {}", got.status));
    }
    let base = url::Url::parse(page).map_err(|e| e.to_string())?;
    let links: Vec<&str> = got.links.iter().map(String::as_str).collect();
    let f = facts(&got.body, &base, &links, token);
    let url = f
        .client_ranges
        .ok_or_else(|| format!("{page} links no client-ranges"))?;
    let file = get(&client, &url, o).await?;
    let checked = jafar::check(&file.body, file.content_type.as_deref(), UnixMillis::now());
    let j = checked
        .jafar
        .ok_or_else(|| format!("{url}: {}", checked.problems.join("; ")))?;
    let cidrs: Vec<String> = j
        .prefixes
        .iter()
        .filter(|p| {
            p.services.is_empty() || p.services.iter().any(|s| s.eq_ignore_ascii_case(token))
        })
        .map(|p| p.net.to_string())
        .collect();
    let refs: Vec<&str> = cidrs.iter().map(String::as_str).collect();
    crate::fcrdns::IpRanges::from_cidrs(&refs).map_err(|e| e.to_string())
}

/// Whether a crawler's page answers: the status it ends with after
/// redirects (fetched as `o` says, through its cache), or why it could not
/// be asked.
pub async fn page_answers(page: &str, o: &CheckOptions) -> Result<u16, String> {
    let client = client(o)?;
    get(&client, page, o).await.map(|got| got.status)
}

/// The page itself: it answers, and says what a site owner needs.
fn page_item(
    r: &mut IdentityReport,
    page: &str,
    got: &Got,
    token: Option<&str>,
) -> Option<crate::crawler_page::Facts> {
    let base = url::Url::parse(page).ok()?;
    let links: Vec<&str> = got.links.iter().map(String::as_str).collect();
    let token_text = token.unwrap_or("");
    let f = facts(&got.body, &base, &links, token_text);
    let mut problems = Vec::new();
    if got.status != 200 {
        problems.push(format!("answered {}, not 200", got.status));
    }
    let html = got
        .content_type
        .as_deref()
        .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
    if !html {
        problems.push(format!(
            "served as {:?}, not HTML",
            got.content_type.as_deref().unwrap_or("nothing")
        ));
    }
    match token {
        Some(t) if !f.names_token => problems.push(format!("does not name the token {t}")),
        Some(t) if !f.robots_example => problems.push(format!(
            "shows no robots.txt example to block it (User-agent: {t})"
        )),
        None => problems.push("no product token known to look for (give --token)".into()),
        _ => {}
    }
    if !f.contact {
        problems.push("names no contact".into());
    }
    r.add(
        "crawler page",
        format!("{page} ({} bytes)", got.body.len()),
        problems,
    );
    (got.status == 200).then_some(f)
}

/// The `client-ranges` link and the JAFAR file it points to.
async fn ranges_item(
    r: &mut IdentityReport,
    client: &reqwest::Client,
    link: Option<&str>,
    o: &CheckOptions,
) {
    let Some(url) = link else {
        r.add(
            "published ranges",
            "no client-ranges link".into(),
            vec!["the page links no IP ranges: add <link rel=\"client-ranges\" href=\"…\"> or a Link header".into()],
        );
        return;
    };
    let got = match get(client, url, o).await {
        Ok(g) => g,
        Err(e) => return r.not_checked("published ranges", format!("{url}: {e}")),
    };
    let mut problems = Vec::new();
    if got.status != 200 {
        problems.push(format!("{url} answered {}, not 200", got.status));
    }
    let checked = jafar::check(&got.body, got.content_type.as_deref(), UnixMillis::now());
    problems.extend(checked.problems);
    let found = match &checked.jafar {
        Some(j) => format!("{url}: {} prefixes", j.prefixes.len()),
        None => format!("{url}: not readable as JAFAR"),
    };
    r.add("published ranges", found, problems);
}

/// The key directory and card, where the page links them.
async fn signing_item(
    r: &mut IdentityReport,
    client: &reqwest::Client,
    (dir, card): (Option<&str>, Option<&str>),
    o: &CheckOptions,
) {
    if dir.is_none() && card.is_none() {
        r.add(
            "signed (Web Bot Auth)",
            "not linked from the page (optional)".into(),
            Vec::new(),
        );
        return;
    }
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for (what, url, key) in [
        ("key directory", dir, "keys"),
        ("Signature Agent Card", card, "client_id"),
    ] {
        let Some(url) = url else { continue };
        match get(client, url, o).await {
            Ok(g) if g.status == 200 => {
                let v: Option<serde_json::Value> = serde_json::from_str(&g.body).ok();
                match v.as_ref().and_then(|v| v.get(key)) {
                    Some(_) => found.push(format!("{what} {url}")),
                    None => problems.push(format!("{what} {url} is not JSON with \"{key}\"")),
                }
            }
            Ok(g) => problems.push(format!("{what} {url} answered {}", g.status)),
            Err(e) => return r.not_checked("signed (Web Bot Auth)", format!("{url}: {e}")),
        }
    }
    r.add("signed (Web Bot Auth)", found.join(", "), problems);
}

fn client(o: &CheckOptions) -> Result<reqwest::Client, String> {
    let mut b = reqwest::Client::builder()
        .timeout(o.timeout)
        .redirect(reqwest::redirect::Policy::limited(5))
        .https_only(!o.allow_http)
        .user_agent(concat!(
            "mannerly/",
            env!("CARGO_PKG_VERSION"),
            " (identity check)"
        ));
    match &o.proxy {
        Some(p) => {
            let proxy = reqwest::Proxy::all(p).map_err(|e| format!("--proxy {p}: {e}"))?;
            b = b.proxy(proxy);
        }
        None => {
            b = b
                .no_proxy()
                .dns_resolver(std::sync::Arc::new(mannerly_fetch::guard::PublicResolver))
        }
    }
    b.build().map_err(|e| e.to_string())
}

/// `url`'s answer: from the cache while it is under an hour old or fresh,
/// else fetched (and kept).
async fn get(client: &reqwest::Client, url: &str, o: &CheckOptions) -> Result<Got, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    match parsed.scheme() {
        "https" => {}
        "http" if o.allow_http => {}
        s => return Err(format!("{s}: https only (--allow-http for http)")),
    }
    if let Some(bad) = mannerly_fetch::guard::forbidden_literal(&parsed) {
        return Err(format!("{} is not a public address", bad.addr));
    }
    let now = UnixMillis::now();
    let path = o.cache.as_ref().map(|c| c.join(cache_name(url)));
    if let Some(kept) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        if let Ok(g) = serde_json::from_slice::<Got>(&kept) {
            if usable(&g, now) {
                return Ok(g);
            }
        }
    }
    let g = fetch(client, url, now).await?;
    if let (Some(path), Ok(json)) = (path, serde_json::to_vec(&g)) {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(path, json);
    }
    Ok(g)
}

/// Whether a kept answer stands: under an hour old, or fresh by its own
/// caching headers.
fn usable(g: &Got, now: UnixMillis) -> bool {
    let age = now.0.saturating_sub(g.fetched);
    let stored = Stored {
        cache_control: g.cache_control.as_deref(),
        expires: g.expires.as_deref(),
        date: g.date.as_deref(),
        age: None,
    };
    age < MIN_INTERVAL_MS
        || matches!(
            reuse(stored, UnixMillis(g.fetched), now),
            Reuse::Fresh { .. }
        )
}

async fn fetch(client: &reqwest::Client, url: &str, now: UnixMillis) -> Result<Got, String> {
    let mut resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| mannerly_fetch::http::chain(&e))?;
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let mut g = Got {
        fetched: now.0,
        status: resp.status().as_u16(),
        content_type: header("content-type"),
        links: resp
            .headers()
            .get_all("link")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect(),
        cache_control: header("cache-control"),
        expires: header("expires"),
        date: header("date"),
        body: String::new(),
    };
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| mannerly_fetch::http::chain(&e))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BYTES {
            return Err(format!("larger than {} KiB", MAX_BYTES / 1024));
        }
    }
    g.body = String::from_utf8_lossy(&body).into_owned();
    Ok(g)
}

/// The cache's file name for a URL: the range cache's name, bounded.
fn cache_name(url: &str) -> String {
    let name: String = crate::published::file_name(url).chars().take(180).collect();
    format!("{name}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_agent_names_its_page_and_token() {
        let (page, token) = page_of_user_agent(
            "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)",
        );
        assert_eq!(page.as_deref(), Some("https://example.com/bot"));
        assert_eq!(token.as_deref(), Some("ExampleBot"));
        assert_eq!(page_of_user_agent("curl/8.0").0, None);
    }

    #[test]
    fn a_kept_answer_stands_an_hour_or_while_fresh() {
        let g = Got {
            fetched: 1_000_000_000_000,
            status: 200,
            content_type: None,
            links: Vec::new(),
            cache_control: Some("max-age=86400".into()),
            expires: None,
            date: None,
            body: String::new(),
        };
        let at = |h: u64| UnixMillis(g.fetched + h * 3_600_000);
        assert!(usable(&g, at(0)) && usable(&g, at(23)));
        assert!(!usable(&g, at(25)));
        let plain = Got {
            cache_control: None,
            ..g
        };
        assert!(usable(&plain, UnixMillis(plain.fetched + 3_599_000)));
        assert!(!usable(&plain, UnixMillis(plain.fetched + 3_600_000)));
    }
}
