//! Python bindings: `mannerly.Robots`, the exact robots.txt engine of
//! `mannerly-robots` (Google's reference behaviour, or strict RFC 9309).
//!
//! Thin: every answer is the Rust crate's; this file only converts.
//! Parsing never raises on content (a robots.txt is whatever a server
//! sent); wrong argument types raise `TypeError` through PyO3's checks.

#![deny(missing_docs)]

mod options;
mod pace;

use std::sync::Arc;

use mannerly_robots::{
    as_requested, lint_with, Diagnostic, Mode, ParseOptions, Preference, Robots as Parsed,
    Verdict as RustVerdict,
};
use mannerly_sitemap::{Entry, LocationRule, Options, SitemapParser};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn word(p: Preference) -> &'static str {
    match p {
        Preference::Allowed => "y",
        Preference::Disallowed => "n",
        _ => "unknown",
    }
}

/// A product token must be text a crawler could send; an empty one is a
/// caller's mistake worth saying.
fn check_agent(agent: &str) -> PyResult<()> {
    if agent.trim().is_empty() {
        return Err(PyValueError::new_err(
            "agent is empty: pass a crawler's product token, such as 'Googlebot'",
        ));
    }
    Ok(())
}

/// Why a URL is allowed or not.
#[pyclass(module = "mannerly", frozen, get_all)]
struct Verdict {
    /// Whether the URL may be fetched.
    allowed: bool,
    /// 1-based line of the deciding rule, or None when no rule matched.
    line: Option<u32>,
    /// The deciding rule as written, such as 'Disallow: /private/'.
    rule: Option<String>,
    /// First lines of the groups that applied.
    groups: Vec<u32>,
    /// 'specific', 'global' or 'none': how the agent selected groups.
    agent_match: &'static str,
    /// The URL as a crawler requests it (percent-encoded, as a browser
    /// does), when that differs from the URL given: what was judged.
    requested: Option<String>,
}

#[pymethods]
impl Verdict {
    fn __repr__(&self) -> String {
        format!(
            "Verdict(allowed={}, line={}, rule={})",
            if self.allowed { "True" } else { "False" },
            self.line.map_or("None".into(), |l| l.to_string()),
            self.rule
                .as_deref()
                .map_or("None".into(), |r| format!("{r:?}"))
        )
    }

    fn __bool__(&self) -> bool {
        self.allowed
    }
}

impl Verdict {
    fn of(v: RustVerdict, asked: &str, judged: &str) -> Verdict {
        Verdict {
            requested: (asked != judged).then(|| judged.to_owned()),
            allowed: v.allowed,
            line: v.rule.as_ref().map(|r| r.line),
            rule: v.rule.as_ref().map(ToString::to_string),
            groups: v.groups,
            agent_match: v.agent_match.as_str(),
        }
    }
}

/// A parsed robots.txt file.
///
/// `Robots(body, rfc=False, max_bytes=None)` never raises on content: what
/// cannot be used is reported by `lint()`. Google's behaviour by default;
/// `rfc=True` reads the file as RFC 9309 says, strictly. A body over
/// `max_bytes` (500 KiB, and never less) is cut after its last whole line
/// within the limit, as RFC 9309 allows.
#[pyclass(module = "mannerly", frozen)]
struct Robots {
    parsed: Arc<Parsed>,
}

#[pymethods]
impl Robots {
    #[new]
    #[pyo3(signature = (body, rfc = false, max_bytes = None))]
    fn new(body: &[u8], rfc: bool, max_bytes: Option<usize>) -> Robots {
        let mut o = ParseOptions::strict(rfc);
        if let Some(m) = max_bytes {
            o.max_bytes = m;
        }
        Robots {
            parsed: Arc::new(Parsed::parse_with(body, o)),
        }
    }

