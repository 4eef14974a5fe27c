//! The keys each Web Bot Auth directory served, with when they were seen,
//! kept between audits (`key-history.json` in the cache), so a logged
//! request is verified with the keys its crawler's directory served at
//! the request's time: a key rotated out since still verifies the requests
//! it signed, and a key that appeared later verifies none from before.
//!
//! A key's serving time is known from the checks that saw it: from its
//! first sighting (or from always, when it was there at the directory's
//! first check) to its last (or on, while the latest check still saw it),
//! each end widened by a day, the longest a check may lag.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::Jwk;
use serde::{Deserialize, Serialize};

/// How far a key's known serving time is widened at each end (ms).
const GRACE_MS: u64 = 24 * 3600 * 1000;

/// One key as seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Seen {
    jwk: Jwk,
    first_seen: u64,
    last_seen: u64,
}

/// One directory's checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Directory {
    first_checked: u64,
    last_checked: u64,
    keys: Vec<Seen>,
}

/// Every directory's keys, with their times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyHistory {
    directories: BTreeMap<String, Directory>,
    #[serde(skip)]
    path: Option<PathBuf>,
}

impl KeyHistory {
    /// The history kept at `path` (empty when there is none, or it cannot
    /// be read: it is a cache).
    pub fn load(path: &Path) -> KeyHistory {
        let mut h: KeyHistory = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        h.path = Some(path.to_path_buf());
        h
    }

    /// Writes it back (best effort: a cache).
    pub fn save(&self) {
        let Some(path) = &self.path else { return };
        if let (Some(dir), Ok(body)) = (path.parent(), serde_json::to_vec_pretty(self)) {
            let _ = std::fs::create_dir_all(dir);
            let _ = std::fs::write(path, body);
        }
    }

    /// A check of `url` at `now` found `keys`.
    pub fn observe(&mut self, url: &str, keys: &[Jwk], now: u64) {
        let d = self.directories.entry(url.to_owned()).or_insert(Directory {
            first_checked: now,
            last_checked: now,
            keys: Vec::new(),
        });
        d.last_checked = d.last_checked.max(now);
        for jwk in keys {
            match d
                .keys
                .iter_mut()
                .find(|s| s.jwk.thumbprint() == jwk.thumbprint())
            {
                Some(s) => s.last_seen = s.last_seen.max(now),
                None => d.keys.push(Seen {
                    jwk: jwk.clone(),
                    first_seen: now,
                    last_seen: now,
                }),
            }
        }
    }

    /// The keys `url` served at `at`, as far as its checks tell.
    pub fn keys_at(&self, url: &str, at: u64) -> Vec<Jwk> {
        let Some(d) = self.directories.get(url) else {
            return Vec::new();
        };
        d.keys
            .iter()
            .filter(|s| {
                let from = if s.first_seen == d.first_checked {
                    0
                } else {
                    s.first_seen.saturating_sub(GRACE_MS)
                };
                let to = if s.last_seen == d.last_checked {
                    u64::MAX
                } else {
                    s.last_seen.saturating_add(GRACE_MS)
                };
                (from..=to).contains(&at)
            })
            .map(|s| s.jwk.clone())
            .collect()
    }

    /// Whether `url` was ever checked.
    pub fn knows(&self, url: &str) -> bool {
        self.directories.contains_key(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> Jwk {
        crate::KeyPair::from_seed([seed; 32]).public_jwk()
    }

    const DAY: u64 = 24 * 3600 * 1000;

    #[test]
    fn a_request_is_verified_with_the_keys_served_at_its_time() {
        let (a, b) = (key(1), key(2));
        let mut h = KeyHistory::default();
        let t0 = 100 * DAY;
        h.observe("https://d", std::slice::from_ref(&a), t0);
        h.observe("https://d", std::slice::from_ref(&a), t0 + 10 * DAY);
        // Rotated: b replaces a.
        h.observe("https://d", std::slice::from_ref(&b), t0 + 20 * DAY);
        let ids = |at| {
            h.keys_at("https://d", at)
                .iter()
                .map(Jwk::thumbprint)
                .collect::<Vec<_>>()
        };
        // Before the first check: what the first check found.
        assert_eq!(ids(t0 - 30 * DAY), [a.thumbprint()]);
        // a was served until its last sighting (and a day after).
        assert_eq!(ids(t0 + 11 * DAY), [a.thumbprint()]);
        // b appeared after day 10: not for a request from day 5.
        assert_eq!(ids(t0 + 5 * DAY), [a.thumbprint()]);
        // Today: b only.
        assert_eq!(ids(t0 + 30 * DAY), [b.thumbprint()]);
        assert!(h.keys_at("https://other", t0).is_empty());
    }

    #[test]
    fn it_is_kept_between_audits() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("key-history.json");
        let mut h = KeyHistory::load(&path);
        h.observe("https://d", &[key(1)], 5);
        h.save();
        let back = KeyHistory::load(&path);
        assert_eq!(back.keys_at("https://d", 5).len(), 1);
    }
}
