//! Fetching one page: the HTTP client the crawl builds, the GET (signed
//! with Web Bot Auth when asked), the body read up to its cap, and the
//! request and response heads a WARC record stores.

use mannerly_polite::controller::Outcome;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mannerly_polite::frontier::Released;
use mannerly_time::UnixMillis;

use crate::config::CrawlConfig;
use crate::error::CrawlError;
use crate::metrics::CrawlMetrics;
use crate::tag::Tag;
use crate::warc::push_header;

/// What one page fetch gave.
pub(crate) struct PageDone {
    pub(crate) released: Released,
    /// Its URL, parsed once when it was admitted.
    pub(crate) url: url::Url,
    pub(crate) date: UnixMillis,
    pub(crate) latency: u64,
    /// When the response head arrived (or the fetch failed): the latest the
    /// request can have reached the server.
    pub(crate) head_at: Instant,
    /// The robots.txt Content-Usage rule for the URL (AIPREF), as text.
    pub(crate) content_usage_rule: Option<String>,
    /// Its evidence record, as written, for the WARC.
    pub(crate) evidence: Option<Vec<u8>>,
    pub(crate) outcome: PageOutcome,
}

/// How one page fetch ended.
pub(crate) enum PageOutcome {
    /// A response head arrived (its body read up to the cap).
    Answered(PageResponse),
    /// Sent, and no response came, or its body failed before a byte.
    Failed(String),
    /// Sent, and the timeout fired.
    TimedOut(String),
    /// Sent, and timed out seconds past the longest deadline a page has
    /// ([`mannerly_fetch::http::stalled`]): this process was not running
    /// when it passed, so the host is not to blame.
    Stalled(String),
    /// Not sent: the request could not be built or signed.
    NotBuilt(String),
    /// Not sent: the moment the frontier gave for sending it had passed
    /// (this worker was stopped or starved between `confirm` and the send).
    Unsent,
}

impl PageOutcome {
    /// Whether a request left for the server.
    pub(crate) fn sent(&self) -> bool {
        !matches!(self, PageOutcome::NotBuilt(_) | PageOutcome::Unsent)
    }

    /// A failure's text, for the log (`None` when answered or unsent).
    pub(crate) fn error(&self) -> Option<&str> {
        match self {
            PageOutcome::Failed(e)
            | PageOutcome::TimedOut(e)
            | PageOutcome::Stalled(e)
            | PageOutcome::NotBuilt(e) => Some(e),
            PageOutcome::Answered(_) | PageOutcome::Unsent => None,
        }
    }
}

impl PageDone {
    /// Counts a page or sitemap request in the crawl's metrics, when it
    /// was sent (a request never built or never sent is not counted).
    pub(crate) fn count(&self, metrics: Option<&CrawlMetrics>) {
        let Some(m) = metrics.filter(|_| self.outcome.sent()) else {
            return;
        };
        let kind = match Tag::unpack(self.released.tag).sitemap {
            true => mannerly_evidence::Kind::Sitemap,
            false => mannerly_evidence::Kind::Page,
        };
        let (status, retry_after, body) = match &self.outcome {
            PageOutcome::Answered(r) => (
                Some(r.status),
                r.headers.iter().any(|(k, _)| k == "retry-after"),
                r.body.len() as u64,
            ),
            _ => (None, false, 0),
        };
        m.request(
            kind,
            status,
            Duration::from_millis(self.latency),
            retry_after,
        );
        m.body(body);
    }
}

/// A page's response, as much of it as the crawl keeps.
pub(crate) struct PageResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) truncated: bool,
    pub(crate) ip: Option<std::net::IpAddr>,
    /// The media type, when `content_types` does not want it (the body
    /// was not read).
    pub(crate) unwanted: Option<String>,
    /// The request's own header fields as they went (validators, the
    /// signature): what its WARC `request` record holds.
    pub(crate) sent: Vec<(String, String)>,
}

