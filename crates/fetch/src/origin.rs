//! Origins: scheme, host and port, the unit robots.txt applies to.

use std::fmt;

use crate::{FetchError, UrlProblem};

/// `http://a`, `https://a` and `https://a:8443` are three origins, each with
/// its own robots.txt (RFC 9309 §2.3).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// Lower-case host (IPv6 in brackets).
    pub host: String,
    /// The port, explicit or the scheme's default.
    pub port: u16,
}

impl Origin {
    /// The origin of an absolute http(s) URL.
    pub fn of(url: &str) -> Result<Origin, FetchError> {
        let parsed = url::Url::parse(url).map_err(|source| FetchError::UnparsableUrl {
            url: url.to_owned(),
            source,
        })?;
        Self::of_url(&parsed)
    }

    /// The origin of a parsed http(s) URL.
    pub fn of_url(url: &url::Url) -> Result<Origin, FetchError> {
        let bad = |problem| FetchError::BadUrl {
            url: url.to_string(),
            problem,
        };
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(bad(UrlProblem::Scheme));
        }
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_ascii_lowercase(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => format!("[{a}]"),
            None => return Err(bad(UrlProblem::NoHost)),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| bad(UrlProblem::NoPort))?;
        Ok(Origin {
            scheme: scheme.to_owned(),
            host,
            port,
        })
    }

    fn default_port(&self) -> bool {
        (self.scheme == "http" && self.port == 80) || (self.scheme == "https" && self.port == 443)
    }

    /// `https://example.com/robots.txt`.
    pub fn robots_url(&self) -> String {
        format!("{self}/robots.txt")
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.default_port() {
            write!(f, "{}://{}", self.scheme, self.host)
        } else {
            write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_origins() {
        let a = Origin::of("http://A.example/x").expect("ok");
        let b = Origin::of("https://a.example/y").expect("ok");
        let c = Origin::of("https://a.example:8443/").expect("ok");
        assert_eq!(a.to_string(), "http://a.example");
        assert_eq!(b.to_string(), "https://a.example");
        assert_eq!(c.to_string(), "https://a.example:8443");
        assert_ne!(a, b);
        assert_ne!(b, c);
        assert_eq!(c.robots_url(), "https://a.example:8443/robots.txt");
        assert!(Origin::of("ftp://a/").is_err());
        assert!(Origin::of("/relative").is_err());
    }
}
