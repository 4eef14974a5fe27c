//! Sitemap lastmod, believed only while it is honest.
//!
//! On a recrawl, a page whose sitemap lastmod has not moved since its last
//! fetch is not requested at all, on a host whose lastmod has not been
//! caught lying (and unless that fetch is older than the recrawl's
//! `max_age`). Every page that is fetched is also a check of the host's
//! lastmod: one whose lastmod moved but that came back unchanged, or whose
//! lastmod stood still but that came back changed, is a lie. Until a host
//! has passed [`ESTABLISHED`] checks without a lie, one page in [`SAMPLE`]
//! whose lastmod stood still is fetched anyway, so a lastmod that never
//! moves is caught too; an established host's still pages are not asked
//! for at all.
//!
//! A host is no longer believed once it has told [`MIN_LIES`] lies and
//! they are at least a quarter of its checks: a single page edited without
//! its lastmod moving (it happens on honest sites) does not condemn it;
//! a generator that stamps every page with today does. What each host
//! said is kept in `lastmod.json`, and a recrawl starts from the earlier
//! crawl's. A fleet's workers each count from the same start, which the
//! file keeps too (`start`), so their records add up: what one worker
//! checked of a host and what another checked of it count together, and
//! a host whose lies were split between workers is still caught. What a
//! sitemap said travels with the crawl too: a fleet's worker tells the
//! others (the frontier's `tell_lastmods`), a recrawl fills a page kept
//! without its lastmod from its crawl's logs, and a resumed crawl reads
//! its own log again.

use std::collections::{BTreeMap, HashMap};

use crate::dir::{read_json, write_json, CrawlDir};
use crate::error::CrawlError;

/// Lies a host may tell before its lastmod can be ignored.
pub const MIN_LIES: u64 = 2;

/// One page in this many whose lastmod stood still is fetched anyway.
pub const SAMPLE: u64 = 8;

/// Checks without a lie after which a host's lastmod is established:
/// its still pages are no longer sampled.
pub const ESTABLISHED: u64 = 16;

/// What a host's sitemap lastmod has shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostTrust {
    /// Fetches that checked it.
    pub checks: u64,
    /// Of those, the ones that showed it wrong.
    pub lies: u64,
}

impl HostTrust {
    /// Whether its lastmod may still be believed.
    pub fn trusted(self) -> bool {
        !(self.lies >= MIN_LIES && self.lies * 4 >= self.checks)
    }

    /// Counts a fetch: whether the lastmod had moved, and whether the page
    /// had changed.
    pub fn observe(&mut self, moved: bool, changed: bool) {
        self.checks += 1;
        if moved != changed {
            self.lies += 1;
        }
    }
}

/// Every host's record, by host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    hosts: BTreeMap<String, HostTrust>,
    /// The record this crawl started from (an earlier crawl's, merged);
    /// `None` when unknown (a file an older version wrote).
    start: Option<BTreeMap<String, HostTrust>>,
}

/// `lastmod.json`: the record, and the one it started from. (A file of
/// the record alone, as older crawls wrote it, reads with no start.)
#[derive(serde::Serialize, serde::Deserialize)]
struct File {
    hosts: BTreeMap<String, HostTrust>,
    #[serde(default)]
    start: Option<BTreeMap<String, HostTrust>>,
}

impl HostTrust {
    /// `self` plus what `other` counted since `start`.
    fn plus_since(self, other: HostTrust, start: HostTrust) -> HostTrust {
        HostTrust {
            checks: self.checks + other.checks.saturating_sub(start.checks),
            lies: self.lies + other.lies.saturating_sub(start.lies),
        }
    }
}

impl Trust {
    /// A crawl directory's record (none, or one that cannot be read:
    /// every host believed, as on a first crawl).
    pub fn load(dir: &CrawlDir) -> Trust {
        let value: Option<serde_json::Value> = read_json(&dir.lastmod()).ok().flatten();
        let Some(value) = value else {
            return Trust::default();
        };
        if let Ok(f) = serde_json::from_value::<File>(value.clone()) {
            return Trust {
                hosts: f.hosts,
                start: f.start,
            };
        }
        Trust {
            hosts: serde_json::from_value(value).unwrap_or_default(),
            start: None,
        }
    }

