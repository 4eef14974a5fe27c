//! Every error type of the crate, in one room: they nest one another. A
//! signed body's proof fails with the [`Rejection`] of one of its
//! signatures ([`ProofError::BadSignature`]); a directory fails with its
//! proof's error ([`DirectoryProblem::Proof`]); and a request's signature
//! is unverified for want of a directory ([`Rejection::DirectoryUnavailable`]).
//! Kept apart, `verify`, `directory` and `proof` would import one another
//! in a circle; here each of them imports only this module.

use std::sync::Arc;

/// Errors of this crate (keys, signing, building a signature base). Match
/// on the variant; each says what was wrong with which input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    #[error("key: x is not a valid Ed25519 point")]
    InvalidPoint,
    /// A private key was needed, the JWK has no `d`.
    #[error("key: the JWK has no private part (d)")]
    NoPrivateKey,
    /// The JWK's public and private parts do not belong together.
    #[error("key: the JWK's x does not belong to its d")]
    KeyMismatch,
    /// The PEM is not a PKCS#8 Ed25519 private key.
    #[error("key: not a PKCS#8 Ed25519 private key: {0}")]
    Pkcs8(#[source] ed25519_dalek::pkcs8::Error),
    /// The text is not PEM at all.
    #[error("key: not a PEM file (no `-----BEGIN` line); expected a PKCS#8 Ed25519 private key, as `mannerly keys generate` writes")]
    NotPem,
    /// A private key of another algorithm (named with its article).
    #[error("key: {0} private key, not Ed25519; Web Bot Auth signing here takes an Ed25519 key (`mannerly keys generate` makes one)")]
    OtherAlgorithm(&'static str),
    /// A password-protected private key.
    #[error("key: an encrypted private key; give it unencrypted (`openssl pkey -in KEY -out PLAIN.pem`)")]
    Encrypted,
    /// The key could not be written as PKCS#8.
    #[error("key: cannot write PKCS#8: {0}")]
    Pkcs8Encode(#[source] ed25519_dalek::pkcs8::Error),
    /// A key directory with no key.
    #[error("key: a directory needs at least one key")]
    NoKeys,
    /// A signature's validity outside 1 s to 24 h.
    #[error("validity {0} s is outside 1..=86400: a signature lasts from 1 s to a day")]
    Validity(i64),
    /// A value cannot be written or read as a structured field (RFC 9651).
    #[error("structured field: {0}")]
    Field(String),
    /// A covered component is not in the message.
    #[error("covered component missing from the message: {0}")]
    Missing(String),
    /// The message's target URI is not a URL.
    #[error("the target URI is not an absolute URL: {0}")]
    TargetUri(#[source] url::ParseError),
}

/// Why a signature was refused. Match on the variant (a server maps them
/// to status codes, bindings to exception classes); the display is the
/// reason for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// One of `Signature-Input` and `Signature` without the other.
    #[error("{present} without {missing}")]
    HalfSigned {
        /// The header present.
        present: &'static str,
        /// The header missing.
        missing: &'static str,
    },
    /// A signature header is not what RFC 9421 says it must be.
    #[error("{header} {detail}")]
    MalformedHeader {
        /// The header.
        header: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// No signature with `tag="web-bot-auth"` (or none at all, outside
    /// the profile).
    #[error("{}", if *.web_bot_auth { "no signature with tag=\"web-bot-auth\"" } else { "no signature in Signature-Input" })]
    NoSignature {
        /// Whether the Web Bot Auth profile was required.
        web_bot_auth: bool,
    },
    /// An algorithm other than Ed25519.
    #[error("alg {0} is not supported by this verifier (ed25519 only)")]
    UnsupportedAlgorithm(String),
    /// No `keyid` parameter.
    #[error("no keyid")]
    NoKeyId,
    /// The profile requires `created` and `expires`.
    #[error("created and expires are required")]
    MissingTimestamps,
    /// `created` is later than now (plus the allowed skew).
    #[error("created {created} is in the future (now {now})")]
    CreatedInFuture {
        /// `created`, Unix seconds.
        created: i64,
        /// Now, Unix seconds.
        now: i64,
    },
    /// `expires` has passed.
    #[error("expired at {expires} (now {now})")]
    Expired {
        /// `expires`, Unix seconds.
        expires: i64,
        /// Now, Unix seconds.
        now: i64,
    },
    /// `expires - created` is longer than allowed.
    #[error("expires {secs} s after created, more than {max}")]
    ValidityTooLong {
        /// The signature's validity.
        secs: i64,
        /// The longest accepted.
        max: i64,
    },
    /// `expires` is before `created`.
    #[error("expires before created")]
    ExpiresBeforeCreated,
    /// The `Signature-Agent` header and what the signature covers disagree.
    #[error("{0}")]
    SignatureAgent(&'static str),
    /// The signature covers `Content-Digest`, and the body given is not
    /// the one it names (RFC 9530): the body was swapped.
    #[error("Content-Digest does not match the body ({0})")]
    ContentDigestMismatch(String),
    /// The signature covers `Content-Digest`, but it names no algorithm
    /// this verifier computes (sha-256, sha-512), so the body cannot be
    /// checked.
    #[error("Content-Digest names no algorithm this verifier checks (sha-256, sha-512): {0}")]
    ContentDigestUnchecked(String),
    /// The profile requires `@authority` or `@target-uri` to be covered.
    #[error("neither @authority nor @target-uri is covered")]
    AuthorityNotCovered,
    /// A signature covers another's `signature` member without covering
    /// its `signature-input` member and every component it lists (§5.2.2).
    #[error("covers signature;key={label} but not {missing}: an outer signature must cover the inner one's signature-input and every component it lists")]
    Chain {
        /// The inner signature's label.
        label: String,
        /// The first component identifier not covered.
        missing: String,
    },
    /// A signature sent over plain http (§6.1), refused unless allowed.
    #[error("signed over plain http: signatures are accepted over https only (§6.1)")]
    InsecureTransport,
    /// The key directory the agent names could not be had (unverified,
    /// not invalid: an outage says nothing about the signer).
    #[error(transparent)]
    DirectoryUnavailable(Box<DirectoryError>),
    /// The signature base could not be built from the message.
    #[error(transparent)]
    Base(Error),
    /// No key with this `keyid` (in the directory the agent names).
    #[error("unknown key {0}")]
    UnknownKey(String),
    /// The RFC 9421 test key, refused in production mode.
    #[error("the RFC 9421 test key is refused in production mode")]
    TestKey,
    /// The key found is unusable.
    #[error(transparent)]
    BadKey(Error),
    /// The signature is not 64 bytes.
    #[error("the signature is not 64 bytes")]
    SignatureLength,
    /// The signature does not verify.
    #[error("the signature does not match the signature base")]
    BadSignature,
    /// The nonce was seen before.
    #[error("nonce replayed")]
    Replayed,
    /// Replay protection is on and the signature has no nonce.
    #[error("no nonce: replay protection is on, and a signature without one could be replayed until it expires")]
    NoNonce,
    /// The nonce cache is full of live nonces (overall, or this key's
    /// share): the signature is refused rather than a live nonce forgotten.
    #[error("the replay cache is full of nonces still valid; refused rather than forget one (try again when they expire)")]
    ReplayCacheFull,
    /// No `Signature-Agent`, so no directory to find the key in.
    #[error("no Signature-Agent to find the key directory")]
    NoAgent,
}

impl Rejection {
    /// Whether this is a want of information (the outcome is unverified)
    /// rather than a failed check (invalid).
    pub fn is_unverifiable(&self) -> bool {
        matches!(
            self,
            Rejection::UnknownKey(_)
                | Rejection::NoAgent
                | Rejection::UnsupportedAlgorithm(_)
                | Rejection::DirectoryUnavailable(_)
                | Rejection::ContentDigestUnchecked(_)
        )
    }
}

/// Why a fetched key directory was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DirectoryProblem {
    /// The `Signature-Agent` value is not a URL.
    #[error("not a URL: {0}")]
    NotAUrl(String),
    /// Directories are fetched over https only.
    #[error("not https: directories are fetched over https only")]
    NotHttps,
    /// The URL has no host.
    #[error("no host")]
    NoHost,
    /// The host name did not resolve.
    #[error("cannot resolve {host}: {detail}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        detail: String,
    },
    /// The host resolves to an address a verifier must not contact.
    #[error("{host} resolves to {addr}, not a public address a verifier may contact: refused")]
    PrivateAddress {
        /// The host.
        host: String,
        /// The refused address.
        addr: std::net::IpAddr,
    },
    /// The request failed (connection, TLS, timeout).
    #[error("fetch failed: {0}")]
    Fetch(#[source] HttpFailure),
    /// The body could not be read to its end.
    #[error("reading the body failed: {0}")]
    Body(#[source] HttpFailure),
    /// A redirect: verifiers never follow one.
    #[error("HTTP {0}: the directory redirects, and verifiers must not follow redirects")]
    Redirect(u16),
    /// Any other status than 200.
    #[error("HTTP {0}")]
    Status(u16),
    /// The body is over the size limit.
    #[error("larger than {0} bytes")]
    TooLarge(usize),
    /// The body is not a JWKS document.
    #[error("not a JWKS document: {0}")]
    NotJwks(String),
    /// More keys than the limit.
    #[error("{found} keys, more than {max}")]
    TooManyKeys {
        /// Keys in the document.
        found: usize,
        /// The limit.
        max: usize,
    },
    /// The directory's possession proof failed.
    #[error(transparent)]
    Proof(#[from] ProofError),
    /// A listed key did not sign the directory.
    #[error("key {0} is listed but did not sign the directory")]
    UnprovenKey(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] HttpFailure),
}

/// Why a signed body (a key directory's possession proof, a signed card)
/// does not prove what it must.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProofError {
    /// No `Content-Digest` header.
    #[error("the response has no Content-Digest")]
    NoDigest,
    /// `Content-Digest` does not match the body.
    #[error("Content-Digest does not match the body")]
    DigestMismatch,
    /// No `Signature-Input` or `Signature`.
    #[error("the body is not signed")]
    Unsigned,
    /// A signature header is not a structured-field dictionary.
    #[error("{header}: {detail}")]
    MalformedSignature {
        /// `Signature-Input` or `Signature`.
        header: &'static str,
        /// The parser's error.
        detail: String,
    },
    /// One of the signatures did not verify.
    #[error("signature {label}: {rejection}")]
    BadSignature {
        /// The signature's label.
        label: String,
        /// Why it was refused.
        rejection: Box<Rejection>,
    },
    /// A signature over a body does not cover what it must (a directory's:
    /// Appendix B.1; a card's: the registry draft, §3.1.3).
    #[error("signature {label} does not cover {missing}")]
    Coverage {
        /// The signature's label.
        label: String,
        /// The component it leaves out.
        missing: &'static str,
    },
}

/// Why a directory could not be used: which one, and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key directory {url}: {problem}")]
pub struct DirectoryError {
    /// The directory (or the `Signature-Agent` value that named it).
    pub url: String,
    /// What was wrong.
    #[source]
    pub problem: DirectoryProblem,
}

/// A failed HTTP exchange, with the client's error kept (shared, so a
/// cached failure can be handed to every request that meets it). Shown
/// with its causes, since TLS and connection errors keep the useful part
/// there; two are equal when they are the same failure.
#[derive(Debug, Clone)]
pub struct HttpFailure(Arc<reqwest::Error>);

impl HttpFailure {
    /// The HTTP client's error.
    pub fn get_ref(&self) -> &reqwest::Error {
        &self.0
    }
}

impl From<reqwest::Error> for HttpFailure {
    fn from(e: reqwest::Error) -> Self {
        HttpFailure(Arc::new(e))
    }
}

impl PartialEq for HttpFailure {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HttpFailure {}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&mannerly_fetch::http::chain(&self.0))
    }
}

/// The causes are in the display already; the client's error is
/// [`HttpFailure::get_ref`].
impl std::error::Error for HttpFailure {}
