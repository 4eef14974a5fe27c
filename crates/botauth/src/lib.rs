//! Web Bot Auth: crawlers sign their requests with RFC 9421 HTTP Message
//! Signatures (Ed25519) and publish their keys; servers verify.
//!
//! This crate follows the IETF webbotauth working group's editor's copy of
//! October 2026 (after draft-ietf-webbotauth-httpsig-protocol-00), and
//! still verifies what -00 (draft-meunier-...-02) senders send where the
//! two do not conflict. It has the signing and verifying core: keys as JWK
//! with RFC 7638 thumbprints ([`keys`]), the signature base rebuilt from
//! parsed structured fields ([`base`]), [`sign_request`] and
//! [`verify_request`] / [`verify_each`], key directories ([`directory`],
//! [`client`], [`dircheck`]), signed bodies ([`proof`]), Signature Agent
//! Cards ([`card`]), `Accept-Signature` ([`accept`]) and forward-confirmed
//! reverse DNS ([`fcrdns`]) with operators' published range files
//! ([`published`]).
//!
//! ```
//! use mannerly_botauth::{sign_request, verify_request, AgentForm, KeyPair, Message, Outcome, SignConfig, StaticKeys, VerifyConfig};
//! let key = KeyPair::generate();
//! let jwks = "https://crawler.example/.well-known/http-message-signatures-directory";
//! let msg = Message::new("GET", "https://example.com/page");
//! use mannerly_botauth::UnixMillis;
//! let now = UnixMillis::from_secs(1_800_000_000);
//! let config = SignConfig::new(now, AgentForm::dictionary(jwks));
//! let headers = sign_request(&key, &msg, &config).unwrap();
//! let mut signed = msg.clone();
//! signed.headers.extend(headers);
//! // Keys fetched from the URL the request names: attributed to it.
//! let keys = StaticKeys::from_directory(jwks, vec![key.public_jwk()]);
//! let outcome = verify_request(&signed, &keys, &VerifyConfig::at(now.add_millis(10_000)));
//! assert!(matches!(outcome, Outcome::Verified { agent: Some(a), .. } if a == jwks));
//! ```
//!
//! # Design notes
//!
//! - **Never echo the wire.** `Signature-Input` is parsed with `sfv`, and
//!   `@signature-params` is re-serialised from the parsed inner list, as are
//!   `;key=` members. What is verified is what the parser understood.
//! - **One verifier, two key sources.** `verify` takes a `KeyLookup`.
//!   `DirectoryClient::verify_each` first runs it with a lookup that only
//!   records which agents the signatures name, then fetches those JWK Sets
//!   and verifies for real.
//! - **Three outcomes.** Verified, invalid, unverified (Appendix C.1). An
//!   unknown key, a directory that cannot be had, a signature naming no
//!   agent, and an algorithm this crate does not implement (RSA-PSS, ECDSA)
//!   are unverified: none is evidence against the signer.
//! - **Attribution needs the fetch (§4.4).** A verified request carries the
//!   agent's identifier (the URL normalised per RFC 3986 §6.2.2–6.2.3,
//!   without query or fragment) only when the key came from that URL
//!   ([`StaticKeys::from_directory`]); keys held by other means verify,
//!   and the identity is the thumbprint (§4.3).
//!
//! Where the texts leave a choice, this crate chooses as a careful
//! verifier operator would:
//!
//! - **Several signatures** are each verified on their own; the request's
//!   summary ([`summarise`]) is invalid if any is, else verified if any is,
//!   else unverified. A request is not cleaned by cherry-picking the
//!   signature that passes.
//! - **-00 senders** keyed their member by a name of their own
//!   (`agent1="..."` for `sig1`). A signature that covers exactly one
//!   member, with none keyed to its label, is read through it. A member
//!   keyed to its label that it does not cover makes it invalid.
//! - **Members with parameters are ignored**, as the protocol's editor's
//!   copy says, although the registry draft's `type=cimd` puts one there:
//!   the protocol text is the newer word on the header.
//! - **No path is guessed.** An origin sent as the member is fetched as it
//!   is; -00 senders that relied on the well-known path being added are
//!   unverified until they send the JWK Set's URL.
//! - **Directory entries** whose `kid` is not their thumbprint (at the
//!   well-known path), whose `alg` is outside the HTTP Signature
//!   Algorithms registry (JOSE's `EdDSA` included), that are shared
//!   secrets, publish `d`, or are RFC 9421's test key are dropped, not
//!   guessed at. The rest of the directory is used.
//! - **A directory's possession proof** is checked by [`dircheck`] and
//!   [`directory::verify_directory`], and is not needed to use its keys
//!   (Appendix B.1 allows it); it is not held to the 24 h cap of request
//!   signatures, and one created in the future is refused.
//! - **Plain http** signatures are refused unless
//!   [`VerifyConfig::allow_http`] (§6.1): on an unencrypted hop anyone on
//!   the path can replay them until they expire.
//! - **Challenges** ([`accept::challenge`]): 403 with `Accept-Signature`
//!   for unsigned and invalid requests, 429 with a fresh nonce for a
//!   replay, none for unverified (a new signature would not help).
//! - **Directory safety.** Only https. Redirects are refused, not followed.
//!   The address is resolved and refused if it is loopback, private,
//!   link-local or CGNAT, unless a test allows it. Bodies and key counts are
//!   capped, a failure is remembered 60 s (Appendix C.5 allows five
//!   minutes), and a failed refresh serves the last good keys: an outage is
//!   not evidence (§6.10), while a directory that answers without the key
//!   is, and replaces what was cached.
//! - **Cards** are checked with no `tag` required on their signatures (the
//!   registry draft names none); the keys are the card's `jwks`, or those
//!   at its `jwks_uri` when the caller fetched them.

#![deny(missing_docs)]

pub mod accept;
pub mod base;
pub mod card;
pub mod card_check;
pub mod client;
pub mod crawler_page;
pub mod digest;
pub mod dircheck;
pub mod directory;
mod error;
pub mod fcrdns;
pub mod history;
pub mod identity_check;
pub mod jafar;
pub mod keys;
pub mod proof;
pub mod published;
mod sign;
mod verify;

pub use base::{Message, RequestParseError, Response};
pub use digest::DigestError;
pub use error::{DirectoryError, DirectoryProblem, Error, HttpFailure, ProofError, Rejection};
pub use keys::{read_jwk_file, Jwk, KeyFile, KeyFileError, KeyPair};
pub use sign::{sign_request, sign_reqwest, AgentForm, SignConfig};
pub use verify::{
    agent_identifier, named_agents, summarise, verify, verify_each, verify_request, KeyLookup,
    NonceCache, NonceCheck, Outcome, ReadyKey, StaticKeys, Verdict, VerifyConfig,
};

pub use mannerly_time::UnixMillis;
