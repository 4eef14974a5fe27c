//! Keeping what a page fetch gave: a failure retried or given up, a
//! page of an unwanted media type counted, a fetched page archived (WARC,
//! or a revisit record for an unchanged one), logged, its state kept for
//! a later recrawl and its links found; a lapsed lease handed back.

use mannerly_fetch::Origin;
use mannerly_polite::controller::Outcome;
use mannerly_polite::frontier::{Frontier, Released};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::error::CrawlError;
use crate::journal::{LineKind, LogLine};
use crate::normalize::host_of;
use crate::outlinks::Links;
use crate::page::{
    paced, request_head_of, response_head, status_outcome, PageDone, PageOutcome, PageResponse,
};
use crate::revisit::{Caching, PageState, Revisit, StoredRecord};
use crate::skip::NotFetched;
use crate::state::Crawl;
use crate::tag::Tag;
use crate::turn::Turn;
use crate::warc::{Archived, Exchange, Profile, RefersTo};

impl<F: CrawlFrontier> Crawl<F> {
    /// A page fetch that got no response: retried while retries are left.
    pub(crate) async fn page_failed(&mut self, p: &PageDone) -> Result<(), CrawlError> {
        let tag = Tag::unpack(p.released.tag);
        self.journal.summary.page_errors += 1;
        self.journal.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Page,
            url: &p.released.url,
            ms: Some(p.latency),
            retry: Some(tag.retries),
            error: p.outcome.error(),
            reason: match p.outcome {
                PageOutcome::Stalled(_) => Some("stalled: this crawler was not running when the deadline passed; not counted against the host"),
                PageOutcome::TimedOut(_) => Some("timeout"),
                _ => None,
            },
            ..LogLine::default()
        })?;
        let failed = match p.outcome {
            PageOutcome::Stalled(_) => Outcome::Stalled { latency: p.latency },
            _ => Outcome::Failed { latency: p.latency },
        };
        let (outcome, at) = paced(&failed, p.head_at);
        if tag.retries < self.config.retries {
            return self.retry(&p.released, tag, &outcome, at).await;
        }
        Ok(Frontier::complete(&mut self.frontier, &p.released, &outcome, at).await?)
    }

    /// A page of a media type `--content-types` does not want: counted and
    /// logged, its body never read.
    pub(crate) async fn page_unwanted(
        &mut self,
        p: &PageDone,
        resp: &PageResponse,
    ) -> Result<(), CrawlError> {
        self.answered(&p.url).await;
        let media = resp.unwanted.as_deref().unwrap_or_default();
        let summary = &mut self.journal.summary;
        *summary.pages_by_status.entry(resp.status).or_default() += 1;
        *summary
            .skipped
            .entry(NotFetched::ContentType.word().into())
            .or_default() += 1;
        let why = format!("content-type: {media} is not among --content-types; not downloaded");
        self.journal.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Page,
            url: &p.released.url,
            status: Some(resp.status),
            bytes: Some(0),
            ms: Some(p.latency),
            retry: Some(Tag::unpack(p.released.tag).retries),
            reason: Some(&why),
            ..LogLine::default()
        })?;
        let (outcome, at) = paced(&status_outcome(resp, p.latency, None), p.head_at);
        Ok(Frontier::complete(&mut self.frontier, &p.released, &outcome, at).await?)
    }

    /// A page with a response: archived, counted, logged; retried (429,
    /// 5xx) or its links found and the page completed at the turn's end.
    pub(crate) async fn page_fetched(
        &mut self,
        p: &PageDone,
        resp: &PageResponse,
        turn: &mut Turn,
    ) -> Result<(), CrawlError> {
        self.answered(&p.url).await;
        self.archive(p, resp)?;
        let summary = &mut self.journal.summary;
        *summary.pages_by_status.entry(resp.status).or_default() += 1;
        summary.bytes += resp.body.len() as u64;
        let retry_after = resp.header("retry-after").map(str::to_owned);
        let (outcome, at) = paced(&status_outcome(resp, p.latency, retry_after), p.head_at);
        let tag = Tag::unpack(p.released.tag);
        self.journal.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Page,
            url: &p.released.url,
            status: Some(resp.status),
            bytes: Some(resp.body.len() as u64),
            ms: Some(p.latency),
            retry: Some(tag.retries),
            reason: resp.truncated.then_some("truncated"),
            content_usage: resp.header("content-usage"),
            content_usage_rule: Some(p.content_usage_rule.as_deref().unwrap_or("none")),
            ..LogLine::default()
        })?;
        let asks = resp.header("www-authenticate").is_some();
        if let Some(why) = crate::login::wall(resp.status, asks, false) {
            self.journal.login_wall(&p.released.url, why)?;
        }
        let retryable = matches!(resp.status, 429 | 500 | 502 | 503 | 504);
        if retryable && tag.retries < self.config.retries {
            return self.retry(&p.released, tag, &outcome, at).await;
        }
        // Outlinks are queued before the page is recorded done (at the
        // turn's end): a kill in between fetches the page again (at least
        // once), never loses its links.
        let mut links = Links {
            config: &self.config,
            scope: &self.scope,
            journal: &mut self.journal,
            found: &mut turn.candidates,
            lastmods: &mut self.lastmods,
        };
        links.of_page(&p.released, &p.url, tag, resp)?;
        turn.completions.push((p.released.clone(), outcome, at));
        Ok(())
    }

    /// The page's exchange as WARC `request` and `response` records; or,
    /// when an earlier crawl holds its payload (a 304, or the same
    /// payload), a `revisit` record naming that crawl's record. A page
    /// with a payload is kept in `pages.jsonl` for the next recrawl.
    pub(crate) fn archive(&mut self, p: &PageDone, resp: &PageResponse) -> Result<(), CrawlError> {
        let head = response_head(resp.status, &resp.headers, &["transfer-encoding"], "");
        let prior = self.config.prior.clone();
        let prior = prior.as_deref().and_then(|pr| pr.get(&p.released.url));
        let request = request_head_of(&p.url, &self.config.user_agent, &resp.sent);
        let x = Exchange {
            url: &p.released.url,
            date: p.date,
            ip: resp.ip,
            request_head: request.as_bytes(),
            response_head: head.as_bytes(),
            body: &resp.body,
            truncated: resp.truncated,
            evidence: p.evidence.as_deref(),
        };
        let digest = crate::warc::sha1_digest(&[&resp.body]);
        // A sitemap is read afresh every time (its lastmod entries are
        // what a recrawl goes by), so it is not kept for revisits.
        let kind = match (resp.unwanted.is_some(), Tag::unpack(p.released.tag).sitemap) {
            (false, false) => Revisit::of(prior, resp.status, &digest),
            _ => None,
        };
        let stored = prior.and_then(|p| p.record.as_ref().zip(p.digest.as_deref()));
        let profile = match kind {
            Some(Revisit::NotModified) => Some(Profile::ServerNotModified),
            Some(Revisit::Unchanged) => Some(Profile::IdenticalPayloadDigest),
            _ => None,
        };
        let mut warc = self.warc.lock().map_err(|_| CrawlError::WarcPoisoned)?;
        let archived = match (profile, stored) {
            (Some(profile), Some((rec, digest))) => {
                let refers_to = RefersTo {
                    id: &rec.id,
                    date: &rec.date,
                    uri: &rec.uri,
                    payload_digest: digest,
                };
                warc.revisit(&x, profile, &refers_to)?
            }
            _ => warc.exchange_digested(&x, digest)?,
        };
        drop(warc);
        if let Some(kind) = kind {
            let uri = match (profile, stored) {
                (Some(_), Some((rec, _))) => rec.uri.clone(),
                _ => p.released.url.clone(),
            };
            self.keep_page(p, resp, prior, kind, archived, uri)?;
        }
        Ok(())
    }

    /// Counts a page against the earlier crawl's, and keeps its state.
    pub(crate) fn keep_page(
        &mut self,
        p: &PageDone,
        resp: &PageResponse,
        prior: Option<&PageState>,
        kind: Revisit,
        archived: Archived,
        uri: String,
    ) -> Result<(), CrawlError> {
        let counts = &mut self.journal.summary.revisits;
        match kind {
            Revisit::NotModified => counts.not_modified += 1,
            Revisit::Unchanged => counts.unchanged += 1,
            Revisit::Changed => counts.changed += 1,
            Revisit::New => counts.new += 1,
        }
        // A 304 may leave out the validators; the earlier ones still hold.
        let header = |name: &str, before: Option<&String>| {
            resp.header(name)
                .map(str::to_owned)
                .or_else(|| before.cloned())
        };
        let lastmod = self.lastmods.get(&p.released.url).map(str::to_owned);
        if let (Some(before), Some(now), false) = (
            prior.and_then(|p| p.lastmod.as_deref()),
            lastmod.as_deref(),
            kind == Revisit::New,
        ) {
            let changed = kind == Revisit::Changed;
            let host = host_of(&p.released.url);
            self.trust.host_mut(&host).observe(before != now, changed);
            self.trust_unsaved = true;
        }
        let mut visits = prior.map(|p| p.visits.clone()).unwrap_or_default();
        visits.push((p.date.0, matches!(kind, Revisit::Changed | Revisit::New)));
        let state = PageState {
            url: p.released.url.clone(),
            fetched: p.date.0,
            status: resp.status,
            etag: header("etag", prior.and_then(|p| p.etag.as_ref())),
            last_modified: header(
                "last-modified",
                prior.and_then(|p| p.last_modified.as_ref()),
            ),
            digest: Some(archived.payload_digest),
            record: Some(StoredRecord {
                id: archived.record_id,
                date: archived.date,
                uri,
            }),
            lastmod,
            visits,
            caching: caching_of(resp, prior),
        };
        match &mut self.journal.pages {
            Some(pages) => pages.line(&state),
            None => Ok(()),
        }
    }

    /// A host answered: it counts among the crawl's hosts, and its
    /// robots.txt cache entry hears so (the 30-day rule's clock).
    pub(crate) async fn answered(&mut self, page: &url::Url) {
        if let Ok(origin) = Origin::of_url(page) {
            self.cache.note_host_answered(&origin).await;
            self.hosts_answered.insert(&origin.host);
        }
    }

    pub(crate) async fn retry(
        &mut self,
        released: &Released,
        tag: Tag,
        outcome: &Outcome,
        at: UnixMillis,
    ) -> Result<(), CrawlError> {
        self.journal.summary.retries += 1;
        let next = Tag {
            retries: tag.retries + 1,
            ..tag
        };
        let f = &mut self.frontier;
        Ok(Frontier::requeue(f, released, outcome, next.pack(), at).await?)
    }

    /// A release whose lease lapsed before its request was sent (the
    /// worker was stopped in between): nothing reached the host, so it is
    /// logged and goes back (or, if another worker holds it now, the
    /// cancel is stale).
    pub(crate) async fn lapsed(&mut self, released: &Released) -> Result<(), CrawlError> {
        let why = "its lease lapsed before it was sent: another worker has it";
        self.journal
            .skip(&released.url, NotFetched::LeaseLapsed, why)?;
        let now = UnixMillis::now();
        Ok(Frontier::cancel(&mut self.frontier, released, now).await?)
    }
}

/// A response's caching headers; a 304 updates those the page had
/// (RFC 9111 §4.3.4): the fields it leaves out keep their stored values,
/// except its own `Date` and `Age`.
fn caching_of(resp: &PageResponse, prior: Option<&PageState>) -> Caching {
    let before = prior.map(|p| &p.caching);
    let kept = |name: &str, old: Option<&Option<String>>| {
        resp.header(name)
            .map(str::to_owned)
            .or_else(|| old.cloned().flatten())
    };
    Caching {
        cache_control: kept("cache-control", before.map(|b| &b.cache_control)),
        expires: kept("expires", before.map(|b| &b.expires)),
        date: resp.header("date").map(str::to_owned),
        age: resp.header("age").map(str::to_owned),
    }
}
