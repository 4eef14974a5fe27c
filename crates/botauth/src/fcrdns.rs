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

/// The system's resolver configuration could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the system's resolver configuration: {0}")]
pub struct ResolverConfigError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// DNS through hickory-resolver.
pub struct HickoryDns {
    resolver: TokioResolver,
}

impl HickoryDns {
    /// The system's resolver configuration.
    pub fn system() -> Result<HickoryDns, ResolverConfigError> {
        TokioResolver::builder_tokio()
            .map(|b| HickoryDns {
                resolver: b.build(),
            })
            .map_err(|e| ResolverConfigError(Box::new(e)))
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
        /// Which step failed (serialised as its text).
        #[serde(serialize_with = "as_text")]
        reason: IpRejection,
    },
}

fn as_text<S: serde::Serializer>(r: &IpRejection, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(r)
}

impl IpVerdict {
    /// What the answer says of the address: confirmed (`Some(true)`),
    /// refuted (`Some(false)`), or nothing (`None`: DNS failed, ask again).
    pub fn confirmed(&self) -> Option<bool> {
        match self {
            IpVerdict::Verified { .. } => Some(true),
            IpVerdict::NotVerified { reason } if !reason.is_transient() => Some(false),
            IpVerdict::NotVerified { .. } => None,
        }
    }
}

/// Why an IP was not confirmed. [`IpRejection::is_transient`] tells a
/// DNS failure (ask again later) from an answer (the IP is not the
/// crawler's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IpRejection {
    /// The address has no PTR record.
    #[error("{ip} has no PTR record")]
    NoPtr {
        /// The address.
        ip: IpAddr,
    },
    /// The reverse lookup failed.
    #[error("reverse lookup of {ip} failed: {detail}")]
    ReverseLookupFailed {
        /// The address.
        ip: IpAddr,
        /// The resolver's error.
        detail: String,
    },
    /// No PTR name is under an allowed domain.
    #[error("{ip} reverses to {}, not under {}", names.join(", "), domains.join(" or "))]
    NotUnderDomain {
        /// The address.
        ip: IpAddr,
        /// Its PTR names.
        names: Vec<String>,
        /// The allowed domains.
        domains: Vec<String>,
    },
    /// No PTR name under an allowed domain resolves back to the address.
    #[error("{}", checks.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Unconfirmed {
        /// What each candidate name gave.
        checks: Vec<ForwardCheck>,
    },
}

impl IpRejection {
    /// Whether a DNS lookup failed (rather than answered): the verdict may
    /// change if asked again.
    pub fn is_transient(&self) -> bool {
        match self {
            IpRejection::ReverseLookupFailed { .. } => true,
            IpRejection::Unconfirmed { checks } => checks
                .iter()
                .any(|c| matches!(c, ForwardCheck::LookupFailed { .. })),
            _ => false,
        }
    }
}

/// The forward lookup of one PTR name that did not confirm the address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForwardCheck {
    /// The name resolves, but not to the address: a spoofed PTR record.
    #[error("{name} resolves to {}, not {ip} (a spoofed PTR record)", addrs.iter().map(IpAddr::to_string).collect::<Vec<_>>().join(", "))]
    Spoofed {
        /// The PTR name.
        name: String,
        /// The address checked.
        ip: IpAddr,
        /// What the name resolves to.
        addrs: Vec<IpAddr>,
    },
    /// The forward lookup failed.
    #[error("forward lookup of {name} failed: {detail}")]
    LookupFailed {
        /// The PTR name.
        name: String,
        /// The resolver's error.
        detail: String,
    },
}

/// A published IP-range file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IpRangesError {
    /// Not JSON at all.
    #[error("not JSON: {0}")]
    Json(String),
    /// No `prefixes` array.
    #[error("no \"prefixes\" array")]
    NoPrefixes,
    /// A file of ranges by service (ipverse's) where no service's
    /// User-Agent patterns name the crawler.
    #[error("no service there names `{0}` in its User-Agent patterns")]
    NoService(String),
    /// One prefix is unusable.
    #[error("prefix {index} {problem}")]
    Prefix {
        /// Its position in the array (0-based).
        index: usize,
        /// What is wrong, with the value.
        problem: String,
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
                reason: IpRejection::NoPtr { ip },
            }
        }
        Err(detail) => {
            return IpVerdict::NotVerified {
                reason: IpRejection::ReverseLookupFailed { ip, detail },
            }
        }
    };
    let candidates: Vec<&String> = names
        .iter()
        .filter(|n| domains.iter().any(|d| under_domain(n, d)))
        .collect();
    if candidates.is_empty() {
        return IpVerdict::NotVerified {
            reason: IpRejection::NotUnderDomain {
                ip,
                names,
                domains: domains.to_vec(),
            },
        };
    }
    let mut checks = Vec::new();
    for name in candidates {
        match dns.addrs(name).await {
            Ok(addrs) if addrs.contains(&ip) => {
                return IpVerdict::Verified {
                    name: name.trim_end_matches('.').to_owned(),
                }
            }
            Ok(addrs) => checks.push(ForwardCheck::Spoofed {
                name: name.trim_end_matches('.').to_owned(),
                ip,
                addrs,
            }),
            Err(detail) => checks.push(ForwardCheck::LookupFailed {
                name: name.clone(),
                detail,
            }),
        }
    }
    IpVerdict::NotVerified {
        reason: IpRejection::Unconfirmed { checks },
    }
}

