//! Refusing addresses a server must not be made to contact for a stranger
//! (SSRF): the verifier's key-directory fetches and `mannerly serve`'s
//! robots.txt fetches resolve names through [`PublicResolver`], which
//! refuses loopback, private, link-local and reserved addresses, and check
//! IP-literal hosts with [`is_forbidden`] (a literal never reaches a
//! resolver).

use std::net::IpAddr;

/// Whether an address is one a server must not be made to contact on a
/// stranger's behalf (SSRF): anything not a
/// public unicast address (loopback, private, link-local, shared, multicast,
/// reserved, documentation and benchmarking ranges, and IPv6 forms that
/// embed such an IPv4 address).
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => {
            let o = a.octets();
            a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.is_multicast()
                || a.is_documentation()
                || o[0] == 0 // "this network"
                || o[0] >= 240 // reserved
                || o[0] == 100 && (o[1] & 0xC0) == 64 // shared (CGNAT)
                || o[0] == 192 && o[1] == 0 && o[2] == 0 // IETF assignments
                || o[0] == 198 && (o[1] & 0xFE) == 18 // benchmarking
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            let embedded = |v4: std::net::Ipv4Addr| is_forbidden(IpAddr::V4(v4));
            a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0) // discard
                || a.to_ipv4_mapped().is_some_and(embedded)
                // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach IPv4.
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0])
                    && embedded(std::net::Ipv4Addr::new(
                        (s[6] >> 8) as u8,
                        s[6] as u8,
                        (s[7] >> 8) as u8,
                        s[7] as u8,
                    ))
                || s[0] == 0x2002
                    && embedded(std::net::Ipv4Addr::new(
                        (s[1] >> 8) as u8,
                        s[1] as u8,
                        (s[2] >> 8) as u8,
                        s[2] as u8,
                    ))
        }
    }
}

/// A refused address, as the resolver's error.
#[derive(Debug, thiserror::Error)]
#[error(
    "refused to connect to {host} ({addr}): a private, loopback, link-local or reserved address"
)]
pub struct ForbiddenAddress {
    /// The name that was resolved (or the literal).
    pub host: String,
    /// The address refused.
    pub addr: IpAddr,
}

/// A reqwest resolver that refuses every name with a forbidden address.
/// The connection is made only to the addresses it returned and checked,
/// so a name cannot pass a check and then resolve elsewhere (DNS
/// rebinding).
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicResolver;

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(bad) = addrs.iter().find(|a| is_forbidden(a.ip())) {
                let e: Box<dyn std::error::Error + Send + Sync> = Box::new(ForbiddenAddress {
                    host,
                    addr: bad.ip(),
                });
                return Err(e);
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The forbidden address of a URL whose host is an IP literal, if it is one.
pub fn forbidden_literal(url: &url::Url) -> Option<ForbiddenAddress> {
    let ip: IpAddr = match url.host()? {
        url::Host::Ipv4(a) => a.into(),
        url::Host::Ipv6(a) => a.into(),
        url::Host::Domain(_) => return None,
    };
    is_forbidden(ip).then(|| ForbiddenAddress {
        host: ip.to_string(),
        addr: ip,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_checked() {
        for u in [
            "http://127.0.0.1/",
            "http://[::1]/",
            "http://10.1.2.3:8080/x",
            "http://[::ffff:192.168.0.1]/",
        ] {
            let url = url::Url::parse(u).expect("url");
            assert!(forbidden_literal(&url).is_some(), "{u}");
        }
        for u in [
            "http://8.8.8.8/",
            "http://example.com/",
            "http://[2001:4860::8888]/",
        ] {
            let url = url::Url::parse(u).expect("url");
            assert!(forbidden_literal(&url).is_none(), "{u}");
        }
    }

    #[tokio::test]
    async fn the_resolver_refuses_loopback_names() {
        use reqwest::dns::Resolve;
        let name: reqwest::dns::Name = "localhost".parse().expect("name");
        match PublicResolver.resolve(name).await {
            Ok(_) => panic!("localhost resolved"),
            Err(e) => assert!(e.to_string().contains("refused"), "{e}"),
        }
    }
}
