//! Fetching key directories for verification, and verifying with them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::base::Message;
use crate::directory::Jwks;
use crate::verify::{
    summarise, verify_each, KeyLookup, Outcome, ReadyKey, Rejection, StaticKeys, Verdict,
    VerifyConfig,
};
pub use crate::DirectoryError;
use crate::DirectoryProblem;
use crate::Jwk;

/// Limits for fetching directories.
#[derive(Debug, Clone)]
pub struct DirectoryConfig {
    /// Largest directory body (64 KiB).
    pub max_bytes: usize,
    /// Most keys in one directory (32).
    pub max_keys: usize,
    /// Whole-request timeout (5 s).
    pub timeout: Duration,
    /// Longest time keys are cached (24 h); `max-age` may shorten it.
    pub max_ttl: Duration,
    /// Allow loopback and private addresses (tests only).
    pub allow_private: bool,
    /// Directories (and failures) remembered at once (10,000); past that
    /// the entry that goes stale first is dropped.
    pub max_cached: usize,
    /// How long a failed fetch is remembered, so requests naming a broken
    /// or hostile directory do not each cost an outbound fetch (60 s).
    pub failure_ttl: Duration,
}

impl Default for DirectoryConfig {
    fn default() -> Self {
        DirectoryConfig {
            max_bytes: 64 * 1024,
            max_keys: 32,
            timeout: Duration::from_secs(5),
            max_ttl: Duration::from_secs(24 * 3600),
            allow_private: false,
            max_cached: 10_000,
            failure_ttl: Duration::from_secs(60),
        }
    }
}

struct Cached {
    /// The keys, or the last fetch's failure (remembered briefly).
    keys: Result<StaticKeys, DirectoryProblem>,
    fresh_until: Instant,
}

/// Fetches and caches key directories (https only, no redirects, bounded).
pub struct DirectoryClient {
    client: reqwest::Client,
    config: DirectoryConfig,
    cache: Mutex<HashMap<String, Cached>>,
}

use mannerly_fetch::guard::is_forbidden as is_private;

impl DirectoryClient {
    /// A client with its own reqwest client (redirects off).
    pub fn new(config: DirectoryConfig) -> Result<Self, DirectoryError> {
        let client = Self::client_builder(&config)
            .build()
            .map_err(|e| DirectoryError {
                url: String::new(),
                problem: DirectoryProblem::Client(e.into()),
            })?;
        Ok(Self::with_client(client, config))
    }

    /// The settings the client relies on; add roots or a resolver for
    /// tests. Unless `allow_private`, names resolve through a resolver that
    /// refuses private and reserved addresses, so the address checked is
    /// the address connected to.
    pub fn client_builder(config: &DirectoryConfig) -> reqwest::ClientBuilder {
        let b = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .https_only(true);
        if config.allow_private {
            b
        } else {
            // The connecting resolver checks what it returns, so a name that
            // passed the pre-check cannot rebind to a private address.
            b.dns_resolver(std::sync::Arc::new(mannerly_fetch::guard::PublicResolver))
        }
    }

