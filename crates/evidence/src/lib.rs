//! A crawler's evidence of its own conduct, and its check.
//!
//! For every request it sends, a crawler writes a [`Record`]: when, what,
//! as whom, the robots.txt it judged by (its SHA-256) and the line that
//! decided, the delay in force and where it came from, the gap it really
//! kept, the AIPREF preference. Each host's records form a hash chain
//! ([`chain`]); at least once a minute, and at exit, the writer signs a
//! [`Checkpoint`]: a Merkle root ([`merkle`]) over every chain's head.
//! [`export`] gives a site owner one host's records as a [`Bundle`], with
//! the proofs tying them to the signed roots and nothing of other hosts
//! but hashes; [`verify`] refuses a bundle with any record edited,
//! dropped, inserted or moved, or signed by another key. `mannerly
//! audit --evidence` then checks the records against the site's own
//! access log.
//!
//! The format is specified in `docs/evidence.md`, so other crawlers can
//! write bundles this crate checks.
//!
//! ```
//! use mannerly_evidence::{export, verify, Delay, DelaySource, EvidenceLog, Kind, Record, Window};
//! use mannerly_time::UnixMillis;
//!
//! let dir = tempfile::tempdir().expect("temp dir");
//! let mut log = EvidenceLog::open(dir.path(), None, None).expect("opens");
//! let record = Record {
//!     time: UnixMillis(1_795_168_800_000).to_rfc3339_millis(),
//!     method: "GET".into(),
//!     url: "https://example.com/robots.txt".into(),
//!     host: "example.com".into(),
//!     kind: Kind::Robots,
//!     user_agent: "ExampleBot/1.0".into(),
//!     delay: Delay { required_s: 1.0, source: DelaySource::Default, since_previous_s: None },
//!     ..Record::blank()
//! };
//! log.append(record).expect("written");
//! log.checkpoint(UnixMillis(1_795_168_800_500), true).expect("checkpointed");
//!
//! let bundle = export(&[dir.path().to_path_buf()], "example.com", Window::default()).expect("exported");
//! let verified = verify(&bundle, None).expect("intact");
//! assert_eq!((verified.records, verified.signed), (1, false));
//! ```
//!
//! # Design notes
//!
//! - **Written before sent.** A record is appended whole, in one write,
//!   before its request goes out; a kill loses no record of a request
//!   that left.
//! - **Hashed as it stands.** Digests are over RFC 8785 canonical JSON
//!   of the record as given, members unknown to this version included.
//! - **Chains per host, trees per writer.** A bundle shows one host's
//!   chain; the Merkle path shows other hosts only as hashes. A fleet's
//!   workers each keep their own chains and checkpoints.

#![deny(missing_docs)]

mod bundle;
pub mod chain;
mod checkpoint;
mod error;
pub mod jcs;
mod log;
pub mod merkle;
mod record;
mod refusal;
mod verify;

pub use bundle::{export, export_hosts, Bundle, Proof, Span, Window, BUNDLE_VERSION};
pub use checkpoint::{Checkpoint, PublicKey, Signer, CONTEXT};
pub use error::{EvidenceError, KeyProblem};
pub use log::{read_checkpoints, read_writer, EvidenceLog, Files, Writer, CHECKPOINT_EVERY_MS};
pub use record::{
    seconds, Decision, Delay, DelaySource, Kind, Record, RobotsState, RobotsUsed, VERSION,
};
pub use refusal::{Edge, Refusal, SignatureProblem};
pub use verify::{verify, Verified};
