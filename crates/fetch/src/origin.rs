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
        self.written("/robots.txt")
    }

    /// `https://example.com`, as [`Display`](fmt::Display) writes it, in
    /// one allocation: every robots.txt answer names its origin.
    pub fn ascii_serialization(&self) -> String {
        self.written("")
    }

    /// The origin's text, as [`Display`](fmt::Display) writes it, then
    /// `tail`, in one allocation.
    fn written(&self, tail: &str) -> String {
        // `:` and up to five digits of a port.
        let len = self.scheme.len() + 3 + self.host.len() + 6 + tail.len();
        let mut out = String::with_capacity(len);
        // Writing into a String cannot fail.
        let _ = fmt::Write::write_fmt(&mut out, format_args!("{self}"));
        out.push_str(tail);
        out
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Piece by piece: a check names its origin, and `write!` with its
        // arguments costs several times as much.
        f.write_str(&self.scheme)?;
        f.write_str("://")?;
        f.write_str(&self.host)?;
        if self.default_port() {
            return Ok(());
        }
        f.write_str(":")?;
        f.write_str(itoa::Buffer::new().format(self.port))
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
        assert_eq!(a.robots_url(), "http://a.example/robots.txt");
        for o in [&a, &b, &c] {
            assert_eq!(o.ascii_serialization(), o.to_string());
        }
        let v6 = Origin::of("http://[::1]:8080/").expect("ok");
        assert_eq!(v6.ascii_serialization(), "http://[::1]:8080");
        assert_eq!(v6.to_string(), "http://[::1]:8080");
        assert!(Origin::of("ftp://a/").is_err());
        assert!(Origin::of("/relative").is_err());
    }
}