impl PageResponse {
    /// The first value of a header, by name in any case.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The client every request of a crawl goes through (robots.txt too, so a
/// host's first page reuses its robots.txt connection). Sockets are
/// bounded: a connection is kept (one per host) only while the host's next
/// request may come; a crawl of many thousand hosts otherwise holds a
/// socket per host it has seen, and runs out of file descriptors. Bodies
/// are kept as sent, for the WARC (`mannerly-fetch` decodes a compressed
/// robots.txt itself).
pub(crate) fn http_client(config: &CrawlConfig) -> Result<reqwest::Client, CrawlError> {
    let agent = &config.user_agent;
    if mannerly_robots::unsendable_char(agent).is_some() {
        let agent = agent.clone();
        return Err(CrawlError::UserAgent { agent });
    }
    let keep_alive = (config.min_delay + Duration::from_millis(200)).min(Duration::from_secs(90));
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .user_agent(&config.user_agent)
        .timeout(config.timeout)
        .connect_timeout(config.connect_timeout)
        .pool_max_idle_per_host(1)
        .pool_idle_timeout(keep_alive)
        // reqwest re-sends a request the server refused at the HTTP/2 layer
        // (REFUSED_STREAM, GOAWAY) up to twice, unseen by the host's pacing,
        // the WARC and the evidence. Every request the crawler sends is one
        // its politeness released: a refusal is an error, retried on pace.
        .retry(reqwest::retry::never());
    if let Some(p) = &config.proxy {
        let proxy = reqwest::Proxy::all(p).map_err(|source| CrawlError::Proxy {
            proxy: p.clone(),
            source,
        })?;
        b = b.proxy(proxy);
    }
    if let Some(hook) = &config.client_hook {
        b = hook(b);
    }
    b.build().map_err(CrawlError::Client)
}

/// Fetches a released page. `send_by`: the moment after which its lease
/// may be another worker's, so it is not sent.
pub(crate) async fn fetch_page(
    client: reqwest::Client,
    released: Released,
    url: url::Url,
    config: Arc<CrawlConfig>,
    send_by: Option<Instant>,
) -> PageDone {
    let start = Instant::now();
    let date = UnixMillis::now();
    let done = |outcome, head_at: Option<Instant>| PageDone {
        content_usage_rule: None,
        evidence: None,
        head_at: head_at.unwrap_or_else(Instant::now),
        latency: start.elapsed().as_millis() as u64,
        released: released.clone(),
        url: url.clone(),
        date,
        outcome,
    };
    let failed = |error: String, timed_out: bool| match timed_out {
        false => PageOutcome::Failed(error),
        true if mannerly_fetch::http::stalled(start.elapsed(), config.timeout) => {
            PageOutcome::Stalled(error)
        }
        true => PageOutcome::TimedOut(error),
    };
    let request = match build_request(&client, &url, &config) {
        Ok(r) => r,
        Err(e) => return done(PageOutcome::NotBuilt(e), None),
    };
    let sent = mannerly_fetch::http::header_pairs(request.headers());
    if send_by.is_some_and(|t| Instant::now() > t) {
        return done(PageOutcome::Unsent, None);
    }
    let send = client.execute(request);
    let resp = match tokio::time::timeout(config.first_byte_timeout, send).await {
        Err(_) => {
            let why = "no response head within the first-byte timeout";
            return done(failed(why.into(), true), None);
        }
        Ok(Err(e)) => return done(failed(e.to_string(), e.is_timeout()), None),
        Ok(Ok(r)) => r,
    };
    let head_at = Some(Instant::now());
    match read_response(resp, &config, Tag::unpack(released.tag)).await {
        Ok(page) => done(
            PageOutcome::Answered(PageResponse { sent, ..page }),
            head_at,
        ),
        Err((error, timed_out)) => done(failed(error, timed_out), head_at),
    }
}

/// The GET, signed when the crawl signs.
fn build_request(
    client: &reqwest::Client,
    url: &url::Url,
    config: &CrawlConfig,
) -> Result<reqwest::Request, String> {
    let mut builder = client.get(url.clone());
    if let Some(prior) = config.prior.as_deref().and_then(|p| p.get(url.as_str())) {
        for (k, v) in crate::revisit::conditional(prior) {
            builder = builder.header(k, v);
        }
    }
    let mut request = builder.build().map_err(|e| e.to_string())?;
    if let Some((key, agent)) = &config.signing {
        let signer = Signer {
            key: key.clone(),
            agent: agent.clone(),
        };
        mannerly_fetch::RequestSigner::sign(&signer, &mut request).map_err(|e| e.0)?;
    }
    Ok(request)
}

/// The crawl's Web Bot Auth key and Signature-Agent, signing a request
/// as it goes: pages here, robots.txt and its hops in `fetch`.
pub(crate) struct Signer {
    pub(crate) key: mannerly_botauth::KeyPair,
    pub(crate) agent: String,
}

impl mannerly_fetch::RequestSigner for Signer {
    fn sign(&self, request: &mut reqwest::Request) -> Result<(), mannerly_fetch::NotSent> {
        let sign = mannerly_botauth::SignConfig::new(
            UnixMillis::now(),
            mannerly_botauth::AgentForm::dictionary(&self.agent),
        );
        mannerly_botauth::sign_reqwest(&self.key, request, &sign)
            .map_err(|e| mannerly_fetch::NotSent(format!("cannot sign the request: {e}")))
    }
}

/// Reads a response whose head has arrived: its body up to the cap (a
/// body the server cut is kept and marked cut), or only its head when
/// `--content-types` does not want its media type. An error comes with
/// whether it was a timeout.
async fn read_response(
    mut resp: reqwest::Response,
    config: &CrawlConfig,
    tag: Tag,
) -> Result<PageResponse, (String, bool)> {
    let status = resp.status().as_u16();
    let ip = resp.remote_addr().map(|a| a.ip());
    let headers = mannerly_fetch::http::header_pairs(resp.headers());
    let media = media_type(
        headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.as_str()),
    );
    let mut page = PageResponse {
        status,
        headers,
        body: Vec::new(),
        truncated: false,
        ip,
        unwanted: None,
        sent: Vec::new(),
    };
    if (200..300).contains(&status)
        && !tag.sitemap
        && !content_type_wanted(&config.content_types, &media)
    {
        // Not downloaded past the head: the connection is dropped.
        page.unwanted = Some(media);
        return Ok(page);
    }
    loop {
        match resp.chunk().await {
            Ok(Some(c)) => {
                let room = config.max_bytes.saturating_sub(page.body.len());
                if c.len() > room {
                    page.body.extend_from_slice(&c[..room]);
                    page.truncated = true;
                    break;
                }
                page.body.extend_from_slice(&c);
            }
            Ok(None) => break,
            Err(e) if page.body.is_empty() => return Err((format!("body: {e}"), e.is_timeout())),
            Err(_) => {
                // A body cut by the server (reset, short): kept, marked cut.
                page.truncated = true;
                break;
            }
        }
    }
    Ok(page)
}

