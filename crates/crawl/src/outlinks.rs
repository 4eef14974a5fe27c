//! What a fetched page leads to, as candidates for the frontier: a
//! redirect's target, an HTML page's links (scope, `nofollow` and
//! `rel=nofollow` applied), a sitemap's entries, and robots.txt's
//! sitemaps. What is turned away is logged with why; candidates are
//! offered together at the end of the loop's turn ([`offer_all`]).

use mannerly_polite::frontier::{Admission, Frontier, Offer, Released};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::config::CrawlConfig;
use crate::error::CrawlError;
use crate::journal::{Journal, LineKind, LogLine};
use crate::links;
use crate::normalize::{CrawlUrl, Scope};
use crate::page::PageResponse;
use crate::skip::NotFetched;
use crate::tag::Tag;

/// A link that is in scope, to be offered to the frontier.
pub(crate) struct Candidate {
    url: CrawlUrl,
    priority: u8,
    tag: u32,
}

/// Finds candidates: what it reads (the crawl's settings and scope), where
/// it logs what it turns away, and where it puts what it keeps.
pub(crate) struct Links<'a> {
    pub(crate) config: &'a CrawlConfig,
    pub(crate) scope: &'a Scope,
    pub(crate) journal: &'a mut Journal,
    pub(crate) found: &'a mut Vec<Candidate>,
    /// Sitemap lastmod per URL, as read in this crawl.
    pub(crate) lastmods: &'a mut crate::lastmod::Lastmods,
}

