//! Sending admitted pages: each page's evidence record is taken into the
//! chain as the page is admitted and held, with the page, until the
//! records of the whole release batch are written in one `write`
//! ([`Crawl::send_held`]); only then are the pages sent, each in a task of
//! its own. No page leaves before its record is on disk.

use mannerly_polite::frontier::{Frontier, Released};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::error::CrawlError;
use crate::normalize::host_of;
use crate::page::fetch_page;
use crate::skip::NotFetched;
use crate::state::{Crawl, Done, Held};
use crate::tag::Tag;

impl<F: CrawlFrontier> Crawl<F> {
    /// Admits a released page and holds it with its record until
    /// [`send_held`](Self::send_held) (sent at once when the crawl keeps
    /// no evidence).
    pub(crate) async fn start_page(&mut self, r: Released) -> Result<(), CrawlError> {
        let Some((judged, url)) = self.admit(&r).await? else {
            return Ok(());
        };
        // Admitting may have waited (for robots.txt): a fleet's lease is
        // checked just before sending.
        if !Frontier::confirm(&mut self.frontier, &r, UnixMillis::now()).await? {
            let why = "its lease lapsed before it was sent: another worker has it";
            return self.journal.skip(&r.url, NotFetched::LeaseLapsed, why);
        }
        self.pages_started += 1;
        if self.config.max_pages_per_host.is_some() {
            *self.per_host.entry(host_of(&r.url)).or_default() += 1;
        }
        if let Some(m) = &self.config.metrics {
            m.released(&self.frontier.pace(&r.key), UnixMillis::now());
        }
        let usage = judged.usage.clone();
        let send_by = Frontier::send_by(&self.frontier, &r);
        let Some(w) = &self.witness else {
            self.in_flight += 1;
            self.send(Held {
                r,
                url,
                usage,
                evidence: None,
                send_by,
            });
            return Ok(());
        };
        // The record is held, and the page with it, until the batch's
        // records are written together (`send_held`): a kill loses no
        // record of a request that left.
        let sitemap = Tag::unpack(r.tag).sitemap;
        let evidence = Some(w.page(&r.url, sitemap, judged, self.frontier.pace(&r.key))?);
        self.in_flight += 1;
        self.held.push(Held {
            r,
            url,
            usage,
            evidence,
            send_by,
        });
        Ok(())
    }

    /// Writes the records of the pages held, in one `write`, then sends
    /// the pages.
    pub(crate) fn send_held(&mut self) -> Result<(), CrawlError> {
        if self.held.is_empty() {
            return Ok(());
        }
        if let Some(w) = &self.witness {
            w.flush()?;
        }
        for h in std::mem::take(&mut self.held) {
            self.send(h);
        }
        Ok(())
    }

    /// Sends an admitted page in a task of its own.
    fn send(&self, h: Held) {
        let client = self.client.clone();
        let tx = self.tx.clone();
        let config = self.config.clone();
        tokio::spawn(async move {
            let mut done = fetch_page(client, h.r, h.url, config, h.send_by).await;
            done.content_usage_rule = h.usage;
            done.evidence = h.evidence;
            let _ = tx.send(Done::Page(Box::new(done)));
        });
    }
}
