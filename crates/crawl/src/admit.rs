//! Admission: whether a released page may be requested now. The crawl's
//! own bound per host, then robots.txt as the cache knows it: allowed (with
//! the page's AIPREF Content-Usage rule), disallowed (dropped, with the
//! deciding line logged), or unavailable (the page waits, never dropped).

use mannerly_fetch::policy::{Access, AccessKind, Decision};
use mannerly_fetch::{FetchError, Origin};
use mannerly_polite::frontier::{Frontier, Kind, Released};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::error::CrawlError;
use crate::normalize::host_of;
use crate::robots_fetch::hold_until;
use crate::skip::NotFetched;
use crate::state::Crawl;
use crate::witness::Judged;
use mannerly_fetch::freshness::{reuse, Reuse};

impl<F: CrawlFrontier> Crawl<F> {
    /// Checks a released page before any request: `Some` (what robots.txt
    /// said of it, for its record, and its URL parsed, for every later use)
    /// when it is to be fetched; `None` when it was handed back to the
    /// frontier (waiting, or dropped and logged).
    pub(crate) async fn admit(
        &mut self,
        r: &Released,
    ) -> Result<Option<(Judged, url::Url)>, CrawlError> {
        if let Some(max) = self.config.max_pages_per_host {
            let host = host_of(&r.url);
            if self.per_host.get(&host).is_some_and(|n| *n >= max) {
                let why = format!("{host} has had its {max} pages");
                self.journal
                    .skip(&r.url, NotFetched::MaxPagesPerHost, &why)?;
                Frontier::discard(&mut self.frontier, r, UnixMillis::now()).await?;
                return Ok(None);
            }
        }
        if let Some(prefix) = self.journal.walls.stops(&r.url) {
            let why = format!("behind the login that stopped {prefix}");
            self.journal.skip(&r.url, NotFetched::LoginRequired, &why)?;
            Frontier::discard(&mut self.frontier, r, UnixMillis::now()).await?;
            return Ok(None);
        }
        if self.fresh_in_cache(r)? || self.unchanged_by_lastmod(r)? {
            Frontier::discard(&mut self.frontier, r, UnixMillis::now()).await?;
            return Ok(None);
        }
        self.admit_by_robots(r).await
    }

    /// On a recrawl, before a batch is admitted: what the crawl's other
    /// workers' sitemaps said of its pages that this worker's did not (a
    /// fleet's; the embedded frontier knows nothing more).
    pub(crate) async fn learn_lastmods(&mut self, released: &[Released]) -> Result<(), CrawlError> {
        if self.config.prior.is_none() || !self.config.sitemaps {
            return Ok(());
        }
        let urls: Vec<&str> = released
            .iter()
            .filter(|r| r.kind == Kind::Page && !self.lastmods.knows(&r.url))
            .map(|r| r.url.as_str())
            .collect();
        if urls.is_empty() {
            return Ok(());
        }
        let told = self.frontier.ask_lastmods(&urls).await?;
        for (url, lastmod) in urls.into_iter().zip(told) {
            if let Some(l) = lastmod {
                self.lastmods.learn(url.to_owned(), l);
            }
        }
        Ok(())
    }

    /// On a recrawl: whether the page's sitemap lastmod says it has not
    /// changed since its last fetch, on a host whose lastmod is believed
    /// (see `lastmod`). Its state then goes on into this crawl's
    /// `pages.jsonl` as it was, and it is logged and counted.
    fn unchanged_by_lastmod(&mut self, r: &Released) -> Result<bool, CrawlError> {
        let Some(prior) = self.config.prior.clone() else {
            return Ok(false);
        };
        let Some(state) = prior.get(&r.url) else {
            return Ok(false);
        };
        let now = UnixMillis::now().0;
        let skip = crate::lastmod::skip(
            state.lastmod.as_deref(),
            self.lastmods.get(&r.url),
            self.trust.host(&host_of(&r.url)),
            now.saturating_sub(state.fetched),
            self.config.max_age.as_millis() as u64,
            &r.url,
        );
        if !skip {
            return Ok(false);
        }
        if let Some(pages) = &mut self.journal.pages {
            pages.line(state)?;
        }
        self.journal.summary.revisits.skipped_by_lastmod += 1;
        let why = format!(
            "its sitemap lastmod ({}) has not moved since it was fetched",
            state.lastmod.as_deref().unwrap_or("")
        );
        self.journal
            .skip(&r.url, NotFetched::UnchangedByLastmod, &why)?;
        Ok(true)
    }

