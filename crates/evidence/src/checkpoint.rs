//! Checkpoints: a writer's Merkle root over every chain's head, with the
//! time, signed with the crawler's Web Bot Auth key (Ed25519) when it has
//! one. The signature is over `mannerly-evidence-checkpoint-v1\n` and the
//! canonical bytes of the checkpoint without `sig`, so it can be mistaken
//! for no HTTP message signature.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::error::{EvidenceError, KeyProblem};
use crate::jcs::canonical;

/// What a checkpoint's signature is over, before its canonical bytes.
pub const CONTEXT: &[u8] = b"mannerly-evidence-checkpoint-v1\n";

/// One checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// The format version (1).
    pub v: u32,
    /// The writer whose chains it covers.
    pub chain: String,
    /// When it was made (RFC 3339, milliseconds).
    pub time: String,
    /// How many records the writer had written (over all hosts).
    pub records: u64,
    /// How many host chains the tree holds.
    pub hosts: u64,
    /// The Merkle root, hex.
    pub root: String,
    /// The signing key's `keyid` (its JWK thumbprint), `null` unsigned.
    pub keyid: Option<String>,
    /// The signature, unpadded base64url, `null` unsigned.
    pub sig: Option<String>,
}

/// An Ed25519 public key as a JWK (RFC 8037).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKey {
    /// `OKP`.
    pub kty: String,
    /// `Ed25519`.
    pub crv: String,
    /// The key, unpadded base64url.
    pub x: String,
}

impl PublicKey {
    /// The RFC 7638 thumbprint, unpadded base64url: Web Bot Auth's `keyid`.
    pub fn thumbprint(&self) -> String {
        crate::jcs::jwk_thumbprint(&[("crv", &self.crv), ("kty", &self.kty), ("x", &self.x)])
    }

    fn verifying_key(&self) -> Result<VerifyingKey, EvidenceError> {
        if self.kty != "OKP" || self.crv != "Ed25519" {
            return Err(EvidenceError::NotEd25519(KeyProblem::Type {
                kty: self.kty.clone(),
                crv: self.crv.clone(),
            }));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(self.x.trim_end_matches('='))
            .map_err(|_| EvidenceError::NotEd25519(KeyProblem::NotBase64))?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| EvidenceError::NotEd25519(KeyProblem::Length))?;
        VerifyingKey::from_bytes(&bytes)
            .map_err(|_| EvidenceError::NotEd25519(KeyProblem::NotOnCurve))
    }
}

/// Signs checkpoints: the crawler's Web Bot Auth key.
pub trait Signer: Send + Sync {
    /// The public half.
    fn public_key(&self) -> PublicKey;
    /// An Ed25519 signature over `message`.
    fn sign(&self, message: &[u8]) -> [u8; 64];
}

impl Checkpoint {
    fn signed_bytes(&self) -> Vec<u8> {
        let bare = Checkpoint {
            sig: None,
            ..self.clone()
        };
        let mut out = CONTEXT.to_vec();
        if let Ok(v) = serde_json::to_value(&bare) {
            out.extend_from_slice(&canonical(&v));
        }
        out
    }

    /// Signs it (setting `keyid` first, so the signature covers it).
    pub fn sign(&mut self, signer: &dyn Signer) {
        self.keyid = Some(signer.public_key().thumbprint());
        self.sig = None;
        let sig = signer.sign(&self.signed_bytes());
        self.sig = Some(URL_SAFE_NO_PAD.encode(sig));
    }

    /// Whether it carries a signature.
    pub fn is_signed(&self) -> bool {
        self.sig.is_some()
    }

    /// Checks its signature with `key`: `Err` names what is wrong.
    pub fn verify(&self, key: &PublicKey) -> Result<(), EvidenceError> {
        let (Some(keyid), Some(sig)) = (&self.keyid, &self.sig) else {
            return Err(EvidenceError::Unsigned);
        };
        if *keyid != key.thumbprint() {
            return Err(EvidenceError::OtherKey {
                signed_by: keyid.clone(),
                expected: key.thumbprint(),
            });
        }
        let sig = URL_SAFE_NO_PAD
            .decode(sig)
            .ok()
            .and_then(|b| <[u8; 64]>::try_from(b).ok())
            .ok_or(EvidenceError::SignatureMalformed)?;
        key.verifying_key()?
            .verify_strict(&self.signed_bytes(), &Signature::from_bytes(&sig))
            .map_err(|_| EvidenceError::SignatureInvalid)
    }
}
