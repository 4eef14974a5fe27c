//! Is this IP really the crawler it claims to be? Forward-confirmed
//! reverse DNS, and published IP-range files.
//!
//! FCrDNS: IP → PTR names → keep the names under an allowed domain (on a
//! label boundary: `googlebot.com` accepts `crawl-1.googlebot.com`, not
//! `evilgooglebot.com` or `googlebot.com.evil.net`) → resolve each forward
//! → the IP must be among the answers.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};

use hickory_resolver::config::{NameServerConfigGroup, ResolverConfig};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::TokioResolver;

/// DNS lookups FCrDNS needs.
pub trait Dns: Send + Sync {
    /// The PTR names of an address.
    fn ptr(&self, ip: IpAddr) -> impl Future<Output = Result<Vec<String>, String>> + Send;
    /// The addresses a name resolves to (A and AAAA).
    fn addrs(&self, name: &str) -> impl Future<Output = Result<Vec<IpAddr>, String>> + Send;
}

/// DNS through hickory-resolver.
pub struct HickoryDns {
    resolver: TokioResolver,
}

impl HickoryDns {
    /// The system's resolver configuration.
    pub fn system() -> Result<HickoryDns, String> {
        TokioResolver::builder_tokio()
            .map(|b| HickoryDns {
                resolver: b.build(),
            })
            .map_err(|e| format!("cannot read the system's resolver configuration: {e}"))
    }

    /// One name server (tests run theirs on 127.0.0.1).
    pub fn with_server(addr: SocketAddr) -> HickoryDns {
        let group = NameServerConfigGroup::from_ips_clear(&[addr.ip()], addr.port(), true);
        let config = ResolverConfig::from_parts(None, vec![], group);
        let mut builder =
            TokioResolver::builder_with_config(config, TokioConnectionProvider::default());
        builder.options_mut().attempts = 1;
        HickoryDns {
            resolver: builder.build(),
        }
    }
}

impl Dns for HickoryDns {
    async fn ptr(&self, ip: IpAddr) -> Result<Vec<String>, String> {
        self.resolver
            .reverse_lookup(ip)
            .await
            .map(|r| r.iter().map(|p| p.0.to_utf8()).collect())
            .map_err(|e| e.to_string())
    }

    async fn addrs(&self, name: &str) -> Result<Vec<IpAddr>, String> {
        self.resolver
            .lookup_ip(name)
            .await
            .map(|r| r.iter().collect())
            .map_err(|e| e.to_string())
    }
}

/// The answer for one IP.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum IpVerdict {
    /// The IP's PTR name is under an allowed domain and resolves back to it.
    Verified {
        /// The PTR name that resolved back to the IP.
        name: String,
    },
    /// Not confirmed, with the reason.
    NotVerified {
        /// Which step failed.
        reason: String,
    },
}

/// Whether `name` is `domain` or a subdomain of it, on a label boundary.
pub fn under_domain(name: &str, domain: &str) -> bool {
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    let d = domain
        .trim_start_matches('.')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    !d.is_empty() && (n == d || n.ends_with(&format!(".{d}")))
}

/// Forward-confirmed reverse DNS for `ip` against the allowed `domains`.
pub async fn verify_ip(ip: IpAddr, domains: &[String], dns: &impl Dns) -> IpVerdict {
    let names = match dns.ptr(ip).await {
        Ok(n) if !n.is_empty() => n,
        Ok(_) => {
            return IpVerdict::NotVerified {
                reason: format!("{ip} has no PTR record"),
            }
        }
        Err(e) => {
            return IpVerdict::NotVerified {
                reason: format!("reverse lookup of {ip} failed: {e}"),
            }
        }
    };
    let candidates: Vec<&String> = names
        .iter()
        .filter(|n| domains.iter().any(|d| under_domain(n, d)))
        .collect();
    if candidates.is_empty() {
        return IpVerdict::NotVerified {
            reason: format!(
                "{ip} reverses to {}, not under {}",
                names.join(", "),
                domains.join(" or ")
            ),
        };
    }
    let mut why = Vec::new();
    for name in candidates {
        match dns.addrs(name).await {
            Ok(addrs) if addrs.contains(&ip) => {
                return IpVerdict::Verified {
                    name: name.trim_end_matches('.').to_owned(),
                }
            }
            Ok(addrs) => why.push(format!(
                "{} resolves to {}, not {ip} (a spoofed PTR record)",
                name.trim_end_matches('.'),
                addrs
                    .iter()
                    .map(IpAddr::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Err(e) => why.push(format!("forward lookup of {name} failed: {e}")),
        }
    }
    IpVerdict::NotVerified {
        reason: why.join("; "),
    }
}

/// Published crawler IP ranges (the JSON format Google publishes:
/// `{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpRanges {
    prefixes: Vec<(IpAddr, u8)>,
}

impl IpRanges {
    /// Reads a published IP-range file (`{"prefixes": [{"ipv4Prefix": ...}]}`, as Google and others publish).
    pub fn parse(json: &str) -> Result<IpRanges, String> {
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
        let list = v["prefixes"].as_array().ok_or("no \"prefixes\" array")?;
        let mut prefixes = Vec::new();
        for (i, p) in list.iter().enumerate() {
            let Some(cidr) = p["ipv4Prefix"]
                .as_str()
                .or_else(|| p["ipv6Prefix"].as_str())
            else {
                return Err(format!("prefix {i} has neither ipv4Prefix nor ipv6Prefix"));
            };
            let (addr, len) = cidr
                .split_once('/')
                .ok_or_else(|| format!("prefix {i} `{cidr}` is not CIDR"))?;
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| format!("prefix {i} `{cidr}` has a bad address"))?;
            let len: u8 = len
                .parse()
                .map_err(|_| format!("prefix {i} `{cidr}` has a bad length"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            if len > max {
                return Err(format!("prefix {i} `{cidr}` is longer than {max} bits"));
            }
            prefixes.push((addr, len));
        }
        Ok(IpRanges { prefixes })
    }

    /// Whether an address is inside any of the ranges.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.prefixes.iter().any(|&(net, len)| match (net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = if len == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(len))
                };
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = if len == 0 {
                    0
                } else {
                    u128::MAX << (128 - u32::from(len))
                };
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_boundaries() {
        assert!(under_domain(
            "crawl-66-249-66-1.googlebot.com.",
            "googlebot.com"
        ));
        assert!(under_domain("googlebot.com", "googlebot.com"));
        assert!(!under_domain("evilgooglebot.com", "googlebot.com"));
        assert!(!under_domain("googlebot.com.evil.net", "googlebot.com"));
        assert!(!under_domain("x.googlebot.co", "googlebot.com"));
    }

    #[test]
    fn ranges() {
        let r = IpRanges::parse(r#"{"creationTime":"x","prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}"#).expect("json");
        assert!(r.contains("66.249.64.31".parse().expect("ip")));
        assert!(!r.contains("66.249.64.32".parse().expect("ip")));
        assert!(r.contains("2001:4860:4801:10::1234".parse().expect("ip")));
        assert!(!r.contains("2001:4860:4801:11::1".parse().expect("ip")));
        assert!(IpRanges::parse(r#"{"prefixes":[{"ipv4Prefix":"1.2.3.4/40"}]}"#).is_err());
    }
}