/// Published crawler IP ranges (the JSON format Google publishes:
/// `{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpRanges {
    prefixes: Vec<(IpAddr, u8)>,
    /// Prefixes a JAFAR file gives to other services: an address whose
    /// most specific prefix is one of these is not in the ranges.
    excluded: Vec<(IpAddr, u8)>,
}

impl IpRanges {
    /// Reads a published IP-range file (`{"prefixes": [{"ipv4Prefix": ...}]}`, as Google and others publish).
    pub fn parse(json: &str) -> Result<IpRanges, IpRangesError> {
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| IpRangesError::Json(e.to_string()))?;
        let list = v["prefixes"].as_array().ok_or(IpRangesError::NoPrefixes)?;
        let mut cidrs = Vec::new();
        for (i, p) in list.iter().enumerate() {
            let Some(cidr) = p["ipv4Prefix"]
                .as_str()
                .or_else(|| p["ipv6Prefix"].as_str())
            else {
                return Err(IpRangesError::Prefix {
                    index: i,
                    problem: "has neither ipv4Prefix nor ipv6Prefix".into(),
                });
            };
            cidrs.push(cidr);
        }
        IpRanges::from_cidrs(&cidrs)
    }

    /// The ranges a JAFAR file (Google's `prefixes` format, with optional
    /// `services` per prefix) gives `token`: prefixes naming no service,
    /// or naming it (case-insensitively); an address whose most specific
    /// prefix names only other services is not its.
    fn parse_jafar(v: &serde_json::Value, token: &str) -> Result<IpRanges, IpRangesError> {
        let list = v["prefixes"].as_array().ok_or(IpRangesError::NoPrefixes)?;
        let (mut mine, mut others) = (Vec::new(), Vec::new());
        for (i, p) in list.iter().enumerate() {
            let cidr = p["ipv4Prefix"]
                .as_str()
                .or_else(|| p["ipv6Prefix"].as_str())
                .ok_or_else(|| IpRangesError::Prefix {
                    index: i,
                    problem: "has neither ipv4Prefix nor ipv6Prefix".into(),
                })?;
            let for_token = p["services"].as_array().is_none_or(|s| {
                s.iter()
                    .filter_map(|x| x.as_str())
                    .any(|x| x.eq_ignore_ascii_case(token))
            });
            if for_token { &mut mine } else { &mut others }.push(cidr);
        }
        let mut ranges = IpRanges::from_cidrs(&mine)?;
        ranges.excluded = IpRanges::from_cidrs(&others)?.prefixes;
        Ok(ranges)
    }

    /// Reads ranges for one crawler from either Google's `prefixes` format
    /// (JAFAR, whose `services` are read: see `parse_jafar`) or a
    /// catalogue in ipverse's `crawlers.json` format (`{"services":
    /// {name: {"user_agent_patterns": ["*Token*"], "ipv4": [...], "ipv6":
    /// [...]}}}`), where the service whose patterns name `token` is read.
    pub fn parse_for(json: &str, token: &str) -> Result<IpRanges, IpRangesError> {
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| IpRangesError::Json(e.to_string()))?;
        let Some(services) = v["services"].as_object() else {
            return IpRanges::parse_jafar(&v, token);
        };
        let names = |s: &serde_json::Value| {
            s["user_agent_patterns"].as_array().is_some_and(|p| {
                p.iter()
                    .filter_map(|x| x.as_str())
                    .any(|x| x.trim_matches('*').eq_ignore_ascii_case(token))
            })
        };
        let service = services
            .values()
            .find(|s| names(s))
            .ok_or_else(|| IpRangesError::NoService(token.to_owned()))?;
        let cidrs: Vec<&str> = ["ipv4", "ipv6"]
            .iter()
            .filter_map(|k| service[*k].as_array())
            .flatten()
            .filter_map(|c| c.as_str())
            .collect();
        IpRanges::from_cidrs(&cidrs)
    }

    /// Ranges from CIDR strings (`66.249.64.0/27`, `2001:db8::/32`).
    pub fn from_cidrs(cidrs: &[&str]) -> Result<IpRanges, IpRangesError> {
        let mut prefixes = Vec::new();
        for (i, cidr) in cidrs.iter().enumerate() {
            let bad = |problem: String| IpRangesError::Prefix { index: i, problem };
            let (addr, len) = cidr
                .split_once('/')
                .ok_or_else(|| bad(format!("`{cidr}` is not CIDR")))?;
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| bad(format!("`{cidr}` has a bad address")))?;
            let len: u8 = len
                .parse()
                .map_err(|_| bad(format!("`{cidr}` has a bad length")))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            if len > max {
                return Err(bad(format!("`{cidr}` is longer than {max} bits")));
            }
            prefixes.push((addr, len));
        }
        Ok(IpRanges {
            prefixes,
            excluded: Vec::new(),
        })
    }

    /// The ranges as CIDR strings (`66.249.64.0/27`).
    pub fn cidrs(&self) -> Vec<String> {
        self.prefixes
            .iter()
            .map(|(a, l)| format!("{a}/{l}"))
            .collect()
    }

    /// These ranges and `other`'s.
    pub fn merge(&self, other: &IpRanges) -> IpRanges {
        let mut prefixes = self.prefixes.clone();
        prefixes.extend(other.prefixes.iter().copied());
        let mut excluded = self.excluded.clone();
        excluded.extend(other.excluded.iter().copied());
        IpRanges { prefixes, excluded }
    }

    /// How many ranges it holds.
    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Whether an address is inside the ranges: in one of them, and not
    /// in a more specific prefix given to other services.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let longest = |list: &[(IpAddr, u8)]| {
            list.iter()
                .filter(|&&p| in_prefix(p, ip))
                .map(|p| p.1)
                .max()
        };
        match (longest(&self.prefixes), longest(&self.excluded)) {
            (Some(mine), Some(other)) => mine >= other,
            (mine, _) => mine.is_some(),
        }
    }
}

