//! What a crawl keeps of every page it fetched, so that a later crawl can
//! revisit it cheaply: the validators the server sent (ETag,
//! Last-Modified), the payload's digest, the WARC record that holds the
//! payload, and each visit (when, and whether the page had changed). One
//! JSON line per fetch in `pages.jsonl`; the last line of a URL wins.
//!
//! A recrawl ([`Prior`]) sends each page it knows conditionally
//! (`If-None-Match`, `If-Modified-Since`), and a response is then
//! [`Revisit::NotModified`] (304), [`Revisit::Unchanged`] (a 200 with the
//! same payload digest: the server ignored the validators),
//! [`Revisit::Changed`] or [`Revisit::New`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader};

use crate::dir::CrawlDir;
use crate::error::CrawlError;

/// The WARC record that holds a page's payload.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredRecord {
    /// Its `WARC-Record-ID`.
    pub id: String,
    /// Its `WARC-Date`.
    pub date: String,
    /// Its `WARC-Target-URI`.
    pub uri: String,
}

/// What a crawl knows of one page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageState {
    /// The URL.
    pub url: String,
    /// When it was last fetched (Unix milliseconds).
    pub fetched: u64,
    /// The status of that fetch (304 for a page that had not changed).
    pub status: u16,
    /// The ETag the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The Last-Modified the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// The `WARC-Payload-Digest` of the payload stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The record that holds the payload (a revisit names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<StoredRecord>,
    /// The lastmod its sitemap gave when it was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lastmod: Option<String>,
    /// Each visit: when (Unix milliseconds), and whether the page had
    /// changed since the visit before (the first visit counts as changed).
    #[serde(default)]
    pub visits: Vec<(u64, bool)>,
    /// The caching headers of its last response (`Cache-Control`,
    /// `Expires`, `Date`, `Age`), for HTTP caching on a recrawl.
    #[serde(default, skip_serializing_if = "Caching::is_empty")]
    pub caching: Caching,
}

/// A response's caching headers, as it sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Caching {
    /// `Cache-Control`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<String>,
    /// `Expires`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// `Date`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `Age`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
}

impl Caching {
    fn is_empty(&self) -> bool {
        *self == Caching::default()
    }

    /// The headers as [`freshness::reuse`](mannerly_fetch::freshness::reuse) reads them.
    pub fn stored(&self) -> mannerly_fetch::freshness::Stored<'_> {
        mannerly_fetch::freshness::Stored {
            cache_control: self.cache_control.as_deref(),
            expires: self.expires.as_deref(),
            date: self.date.as_deref(),
            age: self.age.as_deref(),
        }
    }
}

/// How a response compares with what an earlier crawl kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revisit {
    /// 304: the server says it has not changed.
    NotModified,
    /// A 200 whose payload is the one stored before.
    Unchanged,
    /// A 200 with another payload.
    Changed,
    /// A page the earlier crawl did not have.
    New,
}

impl Revisit {
    /// Compares a response (`status`, payload `digest`) with the page's
    /// earlier state; `None` for a response that is no page (an error, a
    /// redirect) or a 304 with nothing stored to refer to.
    pub fn of(prior: Option<&PageState>, status: u16, digest: &str) -> Option<Revisit> {
        let stored = prior.filter(|p| p.record.is_some() && p.digest.is_some());
        match (status, stored) {
            (304, Some(_)) => Some(Revisit::NotModified),
            (200..=299, Some(p)) if p.digest.as_deref() == Some(digest) => Some(Revisit::Unchanged),
            (200..=299, Some(_)) => Some(Revisit::Changed),
            (200..=299, None) => Some(Revisit::New),
            _ => None,
        }
    }
}

/// The conditional headers to send for a page known before.
pub fn conditional(prior: &PageState) -> Vec<(&'static str, String)> {
    let mut h = Vec::new();
    // `no-store`: nothing was to be kept, so nothing is validated against.
    let now = mannerly_time::UnixMillis(prior.fetched);
    if mannerly_fetch::freshness::reuse(prior.caching.stored(), now, now)
        == mannerly_fetch::freshness::Reuse::Refetch
    {
        return h;
    }
    if let Some(tag) = &prior.etag {
        h.push(("If-None-Match", tag.clone()));
    }
    if let Some(date) = &prior.last_modified {
        h.push(("If-Modified-Since", date.clone()));
    }
    h
}

/// The pages an earlier crawl fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prior {
    pages: HashMap<String, PageState>,
    trust: crate::lastmod::Trust,
}

impl Prior {
    /// Reads a crawl directory's `pages.jsonl` (a line a kill cut short
    /// is left out).
    pub fn load(dir: &CrawlDir) -> Result<Prior, CrawlError> {
        let path = dir.pages();
        let io = |source| CrawlError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(io)?;
        let mut pages = HashMap::new();
        for line in BufReader::new(file).lines() {
            let line = line.map_err(io)?;
            if let Ok(state) = serde_json::from_str::<PageState>(&line) {
                pages.insert(state.url.clone(), state);
            }
        }
        Ok(Prior {
            pages,
            trust: crate::lastmod::Trust::load(dir),
        })
    }

