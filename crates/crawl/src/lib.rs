//! The polite crawler engine: [`crawl`] runs a crawl into a directory
//! (WARC files, a JSON log, the frontier and robots.txt state for a
//! resume); [`crawl_on`] runs it on another [`Backend`], such as a fleet's
//! shared frontier (`mannerly-fleet`).
//!
//! Every delay a crawl observes comes from `mannerly-polite`'s frontier;
//! this crate adds no rate limiter of its own. robots.txt comes through
//! `mannerly-fetch`'s cache, fetched as a request of its own before any
//! page of its origin.
//!
//! # Modules
//!
//! The loop and its parts, in the order a page meets them:
//!
//! - `engine`: the loop. One task owns the frontier and makes every
//!   decision; fetches run as tasks and report back. A page is released →
//!   admitted → fetched → kept → its links offered. `state` holds the
//!   running crawl that the rooms below extend; `settings` the stored
//!   settings a crawl or a resume starts from; `turn` a turn's offers.
//! - `admit`: whether a released page may be requested (the per-host page
//!   bound, robots.txt allowed, disallowed or unavailable); `send`: its
//!   record written, then the request sent.
//! - `page`: the HTTP client, one page's GET (signed when asked), how it
//!   ended (`PageOutcome`) and the heads a WARC record stores.
//! - `keep`: a fetched page archived, logged, its state kept; a failure
//!   retried or given up.
//! - `robots_answer`, `robots_fetch`: robots.txt asked of the cache and
//!   its answer applied; fetches archived to WARC; a redirect to another
//!   host held to its pacing.
//! - `outlinks`: a page's redirect, links and sitemap entries as
//!   candidates for the frontier (scope and nofollow applied).
//! - `journal`: `log.jsonl` and `pages.jsonl` as the crawl writes them;
//!   [`skip`]: why a URL is not fetched.
//! - `summary`: [`Ending`], [`Summary`], [`Progress`]: plain data.
//! - `dir`: [`CrawlDir`], every path of a crawl's directory, and
//!   `status.json` as a [`Status`].
//! - `config`: [`CrawlConfig`], [`CrawlSettings`]; `error`: [`CrawlError`].
//! - `backend`: [`Backend`], [`Local`] and [`CrawlFrontier`].
//! - [`recrawl`]: a recrawl started from an earlier crawl's directory,
//!   or resumed from its own.
//!
//! Pure parts, public and tested alone:
//!
//! - [`normalize`]: URL normalisation before deduplication (RFC 3986 §6,
//!   only the rules that never change the resource, in a table), and the
//!   crawl's scope (host, registered domain, or any; linear-time include
//!   and exclude patterns; depth).
//! - [`links`]: outlinks from streaming HTML (`a`, `area`, `link`, frames,
//!   `<base href>`), `rel=nofollow`, `<meta name="robots">` and
//!   `X-Robots-Tag`, including its per-crawler form.
//! - [`tag`]: depth, redirect hops, retries and the sitemap bit, packed in
//!   the frontier's `u32` tag.
//! - [`warc`]: WARC 1.1 records, gzip per record, rotated files, SHA-1
//!   digests in base32, and the repair of a record cut by a kill.
//! - [`robots_store`]: robots.txt states in a fjall keyspace, so a resumed
//!   crawl neither refetches nor forgets.
//!
//! What a crawl's directory holds is listed at [`CrawlDir`].
//!
//! ```
//! use mannerly_crawl::normalize::CrawlUrl;
//! use mannerly_crawl::links::extract;
//!
//! let page = CrawlUrl::parse("HTTPS://Example.COM:443/a/./b/../page.html#top").unwrap();
//! assert_eq!(page.as_str(), "https://example.com/a/page.html");
//! let found = extract(br#"<a href="next.html">next</a><a href="mailto:x@example.com">m</a>"#,
//!                     page.url(), "mannerly", false);
//! assert_eq!(found.links[0].as_str(), "https://example.com/a/next.html");
//! assert_eq!(found.dropped, 1);
//! ```
//!
//! # Design notes
//!
//! - **Durability.** The loop hands the frontier's operations of a turn
//!   on together ([`CrawlFrontier::commit`]) at the top of every turn and
//!   before it waits; a page's links are offered before the page is
//!   recorded done, so a kill -9 fetches a page again (at least once) and
//!   never loses its links.
//! - **Pacing.** A page's outcome is reported to the frontier with the
//!   time its response head arrived as the request's time, the latest
//!   moment it can have reached the server, so a host's delay never counts
//!   from earlier than the server saw it.
//! - **Leases.** A fleet's release can lapse while a worker is stopped;
//!   every request is confirmed with the frontier just before it goes out
//!   and not sent past the frontier's `send_by`.
//! - **Memory.** Bounded per host in progress by the frontier, except
//!   these maps, which grow with every host the crawl has seen: the page
//!   counts per host (`--max-pages-per-host`), the hosts that answered
//!   (the summary's count), sitemap lastmods per URL and the lastmod
//!   trust per host in a recrawl, and the evidence's chain head per host
//!   (about 80 bytes). robots.txt states are in the fjall store, not in
//!   memory; the cache holds a bounded number.
//! - **Evidence.** Every request's record is written before it can leave:
//!   by the loop for a page (after admission and the lease's confirmation,
//!   before the task that sends it), and through `mannerly-fetch`'s
//!   `SendHook` for robots.txt and each of its hops, which refuses to let
//!   a request go whose record could not be written. The delay and its
//!   source come from the frontier's `Pace`, so the record says what the
//!   pacing really was, not what the crawler believes it kept.

#![deny(missing_docs)]

mod admit;
mod backend;
mod config;
mod dir;
pub mod due;
mod engine;
mod error;
mod journal;
mod keep;
pub mod lastmod;
pub mod links;
pub mod login;
pub mod metrics;
pub mod normalize;
mod outlinks;
mod page;
pub mod recrawl;
pub mod revisit;
mod robots_answer;
mod robots_fetch;
pub mod robots_store;
mod send;
mod settings;
pub use settings::{read_settings, write_settings};
pub mod skip;
mod state;
mod summary;
pub mod tag;
mod tags;
mod tally;
mod turn;
pub mod warc;
mod witness;

pub use backend::{Backend, CrawlFrontier, Local};
pub use config::{ClientHook, CrawlConfig, CrawlSettings};
pub use dir::{BusyHost, CrawlDir, Status};
pub use engine::{crawl, crawl_on};
pub use error::CrawlError;
pub use recrawl::{Recrawl, RecrawlError, RecrawlPlan};
pub use revisit::{Caching, PageState, Prior, Revisit};
pub use summary::{Ending, Progress, RevisitCounts, Summary};