    /// Writes the record into a crawl directory.
    pub fn save(&self, dir: &CrawlDir) -> Result<(), CrawlError> {
        let file = File {
            hosts: self.hosts.clone(),
            start: self.start.clone(),
        };
        write_json(&dir.lastmod(), &file)
    }

    /// The record a new crawl starts from: this one, remembered as its
    /// start so that fleet workers' records add up.
    pub fn start_of_a_crawl(&self) -> Trust {
        Trust {
            hosts: self.hosts.clone(),
            start: Some(self.hosts.clone()),
        }
    }

    /// A host's record.
    pub fn host(&self, host: &str) -> HostTrust {
        self.hosts.get(host).copied().unwrap_or_default()
    }

    /// A host's record, to count in.
    pub fn host_mut(&mut self, host: &str) -> &mut HostTrust {
        self.hosts.entry(host.to_owned()).or_default()
    }

    /// Takes in another crawl's record (a fleet worker's). Workers that
    /// started from the same record add up: each one's checks since that
    /// start count once. Records of different starts (crawls that were not
    /// one fleet's) cannot be added without counting a start twice: per
    /// host, the one with more checks is kept.
    pub fn merge(&mut self, other: Trust) {
        if self.hosts.is_empty() && self.start.is_none() {
            *self = other;
            return;
        }
        let same_start = self.start.is_some() && self.start == other.start;
        for (host, t) in other.hosts {
            let mine = self.hosts.entry(host.clone()).or_default();
            if same_start {
                let start = self
                    .start
                    .as_ref()
                    .and_then(|s| s.get(&host).copied())
                    .unwrap_or_default();
                *mine = mine.plus_since(t, start);
            } else if t.checks > mine.checks {
                *mine = t;
            }
        }
        if !same_start {
            self.start = None;
        }
    }

    /// The hosts whose lastmod is no longer believed.
    pub fn untrusted(&self) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|(_, t)| !t.trusted())
            .map(|(h, _)| h.clone())
            .collect()
    }
}

/// Whether a page may be left unrequested: its sitemap lastmod (`now`) is
/// the one seen at its last fetch (`before`), its host is believed, that
/// fetch is younger than `max_age_ms`, and it is not one of the sample.
pub fn skip(
    before: Option<&str>,
    now: Option<&str>,
    trust: HostTrust,
    fetched_ago_ms: u64,
    max_age_ms: u64,
    url: &str,
) -> bool {
    let stood_still = matches!((before, now), (Some(b), Some(n)) if b == n);
    let established = trust.lies == 0 && trust.checks >= ESTABLISHED;
    stood_still && trust.trusted() && fetched_ago_ms < max_age_ms && (established || !sampled(url))
}

/// One URL in [`SAMPLE`], the same ones every time.
fn sampled(url: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in url.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h.is_multiple_of(SAMPLE)
}

/// What the sitemaps a crawl read said of each URL (from its log's
/// `sitemap-entry` lines; the last one of a URL wins).
pub(crate) fn logged(log: &std::path::Path) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Ok(file) = std::fs::File::open(log) else {
        return out;
    };
    use std::io::BufRead;
    for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
        if !line.contains("\"sitemap-entry\"") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if let (Some(url), Some(lastmod)) = (v["url"].as_str(), v["lastmod"].as_str()) {
            out.insert(url.to_owned(), lastmod.to_owned());
        }
    }
    out
}

/// The sitemap lastmods this worker knows in this crawl, per URL: those
/// of the sitemaps it read, and those a fleet's other workers told of the
/// pages it released.
#[derive(Debug, Default)]
pub(crate) struct Lastmods {
    known: HashMap<String, String>,
    /// Read here and not yet told to the crawl's other workers.
    untold: Vec<(String, String)>,
}

impl Lastmods {
    /// What the sitemaps a crawl read said, from its log (nothing for a
    /// new crawl).
    pub(crate) fn logged(log: &std::path::Path) -> Lastmods {
        Lastmods {
            known: logged(log),
            untold: Vec::new(),
        }
    }

