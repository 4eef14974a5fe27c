//! What verification concludes ([`Outcome`]); why a signature is refused
//! ([`Rejection`]) is with the crate's other errors.

use crate::Rejection;

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

impl Rejection {
    /// The outcome this refusal makes.
    pub fn outcome(self) -> Outcome {
        match self.is_unverifiable() {
            true => Outcome::Unverified { reason: self },
            false => Outcome::Invalid { reason: self },
        }
    }
}
