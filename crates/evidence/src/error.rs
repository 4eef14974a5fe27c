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
    /// A key is not a usable Ed25519 key, or a signature does not hold.
    #[error("{0}")]
    Key(String),
    /// A bundle is not JSON of the bundle's shape.
    #[error("not an evidence bundle: {0}")]
    Bundle(String),
    /// Nothing to export.
    #[error("{0}")]
    Nothing(String),
}

impl EvidenceError {
    pub(crate) fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> EvidenceError + '_ {
        move |source| EvidenceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