    /// A client over a reqwest client you built (start from [`Self::client_builder`], which turns redirects off).
    pub fn with_client(client: reqwest::Client, config: DirectoryConfig) -> Self {
        DirectoryClient {
            client,
            config,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The URL to fetch for a `Signature-Agent` member: the value as it
    /// is (the editor's copy, §5.5: a JWK Set URL, no path guessed), https
    /// only.
    pub fn directory_url(agent: &str) -> Result<url::Url, DirectoryProblem> {
        let u = url::Url::parse(agent).map_err(|e| DirectoryProblem::NotAUrl(e.to_string()))?;
        if u.scheme() != "https" {
            return Err(DirectoryProblem::NotHttps);
        }
        Ok(u)
    }

    /// The keys of the directory named by `agent`, fetched or cached. A
    /// failed refresh keeps serving the keys it had.
    pub async fn keys(&self, agent: &str) -> Result<Vec<Jwk>, DirectoryError> {
        Ok(self.key_set(agent).await?.jwks().cloned().collect())
    }

    /// The directory's keys, ready to verify with: decoded and thumbprinted
    /// when fetched, not per request.
    async fn key_set(&self, agent: &str) -> Result<StaticKeys, DirectoryError> {
        let err = |problem| DirectoryError {
            url: agent.to_owned(),
            problem,
        };
        let url = Self::directory_url(agent).map_err(err)?;
        let key = url.to_string();
        if let Some(c) = self.lock().get(&key) {
            if Instant::now() < c.fresh_until {
                return c
                    .keys
                    .clone()
                    .map_err(|problem| DirectoryError { url: key, problem });
            }
        }
        match self.fetch(&url).await {
            Ok((keys, ttl)) => {
                let keys = StaticKeys::from_directory(url.as_str(), keys);
                self.remember(key, Ok(keys.clone()), ttl);
                Ok(keys)
            }
            Err(problem) => {
                // A failed refresh keeps serving the keys it had; a
                // failure with nothing to fall back on is remembered
                // briefly.
                let stale = match self.lock().get(&key) {
                    Some(Cached { keys: Ok(k), .. }) => Some(k.clone()),
                    _ => None,
                };
                match stale {
                    Some(keys) => Ok(keys),
                    None => {
                        self.remember(key.clone(), Err(problem.clone()), self.config.failure_ttl);
                        Err(DirectoryError { url: key, problem })
                    }
                }
            }
        }
    }

    /// Keeps an answer, dropping the entry that goes stale first when the
    /// cache is full.
    fn remember(&self, key: String, keys: Result<StaticKeys, DirectoryProblem>, ttl: Duration) {
        let mut cache = self.lock();
        if !cache.contains_key(&key) && cache.len() >= self.config.max_cached.max(1) {
            if let Some(oldest) = cache
                .iter()
                .min_by_key(|(_, c)| c.fresh_until)
                .map(|(k, _)| k.clone())
            {
                cache.remove(&oldest);
            }
        }
        cache.insert(
            key,
            Cached {
                keys,
                fresh_until: Instant::now() + ttl,
            },
        );
    }

    /// Directories (and remembered failures) held.
    pub fn cached(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Cached>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn fetch(&self, url: &url::Url) -> Result<(Vec<Jwk>, Duration), DirectoryProblem> {
        let host = url.host_str().ok_or(DirectoryProblem::NoHost)?;
        let port = url.port_or_known_default().unwrap_or(443);
        if !self.config.allow_private {
            // An IP literal (IPv6 in brackets in `host_str`) is checked as
            // itself; a name is checked here for a clear error, and again by
            // the resolver the connection uses.
            let literal = match url.host() {
                Some(url::Host::Ipv4(a)) => Some(IpAddr::V4(a)),
                Some(url::Host::Ipv6(a)) => Some(IpAddr::V6(a)),
                _ => None,
            };
            let addrs: Vec<IpAddr> = match literal {
                Some(ip) => vec![ip],
                None => tokio::net::lookup_host((host, port))
                    .await
                    .map_err(|e| DirectoryProblem::Resolve {
                        host: host.to_owned(),
                        detail: e.to_string(),
                    })?
                    .map(|a| a.ip())
                    .collect(),
            };
            if let Some(bad) = addrs.iter().find(|ip| is_private(**ip)) {
                return Err(DirectoryProblem::PrivateAddress {
                    host: host.to_owned(),
                    addr: *bad,
                });
            }
        }
        let mut resp = self
            .client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| DirectoryProblem::Fetch(e.into()))?;
        let status = resp.status().as_u16();
        if (300..400).contains(&status) {
            return Err(DirectoryProblem::Redirect(status));
        }
        if status != 200 {
            return Err(DirectoryProblem::Status(status));
        }
        let ttl = resp
            .headers()
            .get(reqwest::header::CACHE_CONTROL)
            .and_then(|v| v.to_str().ok())
            .and_then(|cc| {
                cc.split(',').find_map(|d| {
                    d.trim()
                        .strip_prefix("max-age=")
                        .and_then(|v| v.parse::<u64>().ok())
                })
            })
            .map_or(self.config.max_ttl, |s| {
                Duration::from_secs(s).min(self.config.max_ttl)
            });
        let body = read_capped(&mut resp, self.config.max_bytes).await?;
        let doc: Jwks =
            serde_json::from_slice(&body).map_err(|e| DirectoryProblem::NotJwks(e.to_string()))?;
        if doc.keys.len() > self.config.max_keys {
            return Err(DirectoryProblem::TooManyKeys {
                found: doc.keys.len(),
                max: self.config.max_keys,
            });
        }
        // Keys are used whether or not the directory's possession proof
        // holds (Appendix B.1 allows it: the fetch itself associates them
        // with the URL); entries with a wrong kid or alg are dropped
        // (§5.5.1).
        let (keys, dropped) = crate::directory::usable_entries(url.as_str(), doc.keys);
        if keys.is_empty() {
            let why: Vec<String> = dropped.iter().map(ToString::to_string).collect();
            let why = match why.is_empty() {
                true => "no key".to_owned(),
                false => format!("no usable key ({})", why.join("; ")),
            };
            return Err(DirectoryProblem::NotJwks(why));
        }
        Ok((keys, ttl))
    }

    /// Verifies a request, fetching the keys from the directories its
    /// signatures name ([`verify`](crate::verify)'s summary of
    /// [`Self::verify_each`]).
    pub async fn verify_request(&self, msg: &Message, config: &VerifyConfig) -> Outcome {
        summarise(self.verify_each(msg, config).await)
    }

    /// Verifies each signature of a request with the keys of the JWK Set
    /// its own Signature-Agent member names. A directory that cannot be
    /// had makes its signatures unverified, with the reason.
    pub async fn verify_each(&self, msg: &Message, config: &VerifyConfig) -> Vec<Verdict> {
        let (first, agents) = crate::verify::named_agents(msg, config);
        if agents.is_empty() {
            return first.into_iter().map(no_agent).collect();
        }
        let mut sets = ByAgent::default();
        for agent in agents {
            if sets.keys.contains_key(&agent) || sets.failed.contains_key(&agent) {
                continue;
            }
            match self.key_set(&agent).await {
                Ok(keys) => {
                    sets.keys.insert(agent, keys);
                }
                Err(e) => {
                    sets.failed.insert(agent, e);
                }
            }
        }
        verify_each(msg, None, &sets, config)
            .into_iter()
            .map(|v| sets.explain(v))
            .collect()
    }
}

/// A document as fetched by [`fetch_document`]: whatever status came
/// back (a redirect is returned, not followed), the headers, the body.
#[derive(Debug, Clone)]
pub struct Document {
    /// The response (status and headers).
    pub response: crate::base::Response,
    /// The body, at most the limit asked for.
    pub body: Vec<u8>,
}

/// GETs `url` as a verifier or a card client must: no redirect followed
/// (build `client` from [`DirectoryClient::client_builder`] or with
/// redirects off), `Accept: accept`, at most `max_bytes` of body. For the
/// operator's checks (`mannerly directory check`, `mannerly card check`).
pub async fn fetch_document(
    client: &reqwest::Client,
    url: &str,
    accept: &str,
    max_bytes: usize,
) -> Result<Document, DirectoryProblem> {
    let mut resp = client
        .get(url)
        .header(reqwest::header::ACCEPT, accept)
        .send()
        .await
        .map_err(|e| DirectoryProblem::Fetch(e.into()))?;
    let response = crate::base::Response {
        status: resp.status().as_u16(),
        headers: mannerly_fetch::http::header_pairs(resp.headers()),
    };
    let body = read_capped(&mut resp, max_bytes).await?;
    Ok(Document { response, body })
}

/// A response's body, refused once it passes `max_bytes`.
async fn read_capped(
    resp: &mut reqwest::Response,
    max_bytes: usize,
) -> Result<Vec<u8>, DirectoryProblem> {
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| DirectoryProblem::Body(e.into()))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > max_bytes {
            return Err(DirectoryProblem::TooLarge(max_bytes));
        }
    }
    Ok(body)
}