/// Whether an address is inside one prefix.
fn in_prefix((net, len): (IpAddr, u8), ip: IpAddr) -> bool {
    match (net, ip) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jafar_files_services_tie_prefixes_to_tokens_and_the_most_specific_wins() {
        let jafar = r#"{"creationTime":"2026-04-10T22:30:00Z","prefixes":[
            {"ipv4Prefix":"192.0.2.0/22","services":["ExampleBot","ExampleBot-Image"]},
            {"ipv4Prefix":"192.0.3.0/24","services":["Example-Preview"]},
            {"ipv4Prefix":"198.51.100.0/24"}]}"#;
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        let bot = IpRanges::parse_for(jafar, "examplebot").expect("ranges");
        assert!(bot.contains(ip("192.0.2.9")));
        assert!(!bot.contains(ip("192.0.3.9")), "the /24 is the preview's");
        assert!(
            bot.contains(ip("198.51.100.1")),
            "a prefix naming no service is every token's"
        );
        let preview = IpRanges::parse_for(jafar, "Example-Preview").expect("ranges");
        assert!(preview.contains(ip("192.0.3.9")) && !preview.contains(ip("192.0.2.9")));
    }

    #[test]
    fn ranges_for_a_crawler_from_either_format() {
        let google = r#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}"#;
        let r = IpRanges::parse_for(google, "Googlebot").expect("prefixes");
        assert!(r.contains("66.249.64.7".parse().expect("ip")));
        let catalogue = r#"{"services":{
            "GPTBot":{"user_agent_patterns":["*GPTBot*"],"ipv4":["20.15.240.64/28"],"ipv6":[]},
            "Bingbot":{"user_agent_patterns":["*bingbot*"],"ipv4":["157.55.39.0/24"],"ipv6":["2620:1ec:c::/48"]}}}"#;
        let bing = IpRanges::parse_for(catalogue, "Bingbot").expect("bingbot's service");
        assert_eq!(bing.len(), 2);
        assert!(bing.contains("157.55.39.9".parse().expect("ip")));
        assert!(!bing.contains("20.15.240.70".parse().expect("ip")));
        assert_eq!(
            IpRanges::parse_for(catalogue, "CCBot"),
            Err(IpRangesError::NoService("CCBot".into()))
        );
    }

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
