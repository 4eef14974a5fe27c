//! The polite crawler engine (in progress): the pure parts a crawl is made
//! of, each tested on its own.
//!
//! - [`normalize`]: URL normalisation before deduplication (RFC 3986 §6,
//!   only the rules that never change the resource, in a table), and the
//!   crawl's scope (host, registered domain, or any; linear-time include
//!   and exclude patterns; depth).
//! - [`links`]: outlinks from streaming HTML (`a`, `area`, `link`, frames,
//!   `<base href>`), `rel=nofollow`, `<meta name="robots">` and
//!   `X-Robots-Tag`, including its per-crawler form.
//! - [`warc`]: WARC 1.1 records, gzip per record, rotated files, SHA-1
//!   digests in base32, and the repair of a record cut by a kill.
//!
//! Every delay a crawl observes will come from `mannerly-polite`'s
//! frontier; this crate adds no rate limiter of its own.
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

#![deny(missing_docs)]

pub mod engine;
pub mod fleet;
pub mod links;
pub mod normalize;
pub mod robots_store;
pub mod tag;
pub mod warc;
