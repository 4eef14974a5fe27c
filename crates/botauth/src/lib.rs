//! Web Bot Auth: crawlers sign their requests with RFC 9421 HTTP Message
//! Signatures (Ed25519) and publish their keys; servers verify.
//!
//! This crate has the signing and verifying core: keys as JWK with RFC 7638
//! thumbprints ([`keys`]), the signature base rebuilt from parsed
//! structured fields ([`base`]), and [`sign_request`] /
//! [`verify_request`] with the Web Bot Auth profile's checks (`created`,
//! `expires` at most 24 h later, `tag="web-bot-auth"`, `@authority` and the
//! `Signature-Agent` member covered, test keys refused in production).
//!
//! ```
//! use mannerly_botauth::{sign_request, verify_request, AgentForm, KeyPair, Message, Outcome, SignConfig, StaticKeys, VerifyConfig};
//! let key = KeyPair::generate();
//! let msg = Message::new("GET", "https://example.com/page");
//! let config = SignConfig::new(1_800_000_000, AgentForm::dictionary("https://crawler.example"));
//! let headers = sign_request(&key, &msg, &config).unwrap();
//! let mut signed = msg.clone();
//! signed.headers.extend(headers);
//! let keys = StaticKeys::new(vec![key.public_jwk()]);
//! let outcome = verify_request(&signed, &keys, &VerifyConfig::at(1_800_000_010));
//! assert!(matches!(outcome, Outcome::Verified { .. }));
//! ```

pub mod base;
pub mod client;
pub mod directory;
pub mod fcrdns;
pub mod keys;
mod sign;
mod verify;

pub use base::{Message, Response};
pub use keys::{Jwk, KeyPair};
pub use sign::{sign_request, sign_reqwest, AgentForm, SignConfig};
pub use verify::{
    verify, verify_request, KeyLookup, NonceCache, Outcome, StaticKeys, VerifyConfig,
};

/// Errors of this crate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    #[error("key: {0}")]
    Key(String),
    #[error("structured field: {0}")]
    Field(String),
    #[error("covered component missing from the message: {0}")]
    Missing(String),
}