impl Links<'_> {
    /// What a page leads to: its redirect's target, its sitemap entries,
    /// or its HTML links.
    pub(crate) fn of_page(
        &mut self,
        released: &Released,
        page: &url::Url,
        tag: Tag,
        resp: &PageResponse,
    ) -> Result<(), CrawlError> {
        if tag.sitemap && (200..300).contains(&resp.status) {
            return self.sitemap_entries(released, page, tag, resp);
        }
        if (300..400).contains(&resp.status) {
            return match resp.header("location") {
                Some(loc) => self.redirect(page, loc, tag),
                None => Ok(()),
            };
        }
        let html = resp
            .header("content-type")
            .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
        let encoded = resp
            .header("content-encoding")
            .is_some_and(|e| !e.eq_ignore_ascii_case("identity"));
        if !(200..300).contains(&resp.status) || !html || encoded {
            return Ok(());
        }
        self.html_links(page, tag, resp)
    }

    fn redirect(&mut self, page: &url::Url, loc: &str, tag: Tag) -> Result<(), CrawlError> {
        let max = self.config.max_redirects;
        if tag.hops >= max {
            let why = format!("more than {max} redirects");
            return self.journal.skip(loc, NotFetched::RedirectLimit, &why);
        }
        let next = Tag {
            hops: tag.hops + 1,
            retries: 0,
            ..tag
        };
        self.follow(page, loc, next, u32::from(tag.depth))
    }

    fn html_links(
        &mut self,
        page: &url::Url,
        tag: Tag,
        resp: &PageResponse,
    ) -> Result<(), CrawlError> {
        let agent = &self.config.agent;
        let x_robots = links::x_robots_tag(
            resp.headers
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case("x-robots-tag"))
                .map(|(_, v)| v.as_str()),
            agent,
        );
        let found = links::extract(&resp.body, page, agent, self.config.follow_rel_nofollow);
        if let Some(why) = crate::login::wall(resp.status, false, found.login_form) {
            self.journal.login_wall(page.as_str(), why)?;
        }
        for l in &found.rel_nofollow {
            let why = "the link has rel=nofollow";
            self.journal
                .skip(l.as_str(), NotFetched::RelNofollow, why)?;
        }
        if found.directives.nofollow || x_robots.nofollow {
            let why = format!("{page} says nofollow");
            for l in &found.links {
                self.journal.skip(l.as_str(), NotFetched::Nofollow, &why)?;
            }
            return Ok(());
        }
        let depth = u32::from(tag.depth) + 1;
        let next = Tag {
            depth: u16::try_from(depth).unwrap_or(u16::MAX),
            ..Tag::default()
        };
        for l in found.links {
            self.keep(l, next, depth)?;
        }
        Ok(())
    }

    /// A fetched sitemap's entries: pages, and the sitemaps an index lists
    /// (bounded by `mannerly-sitemap`'s limits; the location rule applies).
    fn sitemap_entries(
        &mut self,
        released: &Released,
        base: &url::Url,
        tag: Tag,
        resp: &PageResponse,
    ) -> Result<(), CrawlError> {
        let rule = mannerly_sitemap::LocationRule::new(base);
        let parser = mannerly_sitemap::SitemapParser::from_bytes(
            &resp.body,
            mannerly_sitemap::Options::default(),
            Some(rule),
        );
        let depth = u32::from(tag.depth) + 1;
        for entry in parser {
            let (loc, sitemap, lastmod) = match &entry {
                mannerly_sitemap::Entry::Url(u) => (&u.loc, false, &u.lastmod),
                mannerly_sitemap::Entry::Sitemap(s) => (&s.loc, true, &s.lastmod),
            };
            if let (false, Some(l)) = (sitemap, lastmod) {
                self.lastmods.read(loc.to_string(), l.raw.clone());
            }
            // The entry as the sitemap gave it, its lastmod kept in the log.
            self.journal.line(&LogLine {
                time: UnixMillis::now().to_rfc3339_millis(),
                kind: LineKind::SitemapEntry,
                url: loc,
                lastmod: lastmod.as_ref().map(|l| l.raw.as_str()),
                from: Some(&released.url),
                reason: sitemap.then_some("a sitemap listed by an index"),
                ..LogLine::default()
            })?;
            let next = Tag {
                depth: u16::try_from(depth).unwrap_or(u16::MAX),
                sitemap,
                ..Tag::default()
            };
            self.follow(base, loc, next, depth)?;
            self.journal.summary.sitemap_entries += 1;
        }
        Ok(())
    }

    /// Resolves `link` against `page` and checks its scope: a candidate,
    /// or a line in the log saying why not.
    pub(crate) fn follow(
        &mut self,
        page: &url::Url,
        link: &str,
        tag: Tag,
        depth: u32,
    ) -> Result<(), CrawlError> {
        match CrawlUrl::join(Some(page), link) {
            Ok(url) => self.keep(url, tag, depth),
            Err(e) => self
                .journal
                .skip(link, NotFetched::UnusableUrl, &e.to_string()),
        }
    }

    /// Checks an already resolved link's scope (an HTML page's links come
    /// resolved and normalised from [`links::extract`]; normalising is
    /// idempotent, so they are not parsed again).
    fn keep(&mut self, url: CrawlUrl, tag: Tag, depth: u32) -> Result<(), CrawlError> {
        if let Err(why) = self.scope.check(&url, depth) {
            return self
                .journal
                .skip(url.as_str(), NotFetched::OutOfScope, &why.to_string());
        }
        self.found.push(Candidate {
            url,
            priority: 255u8.saturating_sub(u8::try_from(depth).unwrap_or(255)),
            tag: tag.pack(),
        });
        Ok(())
    }
}

/// Offers candidates to the frontier, a few hundred per call (one round
/// trip each on a networked frontier), and logs those it turned away.
pub(crate) async fn offer_all<F: CrawlFrontier>(
    frontier: &mut F,
    record: &mut Journal,
    candidates: &[Candidate],
) -> Result<(), CrawlError> {
    for chunk in candidates.chunks(256) {
        let offers: Vec<Offer<'_>> = chunk
            .iter()
            .map(|c| Offer::parsed(c.url.url(), c.priority, c.tag))
            .collect();
        let answers = Frontier::enqueue_many(frontier, &offers, UnixMillis::now()).await?;
        for (c, a) in chunk.iter().zip(answers) {
            let url = c.url.as_str();
            match a {
                Admission::Queued | Admission::Duplicate => {}
                Admission::Backpressure { reason } => {
                    record.skip(url, NotFetched::Backpressure, &reason)?
                }
                Admission::Skipped { reason } => {
                    record.skip(url, NotFetched::HostSkipped, &reason)?
                }
                Admission::Unresolved { host } => {
                    record.skip(url, NotFetched::Unresolved, &host)?
                }
            }
        }
    }
    Ok(())
}