/// A verdict of the capturing pass with no agent named: unverified for want
/// of one (the directory fetcher has no other keys).
fn no_agent(v: Verdict) -> Verdict {
    match v.outcome {
        Outcome::Unverified {
            reason: Rejection::UnknownKey(_),
        } => Verdict {
            outcome: Outcome::Unverified {
                reason: Rejection::NoAgent,
            },
            ..v
        },
        _ => v,
    }
}

/// The key sets fetched, by the agent value that named them, and the
/// directories that could not be had.
#[derive(Default)]
struct ByAgent {
    keys: HashMap<String, StaticKeys>,
    failed: HashMap<String, DirectoryError>,
    /// The agent each keyid was looked up under.
    asked: Mutex<HashMap<String, String>>,
}

impl ByAgent {
    /// An unknown key whose directory failed is unverified for that reason.
    fn explain(&self, v: Verdict) -> Verdict {
        let Outcome::Unverified {
            reason: Rejection::UnknownKey(keyid),
        } = &v.outcome
        else {
            return v;
        };
        let asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
        match asked.get(keyid).and_then(|a| self.failed.get(a)) {
            Some(why) => Verdict {
                outcome: Outcome::Unverified {
                    reason: Rejection::DirectoryUnavailable(Box::new(why.clone())),
                },
                ..v
            },
            _ => v,
        }
    }
}

