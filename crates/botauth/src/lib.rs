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
//! use mannerly_botauth::UnixMillis;
//! let now = UnixMillis::from_secs(1_800_000_000);
//! let config = SignConfig::new(now, AgentForm::dictionary("https://crawler.example"));
//! let headers = sign_request(&key, &msg, &config).unwrap();
//! let mut signed = msg.clone();
//! signed.headers.extend(headers);
//! let keys = StaticKeys::new(vec![key.public_jwk()]);
//! let outcome = verify_request(&signed, &keys, &VerifyConfig::at(now.add_millis(10_000)));
//! assert!(matches!(outcome, Outcome::Verified { .. }));
//! ```
//!
//! # Design notes
//!
//! - **Never echo the wire.** `Signature-Input` is parsed with `sfv`, and
//!   `@signature-params` is re-serialised from the parsed inner list, as are
//!   `;key=` members. What is verified is what the parser understood.
//! - **One verifier, two key sources.** `verify` takes a `KeyLookup`.
//!   `DirectoryClient::verify_request` first runs it with a lookup that only
//!   records which keyid and agent the signature needs, then fetches that
//!   directory and verifies for real.
//! - **Directory safety.** Only https. Redirects are refused, not followed.
//!   The address is resolved and refused if it is loopback, private,
//!   link-local or CGNAT, unless a test allows it. Bodies and key counts are
//!   capped, and a failed refresh serves the last good keys.

#![deny(missing_docs)]

pub mod accept;
pub mod base;
pub mod card;
pub mod client;
pub mod dircheck;
pub mod directory;
pub mod fcrdns;
pub mod keys;
pub mod proof;
mod sign;
mod verify;

pub use base::{Message, RequestParseError, Response};
pub use keys::{Jwk, KeyPair};
pub use sign::{sign_request, sign_reqwest, AgentForm, SignConfig};
pub use verify::{
    agent_identifier, summarise, verify, verify_each, verify_request, KeyLookup, NonceCache,
    NonceCheck, Outcome, ReadyKey, Rejection, StaticKeys, Verdict, VerifyConfig,
};

pub use mannerly_time::UnixMillis;

/// Errors of this crate (keys, signing, building a signature base). Match
/// on the variant; each says what was wrong with which input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The JWK is not an Ed25519 (`OKP`) key.
    #[error("key: not an Ed25519 key: kty {kty} crv {crv}")]
    UnsupportedKey {
        /// The JWK's `kty`.
        kty: String,
        /// The JWK's `crv`.
        crv: String,
    },
    /// A key field is not base64url.
    #[error("key: {field} is not base64url: {source}")]
    Base64 {
        /// `x` or `d`.
        field: &'static str,
        /// The decoder's error.
        #[source]
        source: base64::DecodeError,
    },
    /// A key field does not decode to 32 bytes.
    #[error("key: {field} is not 32 bytes")]
    KeyLength {
        /// `x` or `d`.
        field: &'static str,
    },
    /// `x` is not a point on the curve.
    #[error("key: x is not a valid Ed25519 point: {0}")]
    InvalidPoint(#[source] ed25519_dalek::SignatureError),
    /// A private key was needed, the JWK has no `d`.
    #[error("key: the JWK has no private part (d)")]
    NoPrivateKey,
    /// The JWK's public and private parts do not belong together.
    #[error("key: the JWK's x does not belong to its d")]
    KeyMismatch,
    /// The PEM is not a PKCS#8 Ed25519 private key.
    #[error("key: not a PKCS#8 Ed25519 private key: {0}")]
    Pkcs8(#[source] ed25519_dalek::pkcs8::Error),
    /// The key could not be written as PKCS#8.
    #[error("key: cannot write PKCS#8: {0}")]
    Pkcs8Encode(#[source] ed25519_dalek::pkcs8::Error),
    /// A key directory with no key.
    #[error("key: a directory needs at least one key")]
    NoKeys,
    /// A signature's validity outside 1 s to 24 h.
    #[error("structured field: validity {0} s is outside 1..=86400")]
    Validity(i64),
    /// A value cannot be written or read as a structured field (RFC 9651).
    #[error("structured field: {0}")]
    Field(String),
    /// A covered component is not in the message.
    #[error("covered component missing from the message: {0}")]
    Missing(String),
    /// The message's target URI is not a URL.
    #[error("structured field: target URI: {0}")]
    TargetUri(#[source] url::ParseError),
}