    /// 'google' or 'rfc9309'.
    #[getter]
    fn mode(&self) -> &'static str {
        match self.parsed.mode() {
            Mode::Google => "google",
            Mode::Rfc9309 => "rfc9309",
        }
    }

    /// Whether the file was over 500 KiB and cut.
    #[getter]
    fn truncated(&self) -> bool {
        self.parsed.truncated()
    }

    /// Whether `agent` (a product token such as 'Googlebot') may fetch
    /// `url` (a full URL or a path).
    fn is_allowed(&self, agent: &str, url: &str) -> PyResult<bool> {
        check_agent(agent)?;
        Ok(self.parsed.is_allowed(agent, &as_requested(url)))
    }

    /// The verdict with its reason: the deciding line and rule, and the
    /// groups that applied.
    fn explain(&self, agent: &str, url: &str) -> PyResult<Verdict> {
        check_agent(agent)?;
        let judged = as_requested(url);
        Ok(Verdict::of(
            self.parsed.explain(agent, &judged),
            url,
            &judged,
        ))
    }

    /// The file as one crawler reads it, for checking many URLs.
    fn for_agent(&self, agent: &str) -> PyResult<AgentRules> {
        check_agent(agent)?;
        Ok(AgentRules {
            parsed: self.parsed.clone(),
            agent: agent.to_owned(),
        })
    }

    /// The agent's Crawl-delay in seconds, or None. Google ignores
    /// Crawl-delay; what to do with it is the crawler's choice.
    fn crawl_delay(&self, agent: &str) -> PyResult<Option<f64>> {
        check_agent(agent)?;
        Ok(self
            .parsed
            .crawl_delay(agent)
            .map(|d| d.delay.as_secs_f64()))
    }

    /// The agent's Request-rate as (requests, seconds), or None.
    fn request_rate(&self, agent: &str) -> PyResult<Option<(u32, f64)>> {
        check_agent(agent)?;
        Ok(self
            .parsed
            .request_rate(agent)
            .map(|r| (r.requests, r.period.as_secs_f64())))
    }

    /// The Sitemap URLs, in file order.
    fn sitemaps(&self) -> Vec<String> {
        self.parsed
            .sitemaps()
            .iter()
            .map(|s| s.url.clone())
            .collect()
    }

    /// AIPREF usage preferences for a URL (vocabulary -08): a dict with
    /// 'train_ai', 'ai_use' and 'search' ('y', 'n' or 'unknown') and the
    /// deciding 'lines'; None
    /// when the URL may not be crawled. `header` is the response's
    /// Content-Usage field lines, combined as the drafts say.
    #[pyo3(signature = (agent, url, header = None))]
    fn content_usage<'py>(
        &self,
        py: Python<'py>,
        agent: &str,
        url: &str,
        header: Option<Vec<String>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        check_agent(agent)?;
        let url = &*as_requested(url);
        let usage = match header {
            Some(lines) => self.parsed.content_usage_with_header(
                agent,
                url,
                lines.iter().map(|l| l.as_bytes()),
            ),
            None => self.parsed.content_usage(agent, url),
        };
        let Some(u) = usage else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("train_ai", word(u.train_ai))?;
        d.set_item("ai_use", word(u.ai_use))?;
        d.set_item("search", word(u.search))?;
        d.set_item("lines", u.lines)?;
        Ok(Some(d))
    }

    /// The linter's findings (see `mannerly.lint`).
    fn lint<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        // The parser's own findings; `mannerly.lint(body)` adds the
        // cross-line checks.
        self.parsed
            .diagnostics()
            .iter()
            .map(|d| finding(py, d))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Robots(mode={:?}, groups={}, rules={})",
            self.mode(),
            self.parsed.groups().len(),
            self.parsed.rules().len()
        )
    }
}

fn finding<'py>(py: Python<'py>, d: &Diagnostic) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("line", d.line)?;
    out.set_item("column", d.column)?;
    out.set_item("severity", d.severity.to_string())?;
    out.set_item("code", d.code)?;
    out.set_item("message", &d.message)?;
    out.set_item("suggestion", d.suggestion.as_deref())?;
    Ok(out)
}

