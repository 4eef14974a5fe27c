//! Why a bundle was refused ([`Refusal`]): what is wrong, as a variant a
//! caller can match, and where, as its fields; its `Display` is the
//! sentence a person reads.

/// Which edge of a bundle's window a shown record stands at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The record just before the window.
    Before,
    /// The record just after it.
    After,
}

impl std::fmt::Display for Edge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Edge::Before => "before",
            Edge::After => "after",
        })
    }
}

/// Why a bundle was refused: what, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// A bundle format this version does not read.
    #[error("bundle version {found} (this reads {reads})")]
    Version {
        /// The bundle's `v`.
        found: u32,
        /// The version this reads.
        reads: u32,
    },
    /// A record is not a record.
    #[error("records[{index}]: {why}")]
    Unreadable {
        /// Its place in `records`.
        index: usize,
        /// What is wrong.
        why: String,
    },
    /// No record at all.
    #[error("the bundle holds no record")]
    Empty,
    /// The window's bounds are not RFC 3339.
    #[error("the window {0} is not RFC 3339")]
    Window(String),
    /// A record of another host.
    #[error(
        "records[{index}] ({chain} seq {seq}): a record of {host}, in a bundle of {bundle_host}"
    )]
    ForeignHost {
        /// Its place in `records`.
        index: usize,
        /// Its chain.
        chain: String,
        /// Its seq.
        seq: u64,
        /// The host it names.
        host: String,
        /// The bundle's host.
        bundle_host: String,
    },
    /// A record whose time is not RFC 3339.
    #[error("records[{index}] ({chain} seq {seq}): time {time:?} is not RFC 3339")]
    Time {
        /// Its place in `records`.
        index: usize,
        /// Its chain.
        chain: String,
        /// Its seq.
        seq: u64,
        /// Its time as written.
        time: String,
    },
    /// A record sent outside the bundle's window.
    #[error("records[{index}] ({chain} seq {seq}): sent at {time}, outside the bundle's window")]
    OutsideWindow {
        /// Its place in `records`.
        index: usize,
        /// Its chain.
        chain: String,
        /// Its seq.
        seq: u64,
        /// When it was sent.
        time: String,
    },
    /// Records not in time, chain and seq order.
    #[error("records[{index}] ({chain} seq {seq}): out of order (records come by time, chain and seq): moved or inserted")]
    OutOfOrder {
        /// Its place in `records`.
        index: usize,
        /// Its chain.
        chain: String,
        /// Its seq.
        seq: u64,
    },
    /// A chain's first record's `prev` is not a digest.
    #[error("chain {chain}: seq {seq} has a prev that is not 64 hex digits")]
    BadPrev {
        /// The chain.
        chain: String,
        /// The record's seq.
        seq: u64,
    },
    /// Records missing from the middle of a chain.
    #[error("chain {chain}, records[{index}]: record(s) seq {from}..{to} dropped")]
    Dropped {
        /// The chain.
        chain: String,
        /// The record after the gap.
        index: usize,
        /// The first seq missing.
        from: u64,
        /// The last seq missing.
        to: u64,
    },
    /// A seq repeated or out of place.
    #[error("chain {chain}, records[{index}]: seq {seq} again or out of place: a record inserted or moved")]
    Misplaced {
        /// The chain.
        chain: String,
        /// Its place in `records`.
        index: usize,
        /// Its seq.
        seq: u64,
    },
    /// A record that does not follow the one before it.
    #[error("chain {chain}, records[{index}] (seq {seq}): it does not follow the record before it: that record (seq {}) was edited, or one between them dropped", seq.saturating_sub(1))]
    Unlinked {
        /// The chain.
        chain: String,
        /// Its place in `records`.
        index: usize,
        /// Its seq.
        seq: u64,
    },
    /// The record shown after the window is not the first one after it.
    #[error("chain {chain}: seq {seq} ({time}) is not the first record after the window: records sent in it are left out")]
    NotFirstAfter {
        /// The chain.
        chain: String,
        /// The shown record's seq.
        seq: u64,
        /// Its time.
        time: String,
    },
    /// Digests of later records, without the record after the window.
    #[error("chain {chain}: {count} record(s) after seq {seq} are shown only as digests")]
    TailWithoutAfter {
        /// The chain.
        chain: String,
        /// Digests given.
        count: usize,
        /// The last record given whole.
        seq: u64,
    },
    /// A tail entry that is not a digest.
    #[error("chain {chain}: tail[{index}] is not a digest")]
    TailNotDigest {
        /// The chain.
        chain: String,
        /// Its place in the tail.
        index: usize,
    },
    /// A record at the window's edge that is not a record.
    #[error("chain {chain}: the record {edge} the window: {why}")]
    EdgeUnreadable {
        /// The chain.
        chain: String,
        /// Which edge.
        edge: Edge,
        /// What is wrong.
        why: String,
    },
    /// A record at the window's edge of another chain.
    #[error("chain {chain}: the record {edge} the window is of chain {other}")]
    EdgeOtherChain {
        /// The chain.
        chain: String,
        /// Which edge.
        edge: Edge,
        /// The chain it names.
        other: String,
    },
    /// Records before the first given are left out, and the window does
    /// not exclude them.
    #[error("chain {chain}: records before seq {seq} are left out, and the window does not exclude them")]
    LeftOut {
        /// The chain.
        chain: String,
        /// The first seq given.
        seq: u64,
    },
    /// A proof names a checkpoint the bundle does not hold.
    #[error("a proof names checkpoint {checkpoint} of {of}")]
    NoSuchCheckpoint {
        /// The index named.
        checkpoint: usize,
        /// Checkpoints held.
        of: usize,
    },
    /// A proof is not hex.
    #[error("chain {chain}, checkpoint of {time}: its proof is not hex")]
    ProofNotHex {
        /// The chain.
        chain: String,
        /// The checkpoint's time.
        time: String,
    },
    /// A proof does not reach its checkpoint's root.
    #[error("chain {chain}, checkpoint of {time}: the proof does not reach its root")]
    ProofOffRoot {
        /// The chain.
        chain: String,
        /// The checkpoint's time.
        time: String,
    },
    /// The chain does not reach a checkpoint's head.
    #[error("chain {chain}, checkpoint of {time}: the chain does not reach it: a record up to seq {seq} was edited, dropped or added")]
    Unreached {
        /// The chain.
        chain: String,
        /// The checkpoint's time.
        time: String,
        /// The last seq it covers.
        seq: u64,
    },
    /// A checkpoint's signature does not hold.
    #[error("chain {chain}, checkpoint of {time}: {problem}")]
    Signature {
        /// The chain.
        chain: String,
        /// The checkpoint's time.
        time: String,
        /// What is wrong.
        problem: SignatureProblem,
    },
    /// A signed checkpoint, and no key to check it with.
    #[error("chain {chain}, checkpoint of {time}: signed, but the bundle gives no key for it")]
    NoKey {
        /// The chain.
        chain: String,
        /// The checkpoint's time.
        time: String,
    },
    /// An unsigned checkpoint from a writer that signs.
    #[error("chain {chain}, checkpoint of {time}: unsigned, but its writer signs (or a key was asked for)")]
    Unsigned {
        /// The chain.
        chain: String,
        /// The checkpoint's time.
        time: String,
    },
    /// Records no checkpoint covers.
    #[error("chain {chain}: records seq {from}..{to} reach no checkpoint")]
    Uncovered {
        /// The chain.
        chain: String,
        /// The first uncovered seq.
        from: u64,
        /// The last.
        to: u64,
    },
    /// A request signed with one key, checkpointed by another or none.
    #[error("chain {chain}, records[{index}]: the request was signed with key {key}, the checkpoints {}", checkpoints.as_deref().map_or("are unsigned".to_owned(), |s| format!("with key {s}")))]
    OtherKey {
        /// The chain.
        chain: String,
        /// Its place in `records`.
        index: usize,
        /// The request's key.
        key: String,
        /// The checkpoints' key, `None` when unsigned.
        checkpoints: Option<String>,
    },
}

