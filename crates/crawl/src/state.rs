//! One running crawl's state ([`Crawl`]), which the loop (`engine`) and
//! the rooms of each job (`admit`, `send`, `robots_fetch`, `keep`, ...)
//! extend with `impl` blocks of their own, and what fetch tasks report
//! back ([`Done`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mannerly_fetch::{Origin, RobotsCache};
use mannerly_polite::frontier::Released;
use mannerly_time::UnixMillis;
use tokio::sync::mpsc;

use crate::config::CrawlConfig;
use crate::dir::CrawlDir;
use crate::journal::Journal;
use crate::normalize::Scope;
use crate::page::PageDone;
use crate::robots_fetch::{GateMsg, Made, RecordingFetcher};
use crate::warc::WarcWriter;
use crate::witness::Witness;

/// What a fetch task reports back to the loop.
pub(crate) enum Done {
    Robots {
        released: Released,
        origin: Origin,
        /// `None` when the release's lease lapsed before the task ran (the
        /// worker was stopped): nothing was asked or sent, and another
        /// worker may hold the host now.
        decision: Option<Box<mannerly_fetch::Decision>>,
    },
    Page(Box<PageDone>),
}

/// The two channels the loop reads: fetch tasks' reports, and robots.txt
/// redirects asking for another host's slot.
pub(crate) struct Reports {
    pub(crate) done: mpsc::UnboundedReceiver<Done>,
    pub(crate) gate: mpsc::UnboundedReceiver<GateMsg>,
}

/// One running crawl: what the loop and its helpers share.
pub(crate) struct Crawl<F> {
    pub(crate) config: Arc<CrawlConfig>,
    /// Where everything is written.
    pub(crate) dir: CrawlDir,
    pub(crate) scope: Scope,
    pub(crate) frontier: F,
    pub(crate) cache: Arc<RobotsCache<RecordingFetcher>>,
    /// robots.txt fetches the cache made, for the loop to log and pace.
    pub(crate) made: Made,
    pub(crate) warc: Arc<Mutex<WarcWriter>>,
    /// The crawl's evidence, when it keeps it.
    pub(crate) witness: Option<Arc<Witness>>,
    /// Pages and robots.txt go through this one client.
    pub(crate) client: reqwest::Client,
    pub(crate) journal: Journal,
    pub(crate) hosts_answered: crate::tally::HostTally,
    pub(crate) tx: mpsc::UnboundedSender<Done>,
    pub(crate) in_flight: usize,
    /// Pages admitted in this batch, sent once their records are written.
    pub(crate) held: Vec<Held>,
    /// Pages sent, this run and before (from the log of a resumed crawl).
    pub(crate) pages_started: u64,
    /// Pages the crawl's log held when this run began.
    pub(crate) pages_before: u64,
    /// Pages sent per host, kept only when `--max-pages-per-host` is set.
    pub(crate) per_host: HashMap<String, u64>,
    /// Sitemap lastmod per URL, as read in this crawl.
    pub(crate) lastmods: crate::lastmod::Lastmods,
    /// What each host's sitemap lastmod has shown (a recrawl starts from
    /// the earlier crawl's record).
    pub(crate) trust: crate::lastmod::Trust,
    /// `trust` holds observations `lastmod.json` does not yet.
    pub(crate) trust_unsaved: bool,
    /// When `give_up_after` starts to count: on a resume, once the hosts
    /// held for requests the kill cut off are free.
    pub(crate) give_up_from: UnixMillis,
}

/// An admitted page waiting for its batch's records to be written.
pub(crate) struct Held {
    pub(crate) r: Released,
    /// Its URL, parsed once when it was admitted.
    pub(crate) url: url::Url,
    /// Its AIPREF Content-Usage rule, for the log.
    pub(crate) usage: Option<String>,
    /// Its evidence record, for the WARC.
    pub(crate) evidence: Option<Vec<u8>>,
    /// When its lease (in a fleet) runs out.
    pub(crate) send_by: Option<Instant>,
}