impl KeyLookup for ByAgent {
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk> {
        self.resolve(keyid, agent).map(|k| k.jwk.clone())
    }

    fn resolve(&self, keyid: &str, agent: Option<&str>) -> Option<std::sync::Arc<ReadyKey>> {
        let agent = agent?;
        self.asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(keyid.to_owned(), agent.to_owned());
        self.keys.get(agent)?.resolve(keyid, Some(agent))
    }

    fn needs_agent(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            // Missed before: multicast, reserved, documentation,
            // benchmarking, and IPv6 forms that embed a private IPv4.
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "198.18.0.1",
            "0.1.2.3",
            "ff02::1",
            "2001:db8::1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "fec0::1",
        ] {
            assert!(is_private(ip.parse().expect("ip")), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2001:4860::8888"] {
            assert!(!is_private(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[tokio::test]
    async fn the_connecting_resolver_refuses_private_answers() {
        // The resolver the connection uses checks what it returns, so a
        // name that passed the pre-check cannot rebind to a private one.
        use reqwest::dns::Resolve;
        let name: reqwest::dns::Name = "localhost".parse().expect("name");
        match mannerly_fetch::guard::PublicResolver.resolve(name).await {
            Ok(_) => panic!("localhost resolved for a verifier"),
            Err(e) => assert!(e.to_string().contains("refused"), "{e}"),
        }
    }

    #[tokio::test]
    async fn ip_literals_are_checked_as_addresses() {
        // Before: an IPv6 literal kept its brackets and failed to resolve,
        // whatever its address.
        let c = DirectoryClient::new(DirectoryConfig::default()).expect("client");
        for agent in [
            "https://[::1]",
            "https://[fe80::1]:8443",
            "https://224.0.0.1",
        ] {
            let e = c.keys(agent).await.expect_err("refused");
            assert!(
                matches!(e.problem, DirectoryProblem::PrivateAddress { .. }),
                "{agent}: {e}"
            );
        }
    }

    #[test]
    fn directory_urls() {
        // Fetched as it is: no path is guessed for a bare origin (§5.5).
        assert_eq!(
            DirectoryClient::directory_url("https://crawler.example").map(|u| u.to_string()),
            Ok("https://crawler.example/".into())
        );
        assert_eq!(
            DirectoryClient::directory_url("https://crawler.example/keys.json")
                .map(|u| u.to_string()),
            Ok("https://crawler.example/keys.json".into())
        );
        assert!(DirectoryClient::directory_url("http://crawler.example").is_err());
    }
}
