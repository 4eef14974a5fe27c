//! The original request, as the server's forward-auth hook hands it over:
//! `X-Forwarded-Method`, `-Proto`, `-Host`, `-Uri` and `-For` (nginx
//! `auth_request` with the README's snippet, Caddy `forward_auth`, Traefik
//! `ForwardAuth`), believed only from a peer in the trusted ranges. From
//! anyone else the request to the gate is taken as the original itself.

use std::net::IpAddr;

use hyper::HeaderMap;
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::Message;

/// The request the server asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// `GET`, ...
    pub method: String,
    /// `https` or `http`.
    pub proto: String,
    /// The host it was sent to.
    pub host: String,
    /// The path and query.
    pub uri: String,
    /// The client's address.
    pub client: Option<IpAddr>,
    /// Whether the forwarded headers were believed.
    pub forwarded: bool,
}

fn get<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

impl Original {
    /// Reads the original request from the gate's own request (`method`,
    /// `uri`, `headers`) sent by `peer`.
    pub fn read(
        method: &str,
        uri: &str,
        headers: &HeaderMap,
        peer: IpAddr,
        trusted: &IpRanges,
    ) -> Original {
        let own_host = get(headers, "host").unwrap_or("").to_owned();
        if !trusted.contains(peer) {
            return Original {
                method: method.to_owned(),
                proto: "http".into(),
                host: own_host,
                uri: uri.to_owned(),
                client: Some(peer),
                forwarded: false,
            };
        }
        Original {
            method: get(headers, "x-forwarded-method")
                .unwrap_or(method)
                .to_ascii_uppercase(),
            proto: get(headers, "x-forwarded-proto")
                .unwrap_or("http")
                .to_ascii_lowercase(),
            host: get(headers, "x-forwarded-host").map_or(own_host, str::to_owned),
            uri: get(headers, "x-forwarded-uri").unwrap_or(uri).to_owned(),
            client: client(headers, peer, trusted),
            forwarded: true,
        }
    }

    /// The absolute URL asked for.
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.proto, self.host, self.uri)
    }

    /// The request as its signature covered it: the original URL, its
    /// headers (the server passes them along) with `Host` as forwarded
    /// and the forward-auth headers left out.
    pub fn message(&self, headers: &HeaderMap) -> Message {
        let mut m = Message::new(&self.method, &self.url()).header("Host", &self.host);
        for (name, value) in headers {
            let n = name.as_str();
            if n == "host" || n.starts_with("x-forwarded-") {
                continue;
            }
            if let Ok(v) = value.to_str() {
                m = m.header(n, v);
            }
        }
        m
    }
}

/// The client: the rightmost `X-Forwarded-For` address that is not a
/// trusted proxy (addresses a client wrote itself, further left, are not
/// believed); the peer when there is none.
fn client(headers: &HeaderMap, peer: IpAddr, trusted: &IpRanges) -> Option<IpAddr> {
    let mut chain: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| parse_addr(a.trim()))
        .collect();
    chain.push(peer);
    chain
        .iter()
        .rev()
        .find(|a| !trusted.contains(**a))
        .or(chain.first())
        .copied()
}

/// An address as proxies write it: bare, `[v6]`, `v4:port` or `[v6]:port`.
fn parse_addr(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    s.rsplit_once(':')?.0.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(*n, v.parse().expect("value"));
        }
        h
    }

    #[test]
    fn forwarded_headers_are_believed_only_from_trusted_peers() {
        let trusted = IpRanges::from_cidrs(&["127.0.0.0/8"]).expect("cidr");
        let h = headers(&[
            ("host", "127.0.0.1:9000"),
            ("x-forwarded-method", "get"),
            ("x-forwarded-proto", "HTTPS"),
            ("x-forwarded-host", "www.example"),
            ("x-forwarded-uri", "/a?b=1"),
            ("x-forwarded-for", "203.0.113.1, 198.51.100.2"),
        ]);
        let o = Original::read("GET", "/", &h, "127.0.0.1".parse().expect("ip"), &trusted);
        assert_eq!(o.url(), "https://www.example/a?b=1");
        assert_eq!(o.method, "GET");
        assert_eq!(
            o.client,
            "198.51.100.2".parse().ok(),
            "the rightmost untrusted address"
        );
        let o = Original::read("GET", "/x", &h, "192.0.2.9".parse().expect("ip"), &trusted);
        assert_eq!(
            (o.url().as_str(), o.client, o.forwarded),
            ("http://127.0.0.1:9000/x", "192.0.2.9".parse().ok(), false)
        );
        let m =
            Original::read("GET", "/", &h, "127.0.0.1".parse().expect("ip"), &trusted).message(&h);
        assert_eq!(m.field("host").as_deref(), Some("www.example"));
        assert_eq!(m.field("x-forwarded-for"), None);
    }

    #[test]
    fn addresses_as_proxies_write_them() {
        assert_eq!(parse_addr("192.0.2.1:5000"), "192.0.2.1".parse().ok());
        assert_eq!(parse_addr("[2001:db8::1]:80"), "2001:db8::1".parse().ok());
        assert_eq!(parse_addr("2001:db8::1"), "2001:db8::1".parse().ok());
        assert_eq!(parse_addr("unknown"), None);
    }
}
