//! A crawl's directory: every path in it named once ([`CrawlDir`]), and
//! the one file other programs read while a crawl runs, `status.json`
//! ([`Status`]), as a type both the crawler and its readers use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::CrawlError;
use crate::summary::Ending;

/// The directory a crawl keeps everything in. Every file and folder of it
/// is named here and nowhere else:
///
/// | path | what |
/// |---|---|
/// | `frontier/` | the embedded frontier's store (fjall) |
/// | `robots/` | robots.txt states (fjall), so a resume neither refetches nor forgets |
/// | `warc/` | the WARC files |
/// | `evidence/` | the crawl's evidence: every request's record, checkpoints (`mannerly-evidence`) |
/// | `log.jsonl` | one JSON line per URL handled |
/// | `pages.jsonl` | each page's validators, digest and record, for a recrawl |
/// | `crawl.json` | seeds and scope, for `--resume` |
/// | `status.json` | [`Status`], for `mannerly crawl --status` |
/// | `status.json.tmp` | the status before, while the crawl runs ([`CrawlDir::write_status`]) |
/// | `recrawl.json` | a recrawl's earlier crawl, for `--resume` |
/// | `lastmod.json` | how honest each host's sitemap lastmod has been |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlDir {
    root: PathBuf,
}

impl CrawlDir {
    /// The crawl directory at `root` (nothing is created or read).
    pub fn new(root: impl Into<PathBuf>) -> CrawlDir {
        CrawlDir { root: root.into() }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The embedded frontier's store.
    pub fn frontier(&self) -> PathBuf {
        self.root.join("frontier")
    }

    /// The robots.txt states.
    pub fn robots(&self) -> PathBuf {
        self.root.join("robots")
    }

    /// The WARC files.
    pub fn warc(&self) -> PathBuf {
        self.root.join("warc")
    }

    /// The crawl's evidence (see `mannerly-evidence` for its files).
    pub fn evidence(&self) -> PathBuf {
        self.root.join("evidence")
    }

    /// `log.jsonl`.
    pub fn log(&self) -> PathBuf {
        self.root.join("log.jsonl")
    }

    /// `pages.jsonl`: what a recrawl needs of each page.
    pub fn pages(&self) -> PathBuf {
        self.root.join("pages.jsonl")
    }

    /// `crawl.json`: the crawl's settings.
    pub fn settings(&self) -> PathBuf {
        self.root.join("crawl.json")
    }

    /// `status.json`.
    pub fn status(&self) -> PathBuf {
        self.root.join("status.json")
    }

    /// `recrawl.json`: the earlier crawl a recrawl revisits.
    pub fn recrawl(&self) -> PathBuf {
        self.root.join("recrawl.json")
    }

    /// `lastmod.json`: each host's sitemap lastmod record.
    pub fn lastmod(&self) -> PathBuf {
        self.root.join("lastmod.json")
    }

    /// Whether an embedded crawl is here to resume (its frontier store).
    pub fn has_frontier(&self) -> bool {
        self.frontier().exists()
    }

    /// Creates the directory (and its parents) if missing.
    pub fn create(&self) -> Result<(), CrawlError> {
        std::fs::create_dir_all(&self.root).map_err(|source| CrawlError::Io {
            path: self.root.clone(),
            source,
        })
    }

    /// What the crawl last wrote of itself; `Ok(None)` when it wrote
    /// nothing yet.
    pub fn read_status(&self) -> Result<Option<Status>, CrawlError> {
        read_json(&self.status())
    }

    /// Replaces `status.json` whole. While the crawl runs
    /// (`status.running`), the new one is written over `status.json.tmp`
    /// and the two files swap names in one step, so `status.json.tmp` then
    /// holds the one before; the last status (`running` false) is renamed
    /// over, leaving no `.tmp` behind. A reader that reads the file as it
    /// opens it never sees half of one; one that holds it open for over
    /// half a second may see the next-but-one status written into it.
    ///
    /// Why the swap: a new file renamed over the old one cost about 0.3 ms
    /// of the kernel's time at each of the two writes a second (a new inode
    /// each time, and ext4 writes a file renamed over another out at once),
    /// some 5 % of a 300-host crawl's CPU. Where the swap is not supported
    /// (not Linux, or a file system without it), every write renames.
    pub fn write_status(&self, status: &Status) -> Result<(), CrawlError> {
        if status.running {
            swap_json(&self.status(), status)
        } else {
            write_json(&self.status(), status)
        }
    }
}

/// A JSON file this crate wrote: `Ok(None)` when it is not there.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Option<T>, CrawlError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CrawlError::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| CrawlError::Json {
            path: path.to_owned(),
            source,
        })
}

