//! Starting a recrawl: an earlier crawl's directory read into a
//! [`Prior`], the pages to revisit added to the seeds, and what a resumed
//! recrawl needs to go on (`recrawl.json`).
//!
//! [`Recrawl::open`] is the one entry: given a [`RecrawlPlan`] for a new
//! recrawl, or nothing for a resumed crawl (which finds its plan in its
//! own directory, if it was a recrawl).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mannerly_time::UnixMillis;

use crate::config::{CrawlConfig, RecrawlOf};
use crate::dir::{read_json, write_json, CrawlDir};
use crate::error::CrawlError;
use crate::revisit::{PageState, Prior};

/// What a recrawl is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct RecrawlPlan {
    /// The earlier crawl's directories (left as they are): one, or every
    /// worker's directory of a fleet's crawl.
    pub old: Vec<PathBuf>,
    /// A page whose sitemap lastmod has not moved is requested anyway when
    /// its last fetch is older than this.
    pub max_age: Duration,
    /// Revisit only the pages whose chance of having changed
    /// ([`due::change_probability`](crate::due::change_probability)) is
    /// at least this, most likely first; the others are carried over into
    /// the new `pages.jsonl` as they were. `None`: every page, in URL order.
    pub due: Option<f64>,
}

/// `recrawl.json`: the plan a resumed recrawl goes on with.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Note {
    old: PathBuf,
    /// A fleet's other workers' directories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    more: Vec<PathBuf>,
    max_age_secs: u64,
}

/// Why a recrawl cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecrawlError {
    /// The earlier crawl's directory is not there.
    #[error("recrawl: no crawl at {path}: {source}")]
    NoCrawl {
        /// The directory as given.
        path: PathBuf,
        /// Why it could not be found.
        #[source]
        source: std::io::Error,
    },
    /// The new crawl would write into the earlier one (the same directory,
    /// or one inside it).
    #[error("recrawl: NEW must be a directory outside OLD ({0}), which stays as it is")]
    SameDirectory(PathBuf),
    /// The earlier crawl kept no pages to revisit.
    #[error(
        "recrawl: {path} holds no pages.jsonl (not a crawl, or one too old to revisit): {source}"
    )]
    NoPages {
        /// The earlier crawl's directory.
        path: PathBuf,
        /// What reading it found.
        #[source]
        source: Box<CrawlError>,
    },
    /// Writing into the new crawl's directory failed.
    #[error(transparent)]
    Write(#[from] CrawlError),
}

/// A recrawl ready to run: the earlier crawl's pages, and how old a fetch
/// may be before its lastmod is not enough.
#[derive(Debug, Clone)]
pub struct Recrawl {
    /// The earlier crawl's pages.
    pub prior: Arc<Prior>,
    /// See [`RecrawlPlan::max_age`].
    pub max_age: Duration,
    /// The directories it was read from.
    pub dirs: Vec<PathBuf>,
}

impl Recrawl {
    /// The recrawl into `dir`: from `plan`, or for a resumed crawl
    /// without one, from the `recrawl.json` it left (`Ok(None)`: not a
    /// recrawl). A new recrawl (`resuming` false) writes `recrawl.json`,
    /// carries the pages it will not revisit into `dir`'s `pages.jsonl`,
    /// and returns the pages to revisit as seeds to add.
    pub fn open(
        dir: &CrawlDir,
        plan: Option<RecrawlPlan>,
        resuming: bool,
        now: UnixMillis,
    ) -> Result<Option<(Recrawl, Vec<String>)>, RecrawlError> {
        let plan = match plan {
            Some(p) => p,
            None if resuming => match read_json::<Note>(&dir.recrawl())? {
                Some(note) => RecrawlPlan {
                    old: std::iter::once(note.old).chain(note.more).collect(),
                    max_age: Duration::from_secs(note.max_age_secs),
                    due: None,
                },
                None => return Ok(None),
            },
            None => return Ok(None),
        };
        let (first, more) = earlier_dirs(dir, &plan.old)?;
        let old: Vec<PathBuf> = std::iter::once(first.clone()).chain(more.clone()).collect();
        let prior = load(&old, &first)?;
        let mut seeds = Vec::new();
        if !resuming {
            dir.create()?;
            let note = Note {
                old: first,
                more,
                max_age_secs: plan.max_age.as_secs(),
            };
            write_json(&dir.recrawl(), &note)?;
            seeds = pages_to_revisit(&prior, plan.due, dir, now)?;
        }
        let recrawl = Recrawl {
            prior: Arc::new(prior),
            max_age: plan.max_age,
            dirs: old,
        };
        Ok(Some((recrawl, seeds)))
    }

