//! Fetching key directories for verification, and verifying with them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::base::Message;
use crate::directory::{DirectoryProblem, Jwks, DIRECTORY_PATH};
use crate::verify::{verify, KeyLookup, Outcome, Rejection, StaticKeys, VerifyConfig};
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
}

impl Default for DirectoryConfig {
    fn default() -> Self {
        DirectoryConfig {
            max_bytes: 64 * 1024,
            max_keys: 32,
            timeout: Duration::from_secs(5),
            max_ttl: Duration::from_secs(24 * 3600),
            allow_private: false,
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
    keys: Vec<Jwk>,
    fresh_until: Instant,
}

/// Fetches and caches key directories (https only, no redirects, bounded).
pub struct DirectoryClient {
    client: reqwest::Client,
    config: DirectoryConfig,
    cache: Mutex<HashMap<String, Cached>>,
}

/// Addresses a verifier must not be made to contact.
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => {
            a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.octets()[0] == 100 && (a.octets()[1] & 0xC0) == 64
        }
        IpAddr::V6(a) => {
            a.is_loopback()
                || a.is_unspecified()
                || (a.segments()[0] & 0xfe00) == 0xfc00
                || (a.segments()[0] & 0xffc0) == 0xfe80
                || a.to_ipv4_mapped()
                    .is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

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

    /// The settings the client relies on; add roots or a resolver for tests.
    pub fn client_builder(config: &DirectoryConfig) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .https_only(true)
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
        let err = |problem| DirectoryError {
            url: agent.to_owned(),
            problem,
        };
        let url = Self::directory_url(agent).map_err(err)?;
        let key = url.to_string();
        if let Some(c) = self.lock().get(&key) {
            if Instant::now() < c.fresh_until {
                return Ok(c.keys.clone());
            }
        }
        match self.fetch(&url).await {
            Ok((keys, ttl)) => {
                self.lock().insert(
                    key,
                    Cached {
                        keys: keys.clone(),
                        fresh_until: Instant::now() + ttl,
                    },
                );
                Ok(keys)
            }
            Err(problem) => match self.lock().get(&key) {
                Some(stale) => Ok(stale.keys.clone()),
                None => Err(DirectoryError { url: key, problem }),
            },
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Cached>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn fetch(&self, url: &url::Url) -> Result<(Vec<Jwk>, Duration), DirectoryProblem> {
        let host = url.host_str().ok_or(DirectoryProblem::NoHost)?;
        let port = url.port_or_known_default().unwrap_or(443);
        if !self.config.allow_private {
            let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
                Ok(ip) => vec![ip],
                Err(_) => tokio::net::lookup_host((host, port))
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
        Ok((doc.keys, ttl))
    }

    /// Verifies a request, fetching the keys from the directory its
    /// `Signature-Agent` names.
    pub async fn verify_request(&self, msg: &Message, config: &VerifyConfig) -> Outcome {
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
            return first; // unsigned, or invalid before any key was needed
        };
        let Some(agent) = agent else {
            return Outcome::Invalid {
                reason: Rejection::NoAgent,
            };
        };
        match self.keys(&agent).await {
            Ok(keys) => verify(msg, None, &StaticKeys::new(keys), config),
            Err(e) => Outcome::Invalid {
                reason: Rejection::Directory(e),
            },
        }
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
        ] {
            assert!(is_private(ip.parse().expect("ip")), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2001:4860::8888"] {
            assert!(!is_private(ip.parse().expect("ip")), "{ip}");
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
