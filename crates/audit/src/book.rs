//! robots.txt as it was: the versions of each host's file, each from the
//! instant it came into force, so a request is judged against the file in
//! force when it was made.

use std::collections::HashMap;

use mannerly_robots::Robots;
use sha2::Digest;

/// One version of a robots.txt file.
#[derive(Debug)]
pub struct Version {
    /// When it came into force, in Unix milliseconds (`None`: always).
    pub since: Option<i64>,
    /// Where it came from (a file name), for the report.
    pub source: String,
    /// The file.
    pub robots: Robots,
    /// Hex SHA-256 of its bytes, to check a crawler's evidence by.
    pub sha256: String,
}

/// The robots.txt versions of every host.
#[derive(Debug, Default)]
pub struct RobotsBook {
    /// Versions for every host without its own, by `since`.
    any: Vec<Version>,
    /// Versions per host (lower-case), by `since`, with the host's slot.
    hosts: HashMap<String, (u32, Vec<Version>)>,
    count: usize,
}

/// A version's identity within a book: the host's slot (0 for every
/// host) and the version's place.
pub type VersionId = (u32, u32);

impl RobotsBook {
    /// An empty book: nothing is judged against robots.txt.
    pub fn new() -> RobotsBook {
        RobotsBook::default()
    }

    /// Adds a version for `host` (`None`: every host without its own),
    /// named as log lines name hosts ([`mannerly_logs::host_key`]:
    /// `[::1]:8080` is `::1`).
    pub fn add(&mut self, host: Option<&str>, since: Option<i64>, source: String, body: &[u8]) {
        let version = Version {
            since,
            source,
            robots: Robots::parse(body),
            sha256: mannerly_evidence::chain::hex(&sha2::Sha256::digest(body)),
        };
        let slots = self.hosts.len() as u32 + 1;
        let list = match host {
            Some(h) => {
                &mut self
                    .hosts
                    .entry(mannerly_logs::host_key(h).map_or_else(String::new, |k| k.into_owned()))
                    .or_insert_with(|| (slots, Vec::new()))
                    .1
            }
            None => &mut self.any,
        };
        list.push(version);
        list.sort_by_key(|v| v.since.unwrap_or(i64::MIN));
        self.count += 1;
    }

    /// Whether the book holds any file.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The version in force for `host` at `millis`, with an id unique in
    /// this book; `None` when no version was in force.
    pub fn at(&self, host: &str, millis: i64) -> Option<(VersionId, &Version)> {
        let (slot, list) = match self.hosts.get(host) {
            Some((slot, l)) => (*slot, l),
            None => (0, &self.any),
        };
        let n = list.partition_point(|v| v.since.unwrap_or(i64::MIN) <= millis);
        let i = n.checked_sub(1)?;
        Some(((slot, i as u32), &list[i]))
    }

    /// Every version, with its host (`None`: every host).
    pub fn versions(&self) -> impl Iterator<Item = (Option<&str>, &Version)> {
        self.any.iter().map(|v| (None, v)).chain(
            self.hosts
                .iter()
                .flat_map(|(h, (_, l))| l.iter().map(move |v| (Some(h.as_str()), v))),
        )
    }
}
/// Why a history directory could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// A directory or file could not be read.
    #[error("cannot read '{}': {source}", path.display())]
    Read {
        /// It.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl RobotsBook {
    /// Adds the versions of a history directory: each file named by the
    /// instant it came into force (`2026-03-01T01:00:00Z.txt`) is a
    /// version for every host; each subdirectory holds one host's
    /// versions, named after the host. Returns the files skipped because
    /// their names are not instants.
    pub fn add_history_dir(
        &mut self,
        dir: &std::path::Path,
    ) -> Result<Vec<std::path::PathBuf>, HistoryError> {
        let mut skipped = Vec::new();
        self.add_history(dir, None, &mut skipped)?;
        Ok(skipped)
    }

    fn add_history(
        &mut self,
        dir: &std::path::Path,
        host: Option<&str>,
        skipped: &mut Vec<std::path::PathBuf>,
    ) -> Result<(), HistoryError> {
        fn read(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> HistoryError + '_ {
            move |source| HistoryError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
        let mut paths = std::fs::read_dir(dir)
            .map_err(read(dir))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(read(dir))?;
        paths.sort();
        for path in paths {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            if path.is_dir() && host.is_none() {
                self.add_history(&path, Some(&name), skipped)?;
                continue;
            }
            let stem = name.strip_suffix(".txt").unwrap_or(&name);
            let Some(since) = mannerly_logs::parse_rfc3339(stem) else {
                skipped.push(path);
                continue;
            };
            let body = std::fs::read(&path).map_err(read(&path))?;
            self.add(host, Some(since.millis), path.display().to_string(), &body);
        }
        Ok(())
    }
}
