//! Hash chains: each host's records, in the order they were written, fold
//! into one head. A record's digest is SHA-256 over its canonical bytes
//! (which hold `prev`, the head before it); the head after it is SHA-256
//! over the 32-byte head before it followed by the 32-byte digest.
//!
//! ```text
//! head₀ = 00…00          headₙ = SHA-256(headₙ₋₁ ‖ SHA-256(JCS(recordₙ)))
//! ```
//!
//! A head can be carried forward over records one cannot see by their
//! digests alone, so a bundle proves its records reach a checkpoint
//! without showing the records that came after them.

use sha2::{Digest, Sha256};

use crate::jcs::canonical;

/// A SHA-256 value.
pub type Hash = [u8; 32];

/// The head of an empty chain.
pub const GENESIS: Hash = [0; 32];

/// The digest of a record, as JSON: SHA-256 of its canonical bytes. (A
/// record is hashed as it stands, members this version does not know
/// included.)
pub fn record_digest(record: &serde_json::Value) -> Hash {
    Sha256::digest(canonical(record)).into()
}

/// The head after a record whose digest is `digest`.
pub fn next_head(head: &Hash, digest: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update(head);
    h.update(digest);
    h.finalize().into()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// A 32-byte hash from 64 hex digits (either case).
pub fn from_hex(s: &str) -> Option<Hash> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks(2).enumerate() {
        let d = |c: u8| (c as char).to_digit(16);
        out[i] = (d(pair[0])? * 16 + d(pair[1])?) as u8;
    }
    Some(out)
}

/// Where one host's chain stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    /// Records in the chain.
    pub n: u64,
    /// The head after them.
    pub head: Hash,
    /// When the last was sent (Unix milliseconds).
    pub last_ms: Option<u64>,
}

impl Default for ChainHead {
    fn default() -> ChainHead {
        ChainHead {
            n: 0,
            head: GENESIS,
            last_ms: None,
        }
    }
}

impl ChainHead {
    /// Takes the digest of a record that follows this head (its `seq`
    /// and `prev` are this head's), sent at `ms`.
    pub fn push(&mut self, digest: &Hash, ms: Option<u64>) {
        self.head = next_head(&self.head, digest);
        self.n += 1;
        self.last_ms = ms.or(self.last_ms);
    }
}
