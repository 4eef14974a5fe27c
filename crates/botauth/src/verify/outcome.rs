//! What verification concludes, and why a signature is refused.

/// The result of verification. Verified, invalid and unverified stay three
/// outcomes (the editor's copy, Appendix C.1): a key nobody can fetch says
/// nothing against the signer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A valid signature by `keyid`.
    Verified {
        /// The identifier the request is attributed to: the normalised
        /// Signature-Agent URL, without its query, when the key came from
        /// that URL (§4.4). `None` when the key was held by other means:
        /// the identifier is then the thumbprint (§4.3).
        agent: Option<String>,
        /// The signature's `keyid`.
        keyid: String,
        /// The RFC 7638 thumbprint of the key that verified the signature,
        /// computed from the key (what identifies the signer).
        thumbprint: String,
        /// The signature's label (`sig1`).
        label: String,
    },
    /// Signed, but not acceptably: the reason says which check failed.
    Invalid {
        /// Which check failed.
        reason: Rejection,
    },
    /// Signed, but the verifier could not decide: the key is unknown, its
    /// directory could not be had, no agent was named, or the algorithm is
    /// one this verifier does not implement.
    Unverified {
        /// What was missing.
        reason: Rejection,
    },
    /// No signature at all.
    Unsigned,
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
    #[error("{0}")]
    DirectoryUnavailable(String),
    /// The signature base could not be built from the message.
    #[error("{0}")]
    Base(String),
    /// No key with this `keyid` (in the directory the agent names).
    #[error("unknown key {0}")]
    UnknownKey(String),
    /// The RFC 9421 test key, refused in production mode.
    #[error("the RFC 9421 test key is refused in production mode")]
    TestKey,
    /// The key found is unusable.
    #[error("{0}")]
    BadKey(String),
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
        )
    }

    /// The outcome this refusal makes.
    pub fn outcome(self) -> Outcome {
        match self.is_unverifiable() {
            true => Outcome::Unverified { reason: self },
            false => Outcome::Invalid { reason: self },
        }
    }
}