/// The media type of a `Content-Type` value, lower-cased, without
/// parameters; `application/octet-stream` when there is none (RFC 9110
/// §8.3).
fn media_type(header: Option<&str>) -> String {
    let t = header
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    if t.is_empty() {
        "application/octet-stream".into()
    } else {
        t.to_ascii_lowercase()
    }
}

/// Whether `--content-types` keeps a media type: an empty list keeps all;
/// `type/*` keeps a whole type.
fn content_type_wanted(wanted: &[String], media: &str) -> bool {
    wanted.is_empty()
        || wanted.iter().any(|w| {
            let w = w.trim().to_ascii_lowercase();
            match w.strip_suffix("/*") {
                Some(top) => media.split('/').next() == Some(top),
                None => w == media,
            }
        })
}

/// The request head a WARC `request` record stores for a GET of `url`:
/// the client's own fields, and `extra`, the request's own as they went
/// (a recrawl's validators, a signature).
pub(crate) fn request_head(url: &str, user_agent: &str, extra: &[(String, String)]) -> String {
    match url::Url::parse(url) {
        Ok(u) => request_head_of(&u, user_agent, extra),
        Err(_) => head_of("", url, user_agent, extra),
    }
}

/// [`request_head`] of a parsed URL.
pub(crate) fn request_head_of(
    url: &url::Url,
    user_agent: &str,
    extra: &[(String, String)],
) -> String {
    let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    head_of(host, target, user_agent, extra)
}

fn head_of(host: &str, target: &str, user_agent: &str, extra: &[(String, String)]) -> String {
    let size: usize = extra.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
    let mut head = String::with_capacity(64 + target.len() + host.len() + user_agent.len() + size);
    head.push_str("GET ");
    head.push_str(target);
    head.push_str(" HTTP/1.1\r\n");
    push_header(&mut head, "Host", host);
    push_header(&mut head, "User-Agent", user_agent);
    head.push_str("Accept: */*\r\n");
    for (k, v) in extra {
        push_header(&mut head, k, v);
    }
    head.push_str("\r\n");
    head
}

