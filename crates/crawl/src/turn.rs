//! One turn of the loop ([`Turn`]): the links the turn's pages found are
//! offered together, then the pages are recorded done.

use std::sync::Mutex;

use mannerly_polite::controller::Outcome;
use mannerly_polite::frontier::{Frontier, Released};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::error::CrawlError;
use crate::journal::Journal;
use crate::outlinks::{offer_all, Candidate};
use crate::warc::WarcWriter;

/// What the reports handled in one turn of the loop queue, and the
/// completions that must wait for it: every page's links go to the
/// frontier in one offer (one round trip on a networked frontier, however
/// many pages the turn handled), then the pages are recorded done, in
/// order. A kill in between fetches those pages again (at least once) and
/// never loses their links.
#[derive(Default)]
pub(crate) struct Turn {
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) completions: Vec<(Released, Outcome, UnixMillis)>,
}

impl Turn {
    /// Offers what the turn found, then records its pages done.
    pub(crate) async fn finish<F: CrawlFrontier>(
        &mut self,
        frontier: &mut F,
        record: &mut Journal,
        warc: &Mutex<WarcWriter>,
    ) -> Result<(), CrawlError> {
        let candidates = std::mem::take(&mut self.candidates);
        offer_all(frontier, record, &candidates).await?;
        // A page's records and state are in their files before the page
        // is recorded done: a kill in between fetches it again, never
        // loses its records, its line in the log (what a resumed crawl
        // counts its pages by, for --max-pages and the per-host bound) or
        // what a recrawl needs of it.
        warc.lock().map_err(|_| CrawlError::WarcPoisoned)?.flush()?;
        record.log.flush()?;
        if let Some(pages) = &mut record.pages {
            pages.flush()?;
        }
        for (released, outcome, at) in std::mem::take(&mut self.completions) {
            Frontier::complete(frontier, &released, &outcome, at).await?;
        }
        Ok(())
    }
}