/// `path` with `.tmp` after its name: where a replacement is written.
fn tmp_beside(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    PathBuf::from(tmp)
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CrawlError {
    let path = path.to_owned();
    move |source| CrawlError::Io { path, source }
}

fn json_bytes<T: serde::Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, CrawlError> {
    serde_json::to_vec_pretty(value).map_err(|source| CrawlError::Json {
        path: path.to_owned(),
        source,
    })
}

/// Writes `value` to `path` as JSON, through a file beside it renamed
/// over it.
pub(crate) fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), CrawlError> {
    let tmp = tmp_beside(path);
    std::fs::write(&tmp, json_bytes(path, value)?).map_err(io_error(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_error(path))
}

/// Writes `value` to `path` as JSON: over the file beside it (reused, not
/// made anew), which then swaps names with `path` in one step. Falls back
/// to [`write_json`] when there is nothing to swap with yet, or the swap is
/// not supported.
fn swap_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), CrawlError> {
    #[cfg(target_os = "linux")]
    {
        use std::io::Write;
        let tmp = tmp_beside(path);
        let bytes = json_bytes(path, value)?;
        // Not truncated on open: ext4 writes out at once a file cut to
        // nothing and written again, as it does one renamed over another.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&tmp)
            .map_err(io_error(&tmp))?;
        file.write_all(&bytes).map_err(io_error(&tmp))?;
        file.set_len(bytes.len() as u64).map_err(io_error(&tmp))?;
        drop(file);
        let cwd = rustix::fs::CWD;
        match rustix::fs::renameat_with(cwd, &tmp, cwd, path, rustix::fs::RenameFlags::EXCHANGE) {
            Ok(()) => Ok(()),
            // No `path` yet, or no swap here: rename what was just written.
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                std::fs::rename(&tmp, path).map_err(io_error(path))
            }
            Err(e) => Err(io_error(path)(e.into())),
        }
    }
    #[cfg(not(target_os = "linux"))]
    write_json(path, value)
}

/// `status.json`: what a crawl says of itself, rewritten twice a second
/// while it runs and once at its end.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Status {
    /// The crawler's process id.
    pub pid: u32,
    /// When this was written (RFC 3339, UTC).
    pub updated: String,
    /// Whether the crawl was running then (a crawl killed leaves `true`).
    pub running: bool,
    /// How it ended, once it has.
    pub ending: Option<Ending>,
    /// Pages fetched by the whole crawl (every run of it).
    pub pages: u64,
    /// Pages fetched by this run (since it was last started or resumed;
    /// absent in files written before it was kept).
    #[serde(default)]
    pub pages_this_run: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests in flight.
    pub in_flight: usize,
    /// URLs queued.
    pub queued: u64,
    /// Page fetches that got no response.
    pub errors: u64,
    /// Retries scheduled.
    pub retries: u64,
    /// Seconds the crawl has run.
    pub seconds: f64,
    /// Page responses by status.
    pub pages_by_status: BTreeMap<u16, u64>,
    /// URLs not fetched, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Origins whose robots.txt is unavailable, with why.
    pub robots_unavailable: BTreeMap<String, String>,
    /// URLs left queued when the crawl gave up, by what held them.
    pub deferred_by_reason: BTreeMap<String, u64>,
    /// The hosts holding the most queued URLs.
    pub busiest: Vec<BusyHost>,
}

/// A host holding many queued URLs, and why it waits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BusyHost {
    /// The politeness key (a host).
    pub host: String,
    /// URLs queued for it.
    pub queued: u64,
    /// Why its next URL may not be fetched now (`None`: it may).
    pub waiting: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a_status() -> Status {
        Status {
            pid: 7,
            updated: "2026-11-27T10:00:00.000Z".into(),
            running: false,
            ending: Some(Ending::MaxPages),
            pages: 3,
            pages_this_run: 2,
            bytes: 2048,
            in_flight: 0,
            queued: 1,
            errors: 0,
            retries: 2,
            seconds: 1.5,
            pages_by_status: [(200, 2), (404, 1)].into(),
            skipped: [("disallowed".to_owned(), 4)].into(),
            robots_unavailable: BTreeMap::new(),
            deferred_by_reason: BTreeMap::new(),
            busiest: vec![BusyHost {
                host: "a.test".into(),
                queued: 1,
                waiting: Some("a delay of 1 s".into()),
            }],
        }
    }

    #[test]
    fn status_round_trips_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let crawl = CrawlDir::new(dir.path());
        assert_eq!(crawl.read_status().expect("read"), None);
        let status = a_status();
        crawl.write_status(&status).expect("write");
        assert_eq!(crawl.read_status().expect("read"), Some(status));
        assert!(!dir.path().join("status.json.tmp").exists());
    }

    /// A running crawl's statuses swap places with the spare file, which a
    /// kill may have left longer than the next one; the last status takes
    /// the spare away.
    #[test]
    fn a_running_crawls_status_is_swapped_in_and_the_last_leaves_no_spare() {
        let dir = tempfile::tempdir().expect("tempdir");
        let crawl = CrawlDir::new(dir.path());
        let spare = dir.path().join("status.json.tmp");
        std::fs::write(&spare, "x".repeat(100_000)).expect("a killed run's spare");
        let mut status = a_status();
        status.running = true;
        for pages in 1..=3 {
            status.pages = pages;
            crawl.write_status(&status).expect("write");
            assert_eq!(crawl.read_status().expect("read"), Some(status.clone()));
        }
        // The spare is a whole status too: the one before.
        let before: Status =
            serde_json::from_slice(&std::fs::read(&spare).expect("spare")).expect("a status");
        assert_eq!(before.pages, 2);
        status.running = false;
        crawl.write_status(&status).expect("write");
        assert_eq!(crawl.read_status().expect("read"), Some(status));
        assert!(!spare.exists());
    }

    #[test]
    fn a_status_that_is_not_one_names_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let crawl = CrawlDir::new(dir.path());
        std::fs::write(crawl.status(), "{\"pages\": \"many\"}").expect("write");
        let err = crawl.read_status().expect_err("not a status");
        assert!(err.to_string().contains("status.json"), "{err}");
    }
}