    /// Reads several crawl directories (a fleet's workers') into one: for
    /// a page fetched in more than one, the latest fetch; for a host's
    /// lastmod record, see [`Trust::merge`](crate::lastmod::Trust::merge).
    pub fn load_all(dirs: &[CrawlDir]) -> Result<Prior, CrawlError> {
        let mut all = Prior::default();
        for dir in dirs {
            let one = Prior::load(dir)?;
            for (url, page) in one.pages {
                match all.pages.get(&url) {
                    Some(known) if known.fetched >= page.fetched => {}
                    _ => {
                        all.pages.insert(url, page);
                    }
                }
            }
            all.trust.merge(one.trust);
        }
        all.fill_lastmods(dirs);
        Ok(all)
    }

    /// Gives a page kept without its sitemap lastmod the one its crawl's
    /// logs recorded: a fleet's worker fetches pages whose sitemap another
    /// worker read, and a crawl resumed after a kill has forgotten what
    /// its sitemaps said.
    fn fill_lastmods(&mut self, dirs: &[CrawlDir]) {
        if self.pages.values().all(|p| p.lastmod.is_some()) {
            return;
        }
        for dir in dirs {
            for (url, lastmod) in crate::lastmod::logged(&dir.log()) {
                if let Some(p) = self.pages.get_mut(&url) {
                    if p.lastmod.is_none() {
                        p.lastmod = Some(lastmod);
                    }
                }
            }
        }
    }

    /// What its hosts' sitemap lastmod had shown.
    pub fn trust(&self) -> &crate::lastmod::Trust {
        &self.trust
    }

    /// A page's state.
    pub fn get(&self, url: &str) -> Option<&PageState> {
        self.pages.get(url)
    }

    /// Every page known, in no order.
    pub fn pages(&self) -> impl Iterator<Item = &PageState> {
        self.pages.values()
    }

    /// How many pages it knows.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether it knows none.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(digest: &str) -> PageState {
        PageState {
            url: "http://a.test/".into(),
            fetched: 1,
            status: 200,
            etag: Some("\"x\"".into()),
            last_modified: None,
            digest: Some(digest.into()),
            record: Some(StoredRecord {
                id: "<urn:uuid:1>".into(),
                date: "2026-01-01T00:00:00Z".into(),
                uri: "http://a.test/".into(),
            }),
            lastmod: None,
            visits: vec![(1, true)],
            caching: Caching::default(),
        }
    }

    #[test]
    fn several_directories_read_as_one_with_the_latest_fetch_of_each_page() {
        let root = tempfile::tempdir().expect("tmp");
        let write = |name: &str, lines: &[PageState], trust: &str| {
            let dir = CrawlDir::new(root.path().join(name));
            std::fs::create_dir_all(dir.root()).expect("dir");
            let text: String = lines
                .iter()
                .map(|p| serde_json::to_string(p).expect("json") + "\n")
                .collect();
            std::fs::write(dir.pages(), text).expect("pages");
            std::fs::write(dir.lastmod(), trust).expect("lastmod");
            dir
        };
        let (mut old, mut new, mut other) = (state("sha1:OLD"), state("sha1:NEW"), state("sha1:X"));
        new.fetched = 5;
        other.url = "http://b.test/".into();
        old.fetched = 2;
        let a = write(
            "a",
            &[new.clone()],
            r#"{"a.test": {"checks": 9, "lies": 3}}"#,
        );
        let b = write(
            "b",
            &[old, other.clone()],
            r#"{"a.test": {"checks": 4, "lies": 0}, "b.test": {"checks": 2, "lies": 2}}"#,
        );
        let all = Prior::load_all(&[b, a]).expect("load");
        assert_eq!(all.len(), 2);
        assert_eq!(
            all.get("http://a.test/"),
            Some(&new),
            "the later fetch wins"
        );
        assert_eq!(all.get("http://b.test/"), Some(&other));
        // Per host, the record of the worker that checked more.
        assert_eq!(all.trust().host("a.test").checks, 9);
        assert_eq!(all.trust().host("b.test").lies, 2);
    }

    #[test]
    fn responses_against_what_was_kept() {
        let p = state("sha1:AAA");
        assert_eq!(Revisit::of(Some(&p), 304, ""), Some(Revisit::NotModified));
        assert_eq!(
            Revisit::of(Some(&p), 200, "sha1:AAA"),
            Some(Revisit::Unchanged)
        );
        assert_eq!(
            Revisit::of(Some(&p), 200, "sha1:BBB"),
            Some(Revisit::Changed)
        );
        assert_eq!(Revisit::of(None, 200, "sha1:BBB"), Some(Revisit::New));
        assert_eq!(Revisit::of(None, 304, ""), None);
        assert_eq!(Revisit::of(Some(&p), 503, ""), None);
        assert_eq!(conditional(&p), vec![("If-None-Match", "\"x\"".to_owned())]);
    }
}