/// The response head a WARC `response` record stores: the status line and
/// the headers, less those `skip` names (lower-case), and `extra` lines
/// (each ending in CRLF) before the blank line.
pub(crate) fn response_head(
    status: u16,
    headers: &[(String, String)],
    skip: &[&str],
    extra: &str,
) -> String {
    let size: usize = headers.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
    let mut head = String::with_capacity(32 + size + extra.len());
    // Writing to a String cannot fail.
    let _ = write!(head, "HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in headers {
        if !skip.iter().any(|s| k.eq_ignore_ascii_case(s)) {
            push_header(&mut head, k, v);
        }
    }
    head.push_str(extra);
    head.push_str("\r\n");
    head
}

fn reason(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

pub(crate) fn status_outcome(
    resp: &PageResponse,
    latency: u64,
    retry_after: Option<String>,
) -> Outcome {
    Outcome::Status {
        status: resp.status,
        latency,
        retry_after,
    }
}

/// The outcome as the frontier paces by it: `latency` becomes the time
/// since `since`, so the frontier takes the request as sent then (a
/// response head's arrival is the latest moment a request can have
/// reached the server, so the host's delay counts from there at the
/// earliest, whatever connection set-up or queueing came before). The
/// clock is read at the same moment, and the outcome must be reported with
/// that time: a `now` read earlier (before a round trip to a networked
/// frontier, say) would put the request earlier than it was, and the
/// host's next request too soon.
pub(crate) fn paced(outcome: &Outcome, since: Instant) -> (Outcome, UnixMillis) {
    let now = UnixMillis::now();
    let latency = since.elapsed().as_millis() as u64;
    let outcome = match outcome {
        Outcome::Status {
            status,
            retry_after,
            ..
        } => Outcome::Status {
            status: *status,
            latency,
            retry_after: retry_after.clone(),
        },
        Outcome::Failed { .. } => Outcome::Failed { latency },
        Outcome::Stalled { .. } => Outcome::Stalled { latency },
    };
    (outcome, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_read_and_matched_as_ranges() {
        assert_eq!(media_type(Some("Text/HTML; charset=utf-8")), "text/html");
        assert_eq!(media_type(None), "application/octet-stream");
        assert_eq!(media_type(Some(" ; x=1")), "application/octet-stream");
        let wanted = vec!["text/html".to_owned(), "image/*".to_owned()];
        assert!(content_type_wanted(&wanted, "text/html"));
        assert!(content_type_wanted(&wanted, "image/png"));
        assert!(!content_type_wanted(&wanted, "text/plain"));
        assert!(!content_type_wanted(&wanted, "imagex/png"));
        assert!(content_type_wanted(&[], "anything/at-all"));
    }

    #[test]
    fn a_response_head_drops_what_it_is_told_to() {
        let headers = vec![
            ("content-type".to_owned(), "text/html".to_owned()),
            ("Transfer-Encoding".to_owned(), "chunked".to_owned()),
        ];
        let head = response_head(200, &headers, &["transfer-encoding"], "x: 1\r\n");
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nx: 1\r\n\r\n"
        );
    }

    /// The crawler's client sends each request its politeness released
    /// once: a stream the server refuses at the HTTP/2 layer comes back as
    /// an error, not as a quiet second request.
    #[tokio::test]
    async fn a_refused_http2_stream_is_not_sent_again() {
        let server = mannerly_testweb::RefusingH2::start()
            .await
            .expect("refusing server");
        let config = CrawlConfig {
            client_hook: Some(Arc::new(|b: reqwest::ClientBuilder| {
                b.http2_prior_knowledge()
            })),
            ..CrawlConfig::default()
        };
        let client = http_client(&config).expect("client");
        let sent = client.get(server.url("/a")).send().await;
        assert!(sent.is_err(), "a refused stream is an error");
        assert_eq!(server.streams(), 1, "sent once, not re-sent");
    }

    #[test]
    fn a_user_agent_no_header_can_hold_is_refused_by_name() {
        let config = CrawlConfig {
            user_agent: "ExampleBot/1.0 (+https://example.com/bot)\nX-Evil: 1".into(),
            ..CrawlConfig::default()
        };
        let said = http_client(&config).err().map(|e| e.to_string());
        let said = said.unwrap_or_default();
        assert!(said.contains("\\nX-Evil"), "{said}");
        assert!(said.contains("control character"), "{said}");
    }
}
