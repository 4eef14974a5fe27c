//! robots.txt in the loop: a released robots.txt asked of the cache in a
//! task of its own, and its answer applied: the origin's pages wait or go,
//! paced by it; its sitemaps are offered; the request, if one was made, is
//! logged and completed.

use std::time::Instant;

use mannerly_fetch::policy::Access;
use mannerly_fetch::Origin;
use mannerly_polite::controller::{Outcome, RobotsPacing};
use mannerly_polite::frontier::{Frontier, Released};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::error::CrawlError;
use crate::journal::{LineKind, LogLine};
use crate::outlinks::Links;
use crate::page::paced;
use crate::robots_fetch::hold_until;
use crate::state::Crawl;
use crate::state::Done;
use crate::tag::Tag;
use crate::turn::Turn;

impl<F: CrawlFrontier> Crawl<F> {
    pub(crate) async fn start_robots(&mut self, r: Released) -> Result<(), CrawlError> {
        let Ok(origin) = Origin::of(&r.url) else {
            return Ok(Frontier::discard(&mut self.frontier, &r, UnixMillis::now()).await?);
        };
        // A fleet's release may have lapsed while this worker was stopped:
        // then it is another's.
        if !Frontier::confirm(&mut self.frontier, &r, UnixMillis::now()).await? {
            return Ok(());
        }
        if let Some(w) = &self.witness {
            w.expect(&origin.robots_url(), self.frontier.pace(&r.key));
        }
        let cache = self.cache.clone();
        let tx = self.tx.clone();
        self.in_flight += 1;
        let send_by = Frontier::send_by(&self.frontier, &r);
        tokio::spawn(async move {
            // Checked as a page's is: a worker stopped between the release
            // and this task must not send robots.txt on a lease that is gone.
            // The origin's stored state is read first (a round trip to a
            // fleet's store), so the check comes after it, just before the
            // request.
            cache.decided(&origin).await;
            let decision = if send_by.is_some_and(|t| Instant::now() > t) {
                None
            } else {
                Some(Box::new(cache.decision(&origin).await))
            };
            let _ = tx.send(Done::Robots {
                released: r,
                origin,
                decision,
            });
        });
        Ok(())
    }

    /// robots.txt decided: the origin's pages wait or go, paced by it; its
    /// sitemaps are followed; the request, if one was made, is logged.
    pub(crate) async fn robots_done(
        &mut self,
        released: Released,
        origin: Origin,
        decision: mannerly_fetch::Decision,
        turn: &mut Turn,
    ) -> Result<(), CrawlError> {
        let now = UnixMillis::now();
        let o = origin.to_string();
        let summary = &mut self.journal.summary;
        if let Access::DisallowAll = &decision.access {
            summary
                .unavailable
                .insert(o.clone(), decision.reason.clone());
            // Held until the fetch policy's next attempt (backoff or
            // Retry-After), not the phase's end: then robots.txt is
            // released again and the cache decides whether to fetch.
            let until = hold_until(&self.cache, &origin, &decision.expires_at, now).await;
            let f = &mut self.frontier;
            Frontier::robots_unavailable(f, &o, until, &decision.reason, now).await?;
        } else {
            summary.unavailable.remove(&o);
            let mut pacing = RobotsPacing::default();
            if let Access::Rules(robots) = &decision.access {
                let config = &self.config;
                pacing = RobotsPacing::from_robots(robots, &config.agent, config.profile);
                if let (true, Ok(page)) = (config.sitemaps, url::Url::parse(&released.url)) {
                    let mut links = Links {
                        config,
                        scope: &self.scope,
                        journal: &mut self.journal,
                        found: &mut turn.candidates,
                        lastmods: &mut self.lastmods,
                    };
                    let tag = Tag {
                        sitemap: true,
                        ..Tag::default()
                    };
                    for sm in robots.sitemaps() {
                        links.follow(&page, &sm.url, tag, 0)?;
                    }
                }
            }
            let f = &mut self.frontier;
            Frontier::robots_known(f, &o, pacing, decision.expires_at, now).await?;
        }
        let fetched = self.made.lock().ok().and_then(|mut m| m.remove(&origin));
        if let Some(w) = &self.witness {
            w.forget(&origin.robots_url());
        }
        if let (Some(m), true) = (&self.config.metrics, fetched.is_some()) {
            m.robots(&decision.access);
        }
        let Some(f) = fetched else {
            // The cache answered without a request.
            return Ok(Frontier::cancel(&mut self.frontier, &released, now).await?);
        };
        self.journal.summary.robots_requests += 1;
        let (status, latency) = match &f.outcome {
            Outcome::Status {
                status, latency, ..
            } => (Some(*status), *latency),
            Outcome::Failed { latency } | Outcome::Stalled { latency } => (None, *latency),
        };
        self.journal.line(&LogLine {
            time: now.to_rfc3339_millis(),
            kind: LineKind::Robots,
            url: &released.url,
            status,
            ms: Some(latency),
            error: f.error.as_deref(),
            reason: Some(&decision.reason),
            ..LogLine::default()
        })?;
        // After the sitemaps it lists are offered.
        let (outcome, at) = paced(&f.outcome, f.done_at);
        turn.completions.push((released, outcome, at));
        Ok(())
    }
}