    /// On a recrawl: whether the earlier copy is still fresh by its own
    /// response's caching headers (see `freshness`). Its state then goes on
    /// into this crawl's `pages.jsonl` as it was, and it is logged and
    /// counted.
    fn fresh_in_cache(&mut self, r: &Released) -> Result<bool, CrawlError> {
        let Some(prior) = self.config.prior.clone() else {
            return Ok(false);
        };
        let Some(state) = prior.get(&r.url) else {
            return Ok(false);
        };
        let (fetched, now) = (UnixMillis(state.fetched), UnixMillis::now());
        let Reuse::Fresh { left_ms, by } = reuse(state.caching.stored(), fetched, now) else {
            return Ok(false);
        };
        if let Some(pages) = &mut self.journal.pages {
            pages.line(state)?;
        }
        self.journal.summary.revisits.fresh_in_cache += 1;
        let why = format!(
            "its copy is fresh for {} s more by its {by}",
            left_ms / 1000
        );
        self.journal.skip(&r.url, NotFetched::FreshInCache, &why)?;
        Ok(true)
    }

    async fn admit_by_robots(
        &mut self,
        r: &Released,
    ) -> Result<Option<(Judged, url::Url)>, CrawlError> {
        let now = UnixMillis::now();
        let config = self.config.clone();
        let agent = &config.agent;
        // One lookup: whether robots.txt is decided, what it says of the
        // page, and the rules the Content-Usage record is read from.
        let checked = match url::Url::parse(&r.url) {
            Ok(parsed) => (self.cache.check_decided_url(&parsed, agent).await).map(|c| (c, parsed)),
            Err(source) => Err(FetchError::UnparsableUrl {
                url: r.url.clone(),
                source,
            }),
        };
        let ((check, decision), parsed) = match checked {
            Ok((Some(known), parsed)) => (known, parsed),
            Ok((None, _)) => return self.refetch_robots(r, now).await.map(|()| None),
            Err(e) => {
                self.journal
                    .skip(&r.url, NotFetched::UnusableUrl, &e.to_string())?;
                Frontier::discard(&mut self.frontier, r, now).await?;
                return Ok(None);
            }
        };
        if check.allowed {
            let usage = content_usage_rule(&decision, agent, &r.url);
            return Ok(Some((Judged::of(&check, &decision, usage), parsed)));
        }
        if check.access == AccessKind::DisallowAll {
            // robots.txt unavailable: the page waits, it is not dropped.
            let expires = check.expires_at.unwrap_or(now.add_millis(60_000));
            let until = match Origin::of(&check.origin) {
                Ok(origin) => hold_until(&self.cache, &origin, &expires, now).await,
                Err(_) => expires,
            };
            let f = &mut self.frontier;
            Frontier::robots_unavailable(f, &check.origin, until, &check.reason, now).await?;
            Frontier::cancel(f, r, now).await?;
            return Ok(None);
        }
        let why = match &check.rule {
            Some(rule) => format!("robots.txt line {}: {}", rule.line, rule.pattern),
            None => check.reason.clone(),
        };
        self.journal.skip(&r.url, NotFetched::Disallowed, &why)?;
        Frontier::discard(&mut self.frontier, r, now).await?;
        Ok(None)
    }

    /// No valid robots.txt state here or in the store (it expired, or in a
    /// fleet the worker that fetched it could not save it): checking would
    /// fetch robots.txt on this page's turn and the page would follow at
    /// once. robots.txt goes back through the frontier instead, as a
    /// request of its own, and the page waits.
    async fn refetch_robots(&mut self, r: &Released, now: UnixMillis) -> Result<(), CrawlError> {
        let f = &mut self.frontier;
        let Ok(origin) = Origin::of(&r.url) else {
            // A URL the cache could read has an origin: not reached.
            self.journal
                .skip(&r.url, NotFetched::UnusableUrl, "it has no origin")?;
            return Ok(Frontier::discard(f, r, now).await?);
        };
        let why = "robots.txt is fetched again: no valid state for it here";
        Frontier::robots_unavailable(f, &origin.to_string(), now, why, now).await?;
        Ok(Frontier::cancel(f, r, now).await?)
    }
}

/// The robots.txt `Content-Usage` rule (AIPREF) that applies to a URL, as
/// text: `train-ai=n, ai-use=unknown, search=y (line 4)`, or `None`.
fn content_usage_rule(decision: &Decision, agent: &str, url: &str) -> Option<String> {
    let Access::Rules(robots) = &decision.access else {
        return None;
    };
    match robots.content_usage(agent, url) {
        Some(u) if !u.lines.is_empty() => Some(format!(
            "{} (line {})",
            u.summary(),
            u.lines
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => None,
    }
}