    /// What a sitemap this worker read said of `url`.
    pub(crate) fn read(&mut self, url: String, lastmod: String) {
        self.untold.push((url.clone(), lastmod.clone()));
        self.known.insert(url, lastmod);
    }

    /// What another worker's sitemap said of `url`.
    pub(crate) fn learn(&mut self, url: String, lastmod: String) {
        self.known.insert(url, lastmod);
    }

    /// `url`'s lastmod, if a sitemap gave one.
    pub(crate) fn get(&self, url: &str) -> Option<&str> {
        self.known.get(url).map(String::as_str)
    }

    /// Whether `url`'s lastmod is known here.
    pub(crate) fn knows(&self, url: &str) -> bool {
        self.known.contains_key(url)
    }

    /// What was read since the last call, to tell the other workers.
    pub(crate) fn take_untold(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.untold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lies_past_a_quarter_end_the_trust() {
        let mut t = HostTrust::default();
        t.observe(true, true);
        t.observe(false, false);
        t.observe(true, false);
        assert!(t.trusted(), "one lie is not enough");
        t.observe(true, false);
        assert!(!t.trusted(), "{t:?}");
        let mut honest = HostTrust::default();
        for _ in 0..20 {
            honest.observe(false, false);
        }
        honest.observe(false, true);
        honest.observe(false, true);
        assert!(honest.trusted(), "two slips among many checks: {honest:?}");
    }

    #[test]
    fn fleet_workers_that_started_alike_add_up() {
        let start = Trust {
            hosts: [("liar.test".to_owned(), HostTrust { checks: 8, lies: 1 })].into(),
            start: None,
        }
        .start_of_a_crawl();
        // Each worker caught the liar once more, and checked an honest
        // host 10 times.
        let worker = || {
            let mut w = start.clone();
            w.host_mut("liar.test").observe(true, false);
            for _ in 0..10 {
                w.host_mut("honest.test").observe(false, false);
            }
            w
        };
        let mut all = Trust::default();
        all.merge(worker());
        assert!(all.host("liar.test").trusted(), "one worker's count alone");
        all.merge(worker());
        assert_eq!(
            all.host("liar.test"),
            HostTrust {
                checks: 10,
                lies: 3
            }
        );
        assert!(!all.host("liar.test").trusted(), "caught across the fleet");
        assert_eq!(
            all.host("honest.test").checks,
            20,
            "established: {:?}",
            all.host("honest.test")
        );
        assert_eq!(all.untrusted(), ["liar.test"]);
        // Saved and read back, the start goes with the record.
        let dir = tempfile::tempdir().expect("tmp");
        let d = CrawlDir::new(dir.path());
        worker().save(&d).expect("save");
        assert_eq!(Trust::load(&d), worker());
        std::fs::write(d.lastmod(), r#"{"a.test": {"checks": 2, "lies": 0}}"#).expect("old file");
        assert_eq!(
            Trust::load(&d).host("a.test").checks,
            2,
            "an older crawl's file"
        );
    }

    #[test]
    fn what_is_skipped() {
        let t = HostTrust::default();
        let day = 86_400_000;
        let urls: Vec<String> = (0..100).map(|i| format!("http://a.test/p{i}")).collect();
        let skipped = urls
            .iter()
            .filter(|u| skip(Some("2026-01-01"), Some("2026-01-01"), t, day, 30 * day, u))
            .count();
        assert!(
            (80..100).contains(&skipped),
            "about one in {SAMPLE} sampled: {skipped}"
        );
        assert!(!skip(
            Some("2026-01-01"),
            Some("2026-02-01"),
            t,
            day,
            30 * day,
            "http://a.test/x"
        ));
        assert!(!skip(
            None,
            Some("2026-01-01"),
            t,
            day,
            30 * day,
            "http://a.test/x"
        ));
        assert!(!skip(
            Some("a"),
            Some("a"),
            t,
            31 * day,
            30 * day,
            "http://a.test/x1"
        ));
    }
}
