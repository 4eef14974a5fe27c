//! Fetching key directories for verification, and verifying with them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::base::Message;
use crate::directory::{DirectoryProblem, Jwks, DIRECTORY_PATH};
use crate::verify::{verify, KeyLookup, Outcome, Rejection, StaticKeys, VerifyConfig};
use crate::Jwk;
use mannerly_time::UnixMillis;

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

/// Why a directory could not be used: which one, and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key directory {url}: {problem}")]
pub struct DirectoryError {
    /// The directory (or the `Signature-Agent` value that named it).
    pub url: String,
    /// What was wrong.
    #[source]
    pub problem: DirectoryProblem,
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
                problem: DirectoryProblem::Client(e.to_string()),
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

    /// The directory URL for a `Signature-Agent` value: a bare origin gets
    /// the well-known path; a URL with a path is used as it is (the direct
    /// JWKS URL form).
    pub fn directory_url(agent: &str) -> Result<url::Url, DirectoryProblem> {
        let u = url::Url::parse(agent).map_err(|e| DirectoryProblem::NotAUrl(e.to_string()))?;
        if u.scheme() != "https" {
            return Err(DirectoryProblem::NotHttps);
        }
        if u.path() == "/" || u.path().is_empty() {
            u.join(DIRECTORY_PATH)
                .map_err(|e| DirectoryProblem::NotAUrl(e.to_string()))
        } else {
            Ok(u)
        }
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
                let keys = StaticKeys::new(keys);
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
            .map_err(|e| DirectoryProblem::Fetch(e.to_string()))?;
        let status = resp.status().as_u16();
        let headers = mannerly_fetch::http::header_pairs(resp.headers());
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
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| DirectoryProblem::Fetch(format!("body: {e}")))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > self.config.max_bytes {
                return Err(DirectoryProblem::TooLarge(self.config.max_bytes));
            }
        }
        let doc: Jwks =
            serde_json::from_slice(&body).map_err(|e| DirectoryProblem::NotJwks(e.to_string()))?;
        if doc.keys.len() > self.config.max_keys {
            return Err(DirectoryProblem::TooManyKeys {
                found: doc.keys.len(),
                max: self.config.max_keys,
            });
        }
        // A directory that signs itself is held to its signature: every
        // key listed must have signed it (and the digest must match).
        if headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("signature-input"))
        {
            let response = crate::base::Response { status, headers };
            let origin = url.origin().ascii_serialization();
            let keys =
                crate::directory::verify_directory(&origin, &response, &body, UnixMillis::now())?;
            return Ok((keys, ttl));
        }
        Ok((doc.keys, ttl))
    }

    /// Verifies a request, fetching the keys from the directory its
    /// `Signature-Agent` names. `Err` when that directory cannot be used:
    /// the signature was then not checked (the verifier's own
    /// [`Rejection`]s name no fetching).
    pub async fn verify_request(
        &self,
        msg: &Message,
        config: &VerifyConfig,
    ) -> Result<Outcome, DirectoryError> {
        // First pass: find what the signature needs (keyid and agent).
        struct Capture(Mutex<Option<(String, Option<String>)>>);
        impl KeyLookup for Capture {
            fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk> {
                *self.0.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((keyid.to_owned(), agent.map(str::to_owned)));
                None
            }
        }
        let capture = Capture(Mutex::new(None));
        let first = verify(msg, None, &capture, config);
        let hint = capture.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some((_, agent)) = hint else {
            return Ok(first); // unsigned, or invalid before any key was needed
        };
        let Some(agent) = agent else {
            return Ok(Outcome::Invalid {
                reason: Rejection::NoAgent,
            });
        };
        let keys = self.key_set(&agent).await?;
        Ok(verify(msg, None, &keys, config))
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
        assert_eq!(
            DirectoryClient::directory_url("https://crawler.example").map(|u| u.to_string()),
            Ok("https://crawler.example/.well-known/http-message-signatures-directory".into())
        );
        assert_eq!(
            DirectoryClient::directory_url("https://crawler.example/keys.json")
                .map(|u| u.to_string()),
            Ok("https://crawler.example/keys.json".into())
        );
        assert!(DirectoryClient::directory_url("http://crawler.example").is_err());
    }
}