    /// Sets `config` to revisit the earlier crawl's pages.
    pub fn configure(self, config: &mut CrawlConfig) {
        config.prior = Some(self.prior);
        config.max_age = self.max_age;
        config.prior_dirs = self.dirs;
    }
}

/// The earlier crawl's directories, made absolute (none may be `dir`):
/// the first, and the others.
fn earlier_dirs(
    dir: &CrawlDir,
    given: &[PathBuf],
) -> Result<(PathBuf, Vec<PathBuf>), RecrawlError> {
    let new = absolute(dir.root());
    let mut out = Vec::new();
    for old in given {
        let old = old.canonicalize().map_err(|source| RecrawlError::NoCrawl {
            path: old.clone(),
            source,
        })?;
        if new.as_ref().is_some_and(|n| n.starts_with(&old)) {
            return Err(RecrawlError::SameDirectory(old));
        }
        if !out.contains(&old) {
            out.push(old);
        }
    }
    if out.is_empty() {
        return Err(RecrawlError::NoCrawl {
            path: PathBuf::new(),
            source: std::io::Error::other("no earlier crawl named"),
        });
    }
    let first = out.remove(0);
    Ok((first, out))
}

/// `path` made absolute with its links resolved, whether or not it exists
/// yet: its deepest existing ancestor resolved, the rest appended.
fn absolute(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(found) = at.canonicalize() {
            return Some(rest.iter().rev().fold(found, |p, c| p.join(c)));
        }
        rest.push(at.file_name()?.to_owned());
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
}

/// The earlier crawl's pages, from all its directories.
fn load(old: &[PathBuf], first: &Path) -> Result<Prior, RecrawlError> {
    let dirs: Vec<CrawlDir> = old.iter().map(CrawlDir::new).collect();
    Prior::load_all(&dirs).map_err(|e| RecrawlError::NoPages {
        path: match &e {
            CrawlError::Io { path, .. } => path.parent().map_or(path.clone(), PathBuf::from),
            _ => first.to_path_buf(),
        },
        source: Box::new(e),
    })
}

/// A worker joining a fleet's recrawl: the earlier crawl it revisits, as
/// the crawl's settings name it, read here (the worker that started the
/// recrawl has read it already). Every worker thus asks for every page
/// any earlier worker fetched with its validators, names its record in a
/// revisit, and starts from the same lastmod record and visit history.
pub(crate) fn join(
    mut config: CrawlConfig,
    of: Option<RecrawlOf>,
) -> Result<CrawlConfig, CrawlError> {
    let Some(of) = of else {
        return Ok(config);
    };
    if config.prior.is_some() {
        return Ok(config);
    }
    let dirs: Vec<CrawlDir> = of.dirs.iter().map(CrawlDir::new).collect();
    config.prior = Some(Arc::new(Prior::load_all(&dirs)?));
    config.max_age = Duration::from_secs(of.max_age_secs);
    config.prior_dirs = of.dirs;
    Ok(config)
}

/// The pages to revisit: all (in URL order), or with `due` those whose
/// chance of having changed is at least that, most likely first; the
/// others go into `dir`'s `pages.jsonl` as they were.
fn pages_to_revisit(
    prior: &Prior,
    due: Option<f64>,
    dir: &CrawlDir,
    now: UnixMillis,
) -> Result<Vec<String>, CrawlError> {
    let Some(threshold) = due else {
        let mut urls: Vec<String> = prior.pages().map(|p| p.url.clone()).collect();
        urls.sort_unstable();
        return Ok(urls);
    };
    let mut scored: Vec<(f64, &PageState)> = prior
        .pages()
        .map(|p| (crate::due::change_probability(&p.visits, now.0), p))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.url.cmp(&b.1.url)));
    let (due, later): (Vec<_>, Vec<_>) = scored.into_iter().partition(|(p, _)| *p >= threshold);
    let mut carried = Vec::new();
    for (_, p) in &later {
        serde_json::to_writer(&mut carried, p).map_err(|source| CrawlError::Json {
            path: dir.pages(),
            source,
        })?;
        carried.push(b'\n');
    }
    std::fs::write(dir.pages(), carried).map_err(|source| CrawlError::Io {
        path: dir.pages(),
        source,
    })?;
    Ok(due.into_iter().map(|(_, p)| p.url.clone()).collect())
}

/// The body bytes downloaded by the crawl that the recrawl in `dir`
/// revisits (from that crawl's `status.json`); `None` when `dir` is not a
/// recrawl or that crawl left no status.
pub fn earlier_bytes(dir: &CrawlDir) -> Option<u64> {
    let note: Note = read_json(&dir.recrawl()).ok()??;
    let status = CrawlDir::new(note.old).read_status().ok()??;
    Some(status.bytes)
}
