//! What can go wrong reading, writing and checking evidence.

use std::path::PathBuf;

/// An error of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvidenceError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of an evidence file is not what it should be.
    #[error("{}, line {line}: {why}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Its line, from 1.
        line: u64,
        /// What is wrong.
        why: String,
    },
    /// A public key that is not a usable Ed25519 key.
    #[error("not an Ed25519 key: {0}")]
    NotEd25519(KeyProblem),
    /// A checkpoint carries no signature.
    #[error("the checkpoint is not signed")]
    Unsigned,
    /// A checkpoint was signed by another key.
    #[error("signed by key {signed_by}, not by {expected}")]
    OtherKey {
        /// The thumbprint it names.
        signed_by: String,
        /// The thumbprint of the key it was checked with.
        expected: String,
    },
    /// A signature that is not 64 bytes of base64url.
    #[error("the signature is not 64 bytes of base64url")]
    SignatureMalformed,
    /// A signature that does not verify.
    #[error("the signature does not verify")]
    SignatureInvalid,
    /// Evidence begun with one key (or none) opened with another.
    #[error("{}: this evidence was begun with {}; go on with the same", path.display(), had.as_deref().map_or("no key".to_owned(), |k| format!("key {k}")))]
    KeyChanged {
        /// The writer file.
        path: PathBuf,
        /// The thumbprint it was begun with, `None` for no key.
        had: Option<String>,
    },
    /// A record of a bundle is not a record.
    #[error("not an evidence bundle: records[{index}]: {why}")]
    Bundle {
        /// Its place in `records`.
        index: usize,
        /// What is wrong.
        why: String,
    },
    /// A value could not be written as JSON.
    #[error("cannot write {what} as JSON: {source}")]
    Serialize {
        /// What was written.
        what: &'static str,
        /// Why.
        source: serde_json::Error,
    },
    /// A directory holds no evidence.
    #[error("{}: no evidence here (no {file})", dir.display())]
    NoEvidence {
        /// The directory.
        dir: PathBuf,
        /// The file it lacks.
        file: &'static str,
    },
    /// No record of the host asked for.
    #[error("no record of {host}{} in {dirs} director{}", if *windowed { " in that window" } else { "" }, if *dirs == 1 { "y" } else { "ies" })]
    NoRecords {
        /// The host.
        host: String,
        /// Whether a window was asked for.
        windowed: bool,
        /// Directories searched.
        dirs: usize,
    },
}

/// Why a public key is not a usable Ed25519 key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyProblem {
    /// Another key type or curve.
    #[error("{kty} {crv}")]
    Type {
        /// Its `kty`.
        kty: String,
        /// Its `crv`.
        crv: String,
    },
    /// `x` is not base64url.
    #[error("x is not base64url")]
    NotBase64,
    /// `x` is not 32 bytes.
    #[error("x is not 32 bytes")]
    Length,
    /// `x` is not a point of the curve.
    #[error("x is not a curve point")]
    NotOnCurve,
}

impl EvidenceError {
    pub(crate) fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> EvidenceError + '_ {
        move |source| EvidenceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
