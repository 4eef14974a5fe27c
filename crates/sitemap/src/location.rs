//! The sitemaps.org location rule: a sitemap may only list URLs under its
//! own scheme, host, port and directory, unless a host's robots.txt named
//! the sitemap (cross-submission), which lets it list URLs of that host.

use url::Url;

/// Which URLs a sitemap may list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationRule {
    scheme: String,
    host: String,
    port: Option<u16>,
    /// The sitemap's directory, ending in `/`.
    dir: String,
    /// (scheme, host, port) of origins whose robots.txt named the sitemap.
    cross: Vec<(String, String, Option<u16>)>,
}

fn key(u: &Url) -> (String, String, Option<u16>) {
    (
        u.scheme().to_owned(),
        u.host_str().unwrap_or("").to_ascii_lowercase(),
        u.port_or_known_default(),
    )
}

impl LocationRule {
    /// The rule for a sitemap at `sitemap_url` (its final URL after
    /// redirects).
    pub fn new(sitemap_url: &Url) -> LocationRule {
        let (scheme, host, port) = key(sitemap_url);
        let path = sitemap_url.path();
        let dir = path[..path.rfind('/').map_or(0, |i| i + 1)].to_owned();
        LocationRule {
            scheme,
            host,
            port,
            dir: if dir.is_empty() { "/".into() } else { dir },
            cross: Vec::new(),
        }
    }

    /// Also allow every URL of the origin of `robots_url`, whose robots.txt
    /// named this sitemap.
    pub fn cross_submitted_by(mut self, robots_url: &Url) -> LocationRule {
        self.cross.push(key(robots_url));
        self
    }

    /// Whether `url` may be listed.
    pub fn allows(&self, url: &Url) -> bool {
        let k = key(url);
        if self.cross.contains(&k) {
            return true;
        }
        k.0 == self.scheme
            && k.1 == self.host
            && k.2 == self.port
            && url.path().starts_with(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    #[test]
    fn directory_scheme_host_port() {
        let r = LocationRule::new(&u("http://example.com/catalog/sitemap.xml"));
        assert!(r.allows(&u("http://example.com/catalog/show?item=23")));
        assert!(r.allows(&u("http://EXAMPLE.com:80/catalog/a")));
        assert!(!r.allows(&u("http://example.com/images/a")));
        assert!(!r.allows(&u("https://example.com/catalog/a")));
        assert!(!r.allows(&u("http://example.com:8080/catalog/a")));
        assert!(!r.allows(&u("http://www.example.com/catalog/a")));
        let root = LocationRule::new(&u("http://example.com/sitemap.xml"));
        assert!(root.allows(&u("http://example.com/anything/at/all")));
    }

    #[test]
    fn cross_submission() {
        let r = LocationRule::new(&u("http://sitemaps.example.net/a/s.xml"))
            .cross_submitted_by(&u("http://www.example.com/robots.txt"));
        assert!(r.allows(&u("http://www.example.com/page")));
        assert!(!r.allows(&u("http://other.example.com/page")));
    }
}
