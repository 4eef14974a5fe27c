//! Politeness keys: which URLs share one host's budget.
//!
//! - [`KeyMode::Host`] (default): one key per host name.
//! - [`KeyMode::HostPort`]: one per host and port.
//! - [`KeyMode::RegisteredDomain`]: one per registered domain from the
//!   public suffix list (`a.example.co.uk` and `b.example.co.uk` share
//!   `example.co.uk`), for sites that spread over many subdomains.
//! - [`KeyMode::Ip`]: one per server address, for shared hosting where
//!   thousands of names live on one machine. Resolution is I/O, so it stays
//!   with the caller: a host whose address is unknown gives
//!   [`KeyError::Unresolved`]; resolve it, tell the [`Keyer`] with
//!   [`Keyer::set_address`], and ask again.

use std::collections::HashMap;
use std::net::IpAddr;

/// How URLs map to politeness keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMode {
    #[default]
    /// The URL's host: `a.example.com` (the default).
    Host,
    /// Host and port: `a.example.com:8443`.
    HostPort,
    /// The registered domain (public suffix list): `example.com` for `a.example.com` and `b.example.com`.
    RegisteredDomain,
    /// The server's address, resolved by the caller.
    Ip,
}

/// Why a URL has no key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The URL does not parse.
    #[error("`{url}` is not an absolute URL: {reason}")]
    BadUrl {
        /// The text.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// The URL has no host (`mailto:`, `data:`).
    #[error("`{url}` has no host")]
    NoHost {
        /// The URL.
        url: String,
    },
    /// IP keys: the host's address is not known yet.
    #[error("the address of {host} is not known yet (IP keys): resolve it and call set_address")]
    Unresolved {
        /// The host to resolve.
        host: String,
    },
}

/// Maps URLs to keys; holds the addresses the caller resolved for
/// [`KeyMode::Ip`].
#[derive(Debug, Clone, Default)]
pub struct Keyer {
    /// The mode.
    pub mode: KeyMode,
    addresses: HashMap<String, IpAddr>,
}

impl Keyer {
    /// A keyer for this mode (no addresses known).
    pub fn new(mode: KeyMode) -> Keyer {
        Keyer {
            mode,
            addresses: HashMap::new(),
        }
    }

    /// Records the address a host resolved to (IP keys).
    pub fn set_address(&mut self, host: &str, ip: IpAddr) {
        self.addresses
            .insert(host.trim_end_matches('.').to_ascii_lowercase(), ip);
    }

    /// The key of a parsed URL.
    pub fn key_of(&self, url: &url::Url) -> Result<String, KeyError> {
        let host = match url.host() {
            Some(h) => h,
            None => {
                return Err(KeyError::NoHost {
                    url: url.as_str().to_owned(),
                })
            }
        };
        // `url` already lower-cases domains and brackets IPv6 literals. A
        // fully qualified name's trailing dot names the same server:
        // `example.com.` and `example.com` share one key (one budget).
        let name = match host {
            url::Host::Domain(d) => d.trim_end_matches('.').to_owned(),
            _ => host.to_string(),
        };
        Ok(match self.mode {
            KeyMode::Host => name,
            KeyMode::HostPort => format!("{name}:{}", url.port_or_known_default().unwrap_or(0)),
            KeyMode::RegisteredDomain => match host {
                url::Host::Domain(d) => psl::domain_str(d.trim_end_matches('.'))
                    .map(str::to_owned)
                    .unwrap_or(name),
                _ => name,
            },
            KeyMode::Ip => match host {
                url::Host::Ipv4(ip) => format!("ip:{ip}"),
                url::Host::Ipv6(ip) => format!("ip:{ip}"),
                url::Host::Domain(d) => match self.addresses.get(d.trim_end_matches('.')) {
                    Some(ip) => format!("ip:{ip}"),
                    None => return Err(KeyError::Unresolved { host: name }),
                },
            },
        })
    }

    /// The key of a URL string.
    pub fn key(&self, url: &str) -> Result<String, KeyError> {
        let u = url::Url::parse(url).map_err(|e| KeyError::BadUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        self.key_of(&u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_dot_names_the_same_host() {
        for mode in [KeyMode::Host, KeyMode::HostPort, KeyMode::RegisteredDomain] {
            let k = Keyer::new(mode);
            assert_eq!(
                k.key("https://www.example.com./a"),
                k.key("https://www.example.com/b"),
                "{mode:?}"
            );
        }
        let mut ip = Keyer::new(KeyMode::Ip);
        ip.set_address("example.com.", "192.0.2.1".parse().expect("ip"));
        assert_eq!(ip.key("http://example.com/").as_deref(), Ok("ip:192.0.2.1"));
        assert_eq!(
            ip.key("http://example.com./").as_deref(),
            Ok("ip:192.0.2.1")
        );
    }

    #[test]
    fn each_mode() {
        let url = "https://WWW.Example.co.uk:8443/a";
        let k = |mode| Keyer::new(mode).key(url);
        assert_eq!(k(KeyMode::Host).as_deref(), Ok("www.example.co.uk"));
        assert_eq!(
            k(KeyMode::HostPort).as_deref(),
            Ok("www.example.co.uk:8443")
        );
        assert_eq!(k(KeyMode::RegisteredDomain).as_deref(), Ok("example.co.uk"));
        assert_eq!(
            k(KeyMode::Ip),
            Err(KeyError::Unresolved {
                host: "www.example.co.uk".into()
            })
        );
        let mut ip = Keyer::new(KeyMode::Ip);
        ip.set_address("www.example.co.uk", "192.0.2.7".parse().expect("ip"));
        assert_eq!(ip.key(url).as_deref(), Ok("ip:192.0.2.7"));
        assert_eq!(ip.key("http://[::1]:81/").as_deref(), Ok("ip:::1"));
        assert_eq!(
            Keyer::new(KeyMode::HostPort)
                .key("http://a.test/")
                .as_deref(),
            Ok("a.test:80")
        );
        // Several blog subdomains of one hosting provider's suffix stay apart;
        // subdomains of one site share a key.
        let rd = Keyer::new(KeyMode::RegisteredDomain);
        assert_eq!(
            rd.key("https://alice.github.io/").as_deref(),
            Ok("alice.github.io")
        );
        assert_eq!(
            rd.key("https://a.b.example.com/").as_deref(),
            Ok("example.com")
        );
        assert_eq!(rd.key("http://127.0.0.1:9/").as_deref(), Ok("127.0.0.1"));
        assert_eq!(rd.key("http://localhost/").as_deref(), Ok("localhost"));
        assert!(matches!(
            Keyer::default().key("no url"),
            Err(KeyError::BadUrl { .. })
        ));
        assert!(matches!(
            Keyer::default().key("data:text/plain,x"),
            Err(KeyError::NoHost { .. })
        ));
    }
}
