//! Never past a login (Crawler Best Practices: do not interfere). A
//! response that asks for credentials (a 401, a 403 with
//! `WWW-Authenticate`, a page holding a login form) stops its path prefix
//! for the rest of the crawl, and no credentials are ever sent (a URL's
//! `user:password@` is dropped when it is normalised). Sans-IO: a
//! response's facts in, prefixes out.

use std::collections::{BTreeMap, HashSet};

/// The most prefixes a crawl stops; past it, walls are still logged on
/// their page but stop nothing more (a site of endless login pages cannot
/// grow the crawler's memory).
pub const MAX_WALLS: usize = 10_000;

/// Why a response is a login wall, if it is one.
pub fn wall(status: u16, www_authenticate: bool, login_form: bool) -> Option<&'static str> {
    match status {
        401 => Some("401: it asks for credentials"),
        403 if www_authenticate => Some("403 with WWW-Authenticate: it asks for credentials"),
        200..=299 if login_form => Some("a login form (a password field)"),
        _ => None,
    }
}

/// The path prefix a wall at `url` stops: its directory
/// (`https://h/account/settings` stops `https://h/account/`), or the page
/// alone when it sits at the root (`https://h/login`), so a wall never
/// stops a whole site.
pub fn prefix_of(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let origin = &u[..url::Position::BeforePath];
    let path = u.path();
    let cut = path.rfind('/').unwrap_or(0);
    Some(if cut == 0 {
        format!("{origin}{path}")
    } else {
        format!("{origin}{}", &path[..=cut])
    })
}

/// The prefixes a crawl stopped, with why.
#[derive(Debug, Default)]
pub struct Walls {
    prefixes: HashSet<String>,
    /// Each prefix, with the reason and the URL that showed it.
    pub found: BTreeMap<String, String>,
}

impl Walls {
    /// A wall at `url` for `why`: its prefix stops from now on. Returns
    /// the prefix when it is new.
    pub fn add(&mut self, url: &str, why: &str) -> Option<String> {
        let prefix = prefix_of(url)?;
        if self.prefixes.len() >= MAX_WALLS || self.prefixes.contains(&prefix) {
            return None;
        }
        self.prefixes.insert(prefix.clone());
        self.found
            .insert(prefix.clone(), format!("{why}, at {url}"));
        Some(prefix)
    }

    /// The stopped prefix `url` is under, if any.
    pub fn stops(&self, url: &str) -> Option<&str> {
        if self.prefixes.is_empty() {
            return None;
        }
        let u = url::Url::parse(url).ok()?;
        let origin = &u[..url::Position::BeforePath];
        let path = u.path();
        let exact = format!("{origin}{path}");
        if let Some(p) = self.prefixes.get(&exact) {
            return Some(p);
        }
        path.match_indices('/')
            .skip(1)
            .find_map(|(i, _)| self.prefixes.get(&format!("{origin}{}", &path[..=i])))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_stops_its_directory_or_its_own_page_at_the_root() {
        let mut w = Walls::default();
        assert_eq!(
            w.add("https://h.test/account/settings?x=1", "401")
                .as_deref(),
            Some("https://h.test/account/")
        );
        assert_eq!(
            w.add("https://h.test/login", "form").as_deref(),
            Some("https://h.test/login")
        );
        assert!(
            w.add("https://h.test/account/other", "401").is_none(),
            "known"
        );
        assert_eq!(
            w.stops("https://h.test/account/a/b"),
            Some("https://h.test/account/")
        );
        assert_eq!(
            w.stops("https://h.test/login?next=/"),
            Some("https://h.test/login")
        );
        assert_eq!(w.stops("https://h.test/"), None, "never the whole site");
        assert_eq!(w.stops("https://h.test/accounting/"), None);
        assert_eq!(w.stops("https://h.test/login2"), None);
        assert_eq!(w.stops("https://other.test/account/x"), None);
    }

    #[test]
    fn only_a_request_for_credentials_is_a_wall() {
        assert!(wall(401, false, false).is_some());
        assert!(wall(403, true, false).is_some());
        assert!(
            wall(403, false, false).is_none(),
            "a plain 403 is a refusal, not a login"
        );
        assert!(wall(200, false, true).is_some());
        assert!(wall(404, false, true).is_none());
        assert!(wall(200, false, false).is_none());
    }
}