/// Why a checkpoint's signature does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureProblem {
    /// Signed by another key.
    #[error("signed by key {signed_by}, not by {expected}")]
    OtherKey {
        /// The thumbprint it names.
        signed_by: String,
        /// The thumbprint of the key it was checked with.
        expected: String,
    },
    /// The signature is not 64 bytes of base64url.
    #[error("the signature is not 64 bytes of base64url")]
    Malformed,
    /// The signature does not verify.
    #[error("the signature does not verify")]
    Invalid,
    /// The key is not a usable Ed25519 key.
    #[error("not an Ed25519 key: {0}")]
    Key(crate::KeyProblem),
    /// Anything else the check said.
    #[error("{0}")]
    Other(String),
}

impl From<crate::EvidenceError> for SignatureProblem {
    fn from(e: crate::EvidenceError) -> SignatureProblem {
        use crate::EvidenceError as E;
        match e {
            E::OtherKey {
                signed_by,
                expected,
            } => SignatureProblem::OtherKey {
                signed_by,
                expected,
            },
            E::SignatureMalformed => SignatureProblem::Malformed,
            E::SignatureInvalid => SignatureProblem::Invalid,
            E::NotEd25519(k) => SignatureProblem::Key(k),
            other => SignatureProblem::Other(other.to_string()),
        }
    }
}