/// One crawler's view of a file (from `Robots.for_agent`).
#[pyclass(module = "mannerly", frozen)]
struct AgentRules {
    parsed: Arc<Parsed>,
    agent: String,
}

#[pymethods]
impl AgentRules {
    /// The agent this view is for.
    #[getter]
    fn agent(&self) -> &str {
        &self.agent
    }

    /// Whether this agent may fetch `url`.
    fn is_allowed(&self, url: &str) -> bool {
        self.parsed
            .for_agent(&self.agent)
            .is_allowed(&as_requested(url))
    }

    /// Verdicts for many URLs at once (the rules are indexed once).
    fn allowed_many(&self, urls: Vec<String>) -> Vec<bool> {
        let view = self.parsed.for_agent(&self.agent);
        urls.iter()
            .map(|u| view.is_allowed(&as_requested(u)))
            .collect()
    }

    /// The verdict with its reason.
    fn explain(&self, url: &str) -> Verdict {
        let judged = as_requested(url);
        Verdict::of(
            self.parsed.for_agent(&self.agent).explain(&judged),
            url,
            &judged,
        )
    }
}

/// The URL as a crawler requests it: in its path and query, what a browser
/// percent-encodes (non-ASCII characters as UTF-8, controls, space, `"`,
/// `<`, `>`, `` ` ``, `{`, `}`, and `'` in the query) becomes `%XX`; nothing
/// else changes. Every method that judges a URL judges this form.
#[pyfunction(name = "as_requested")]
fn as_requested_py(url: &str) -> String {
    as_requested(url).into_owned()
}

/// The product token a User-Agent names (`MyBot` in `Mozilla/5.0
/// (compatible; MyBot/1.0; +https://...)`), as the crawler, the audit and
/// the gate read it; `None` when it names none.
#[pyfunction]
fn product_token(user_agent: &str) -> Option<String> {
    mannerly_robots::product_token(user_agent)
}

/// Lints a robots.txt body: every finding with its line, column,
/// severity, stable code, message and suggested fix.
#[pyfunction]
#[pyo3(signature = (body, rfc = false))]
fn lint<'py>(py: Python<'py>, body: &[u8], rfc: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
    lint_with(body, ParseOptions::strict(rfc))
        .iter()
        .map(|d| finding(py, d))
        .collect()
}

/// The entries of one sitemap (from `parse_sitemap`), read as they are
/// iterated, with the same limits as the Rust parser (50,000 entries, 50
/// MiB decoded, 2,048-character locations, two gzip layers).
#[pyclass(module = "mannerly", unsendable)]
struct SitemapEntries {
    parser: Option<SitemapParser>,
    summary: Option<mannerly_sitemap::Summary>,
}

#[pymethods]
impl SitemapEntries {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(parser) = self.parser.as_mut() else {
            return Ok(None);
        };
        let Some(entry) = parser.next() else {
            if let Some(p) = self.parser.take() {
                self.summary = Some(p.finish());
            }
            return Ok(None);
        };
        let d = PyDict::new(py);
        match entry {
            Entry::Url(u) => {
                d.set_item("kind", "url")?;
                d.set_item("loc", u.loc)?;
                d.set_item("lastmod", u.lastmod.map(|l| l.raw))?;
                d.set_item(
                    "changefreq",
                    u.changefreq.map(|c| format!("{c:?}").to_lowercase()),
                )?;
                d.set_item("priority", u.priority)?;
            }
            Entry::Sitemap(s) => {
                d.set_item("kind", "sitemap")?;
                d.set_item("loc", s.loc)?;
                d.set_item("lastmod", s.lastmod.map(|l| l.raw))?;
            }
        }
        Ok(Some(d))
    }

    /// What the parse saw, once iteration has ended (None before): kind,
    /// entries, what was dropped and why, whether it stopped or was cut.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(s) = &self.summary else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item(
            "kind",
            s.kind.map(|k| {
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
            }),
        )?;
        d.set_item("entries", s.entries)?;
        d.set_item("dropped", s.dropped.clone())?;
        d.set_item("stopped", s.stop.as_ref().map(|x| format!("{x:?}")))?;
        d.set_item("truncated", s.truncated)?;
        d.set_item("error", s.error.clone())?;
        d.set_item("description", s.describe())?;
        Ok(Some(d))
    }
}

