//! Who crawled a site, and whether they kept its rules: the audit of
//! access logs against the robots.txt in force at each request's time.
//!
//! An [`Auditor`] takes log entries (read by `mannerly-logs`), tells
//! browsers from bots ([`Catalogue`]) and each bot's kind ([`BotKind`]:
//! crawlers, and the clients robots.txt does not govern: feed readers,
//! link previews, monitors, user-triggered fetchers, HTTP tools, clients
//! with no User-Agent), groups bots by name and identity ([`Identify`]:
//! verified, spoofed, unverified; anyone's names and spoofers per
//! address), and judges each crawler per host: paths its robots.txt group disallowed then
//! ([`RobotsBook`] holds the versions by the instant each came into
//! force), gaps shorter than its Crawl-delay, requests inside a
//! Retry-After window, pages before robots.txt was read or while it was
//! unavailable. Browser-looking clients that behave like crawlers are
//! listed apart as suspects. [`audit_logs`] reads files, in parallel.
//!
//! ```
//! use mannerly_audit::{Auditor, Catalogue, Options, RobotsBook, Unchecked};
//! use mannerly_logs::detect;
//!
//! let mut book = RobotsBook::new();
//! book.add(None, None, "robots.txt".into(), b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n");
//! let log = [
//!     r#"192.0.2.7 - - [01/Mar/2026:10:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 60 "-" "ExampleBot/1.0""#,
//!     r#"192.0.2.7 - - [01/Mar/2026:10:00:00 +0000] "GET /private/a HTTP/1.1" 200 512 "-" "ExampleBot/1.0""#,
//!     r#"192.0.2.7 - - [01/Mar/2026:10:00:01 +0000] "GET /b HTTP/1.1" 200 512 "-" "ExampleBot/1.0""#,
//! ];
//! let mut parser = detect(&log).expect("combined");
//! let options = Options { from_start: true, ..Options::default() };
//! let mut auditor = Auditor::new(&book, Catalogue::builtin(), options, 1);
//! for line in log {
//!     let entry = parser.parse(line).expect("reads").expect("a request");
//!     auditor.feed(0, &entry, &Unchecked);
//! }
//! let report = auditor.finish();
//! let bot = &report.bots[0];
//! assert_eq!(bot.token, "ExampleBot");
//! assert_eq!((bot.counts.disallowed, bot.counts.too_soon), (1, 1));
//! assert_eq!(bot.examples[0].detail, "line 2: Disallow: /private");
//! ```
//!
//! # Design notes
//!
//! - **Judged as it was.** A request is judged against the robots.txt
//!   version in force at its logged time, never against today's file.
//! - **No false accusations from coarse clocks.** A gap is short only if
//!   it is short however the log rounded its times: a log with whole
//!   seconds forgives a second.
//! - **Bounded memory.** Requests wait only while their files might still
//!   hold earlier ones (a window, 5 minutes by default); per bot and host
//!   the state is fixed in size (counts, a gap histogram, the last
//!   minute's starts, a few examples); timelines widen their buckets
//!   rather than grow.
//! - **Only what the log can show.** Holes in a log (a sample, a gap
//!   between rotated files) withhold the verdicts they could change, and
//!   a crawler is not charged for a directive its operator documents it
//!   ignores (Google and Crawl-delay) unless the audit is strict.
//! - **Plain code.** Nothing here resolves names or fetches ranges: an
//!   [`Identify`] given by the caller says whether a request is its bot's.

#![deny(missing_docs)]

mod agents;
mod assemble;
mod book;
mod coverage;
mod engine;
mod evidence;
mod histogram;
mod identity;
mod kinds;
pub mod metrics;
mod named;
mod order;
mod pace;
pub mod practices;
mod proposed;
pub mod render;
mod report;
pub mod rules;
mod server_side;
mod source;
mod stamp;
mod suspects;
mod timeline;
mod wants;
mod words;

pub use agents::{kind_of, product_token, Agent, Catalogue, CatalogueError, Known};
pub use book::{HistoryError, RobotsBook, Version, VersionId};
pub use coverage::Coverage;
pub use engine::{Auditor, Identify, Options, Unchecked, MAX_AGENTS};
pub use evidence::{
    group_bundles, BotEvidenceInput, BundleState, EvidenceExample, EvidenceFinding, EvidenceReport,
    MAX_EVIDENCE_EXAMPLES,
};
pub use identity::Checked;
pub use kinds::{is_client_library, BotKind, Category, CLIENT_LIBRARIES};
pub use mannerly_logs::Layout;
pub use proposed::{ProposedBot, ProposedExample, ProposedReport, MAX_PROPOSED_EXAMPLES};
pub use report::{
    BotReport, Counts, Example, FileReport, Finding, GateAction, GateCounts, HostReport, Identity,
    Report, RobotsSource, SignedIn, Suspect, Timeline, Violation, MAX_EXAMPLES,
    MAX_SIGNED_IN_AGENTS,
};
pub use server_side::{judge, Expect, Seen, ServerReport, MAX_SERVER_EXAMPLES};
pub use source::{audit_logs, audit_logs_with, LogSource, SourceError};
pub use suspects::MIN_PAGES;
pub use wants::Wants;