/// Parses one sitemap (XML, gzip or plain text) fetched from `base_url`:
/// an iterator of dicts with 'kind' ('url' or 'sitemap'), 'loc',
/// 'lastmod' and, for pages, 'changefreq' and 'priority'. Entries outside
/// the sitemap's location (RFC sitemaps protocol) are dropped and counted
/// in `summary`.
#[pyfunction]
fn parse_sitemap(data: &[u8], base_url: &str) -> PyResult<SitemapEntries> {
    let url = url::Url::parse(base_url)
        .map_err(|e| PyValueError::new_err(format!("base_url {base_url:?} is not a URL: {e}")))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(PyValueError::new_err(format!(
            "base_url {base_url:?} is not an http(s) URL"
        )));
    }
    Ok(SitemapEntries {
        parser: Some(SitemapParser::from_bytes(
            data,
            Options::default(),
            Some(LocationRule::new(&url)),
        )),
        summary: None,
    })
}

/// Now, or `now` seconds since the epoch, as the crate's instant type.
fn instant(now: Option<f64>) -> PyResult<mannerly_botauth::UnixMillis> {
    match now {
        None => Ok(mannerly_botauth::UnixMillis::now()),
        Some(t) if t.is_finite() && t >= 0.0 => {
            Ok(mannerly_botauth::UnixMillis((t * 1000.0) as u64))
        }
        Some(t) => Err(PyValueError::new_err(format!(
            "now={t} is not a time: pass seconds since 1970 (time.time())"
        ))),
    }
}

fn message(method: &str, url: &str, headers: Vec<(String, String)>) -> mannerly_botauth::Message {
    let mut m = mannerly_botauth::Message::new(method, url);
    m.headers = headers;
    m
}

/// A new Ed25519 key as PKCS#8 PEM (what `mannerly keys generate` writes).
#[pyfunction]
fn generate_key() -> PyResult<String> {
    mannerly_botauth::KeyPair::generate()
        .to_pkcs8_pem()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The public JWK of a PKCS#8 PEM private key, as JSON text (publish it
/// in your key directory).
#[pyfunction]
fn public_jwk(key: &str) -> PyResult<String> {
    let pair = mannerly_botauth::KeyPair::from_pkcs8_pem(key)
        .map_err(|e| PyValueError::new_err(format!("key: {e}")))?;
    serde_json::to_string(&pair.public_jwk()).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Signs a request for Web Bot Auth (RFC 9421, Ed25519): the headers to
/// add, as (name, value) pairs. `agent` is your key directory's URL (the
/// JWK Set verifiers fetch as it is, sent as `Signature-Agent`); `components` adds covered components such as
/// '@method' or '@path' to '@authority' and the agent.
#[pyfunction]
#[pyo3(signature = (method, url, headers, key, agent, components = None, now = None))]
fn sign_request(
    method: &str,
    url: &str,
    headers: Vec<(String, String)>,
    key: &str,
    agent: &str,
    components: Option<Vec<String>>,
    now: Option<f64>,
) -> PyResult<Vec<(String, String)>> {
    let pair = mannerly_botauth::KeyPair::from_pkcs8_pem(key)
        .map_err(|e| PyValueError::new_err(format!("key: {e}")))?;
    let mut config = mannerly_botauth::SignConfig::new(
        instant(now)?,
        mannerly_botauth::AgentForm::dictionary(agent),
    );
    config.extra_components = components.unwrap_or_default();
    mannerly_botauth::sign_request(&pair, &message(method, url, headers), &config)
        .map_err(|e| PyValueError::new_err(format!("cannot sign: {e}")))
}

/// Verifies a request's Web Bot Auth signatures against `keys_json` (a
/// JWKS document, `{"keys": [...]}`): a dict with 'result' ('verified',
/// 'invalid', 'unverified' or 'unsigned'), and 'reason', or the verified 'keyid',
/// 'thumbprint', 'agent' and 'label'. Every check of the Rust verifier
/// runs (timestamps, tag, covered authority, the RFC 9421 test key).
#[pyfunction]
#[pyo3(signature = (method, url, headers, keys_json, now = None, **options))]
fn _verify_request<'py>(
    py: Python<'py>,
    method: &str,
    url: &str,
    headers: Vec<(String, String)>,
    keys_json: &str,
    now: Option<f64>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let known = [
        "web_bot_auth",
        "max_validity",
        "allow_test_keys",
        "keys_from",
        "allow_http",
    ];
    let o = options::Options::new("_verify_request", options, &known)?;
    let web_bot_auth: bool = o.get("web_bot_auth", true)?;
    let max_validity: i64 = o.get("max_validity", 86_400)?;
    let allow_test_keys: bool = o.get("allow_test_keys", false)?;
    let keys_from: Option<String> = o.get("keys_from", None)?;
    let allow_http: bool = o.get("allow_http", false)?;
    #[derive(serde::Deserialize)]
    struct Jwks {
        keys: Vec<mannerly_botauth::Jwk>,
    }
    let jwks: Jwks = serde_json::from_str(keys_json)
        .map_err(|e| PyValueError::new_err(format!("keys are not a JWKS document: {e}")))?;
    let keys = match &keys_from {
        Some(url) => mannerly_botauth::StaticKeys::from_directory(url, jwks.keys),
        None => mannerly_botauth::StaticKeys::new(jwks.keys),
    };
    if max_validity <= 0 {
        return Err(PyValueError::new_err(format!(
            "max_validity={max_validity} must be a number of seconds above 0"
        )));
    }
    let mut config = mannerly_botauth::VerifyConfig::at(instant(now)?);
    config.web_bot_auth = web_bot_auth;
    config.max_validity = max_validity;
    config.reject_test_keys = !allow_test_keys;
    config.allow_http = allow_http;
    let out = PyDict::new(py);
    match mannerly_botauth::verify_request(&message(method, url, headers), &keys, &config) {
        mannerly_botauth::Outcome::Verified {
            agent,
            keyid,
            thumbprint,
            label,
        } => {
            out.set_item("result", "verified")?;
            out.set_item("agent", agent)?;
            out.set_item("keyid", keyid)?;
            out.set_item("thumbprint", thumbprint)?;
            out.set_item("label", label)?;
        }
        mannerly_botauth::Outcome::Invalid { reason } => {
            out.set_item("result", "invalid")?;
            out.set_item("reason", reason.to_string())?;
        }
        mannerly_botauth::Outcome::Unverified { reason } => {
            out.set_item("result", "unverified")?;
            out.set_item("reason", reason.to_string())?;
        }
        _ => {
            out.set_item("result", "unsigned")?;
        }
    }
    Ok(out)
}

#[pymodule]
fn _mannerly(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate_key, m)?)?;
    m.add_function(wrap_pyfunction!(public_jwk, m)?)?;
    m.add_function(wrap_pyfunction!(sign_request, m)?)?;
    m.add_function(wrap_pyfunction!(_verify_request, m)?)?;
    m.add_class::<SitemapEntries>()?;
    m.add_function(wrap_pyfunction!(parse_sitemap, m)?)?;
    m.add_class::<Robots>()?;
    m.add_class::<AgentRules>()?;
    m.add_class::<Verdict>()?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(as_requested_py, m)?)?;
    m.add_function(wrap_pyfunction!(product_token, m)?)?;
    pace::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
