//! Verifying a bundle: every chain unbroken from its first record given
//! to a checkpoint, every checkpoint's root reached by its proof and
//! signed by the writer's key. A refusal says what is wrong and where.

use std::collections::BTreeMap;

use crate::bundle::{Bundle, Window, BUNDLE_VERSION};
use crate::chain::{from_hex, hex, next_head, record_digest, Hash};
use crate::checkpoint::PublicKey;
use crate::merkle;
use crate::record::Record;

/// A bundle that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The host.
    pub host: String,
    /// Its records.
    pub records: usize,
    /// The chains (writers) they come from.
    pub chains: usize,
    /// Whether every checkpoint was signed (by the key asked for, when
    /// one was).
    pub signed: bool,
    /// The key that signed, as a thumbprint.
    pub keyid: Option<String>,
}

/// Why a bundle was refused: what and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

fn refuse<T>(why: String) -> Result<T, Refusal> {
    Err(Refusal(why))
}

/// Verifies `bundle`. With `key`, every checkpoint must be signed by it;
/// without, by its writer's own key when the writer names one.
pub fn verify(bundle: &Bundle, key: Option<&PublicKey>) -> Result<Verified, Refusal> {
    if bundle.v != BUNDLE_VERSION {
        return refuse(format!(
            "bundle version {} (this reads {BUNDLE_VERSION})",
            bundle.v
        ));
    }
    let records = bundle.parsed().map_err(|e| Refusal(e.to_string()))?;
    if records.is_empty() {
        return refuse("the bundle holds no record".into());
    }
    let Some(window) = bundle.window.window() else {
        return refuse(format!("the window {:?} is not RFC 3339", bundle.window));
    };
    let mut chains: BTreeMap<&str, Vec<(usize, &Record)>> = BTreeMap::new();
    let mut last: Option<(u64, &str, u64)> = None;
    for (i, r) in records.iter().enumerate() {
        let at = || format!("records[{i}] ({} seq {})", r.chain, r.seq);
        if r.host != bundle.host {
            return refuse(format!(
                "{}: a record of {}, in a bundle of {}",
                at(),
                r.host,
                bundle.host
            ));
        }
        let Some(ms) = r.millis() else {
            return refuse(format!("{}: time {:?} is not RFC 3339", at(), r.time));
        };
        if !window.holds(Some(ms)) {
            return refuse(format!(
                "{}: sent at {}, outside the bundle's window",
                at(),
                r.time
            ));
        }
        let key = (ms, r.chain.as_str(), r.seq);
        if last.is_some_and(|l| l > key) {
            return refuse(format!(
                "{}: out of order (records come by time, chain and seq): moved or inserted",
                at()
            ));
        }
        last = Some(key);
        chains.entry(&r.chain).or_default().push((i, r));
    }
    let mut signed = true;
    let mut keyid = None;
    for (chain, list) in &chains {
        let heads = fold(bundle, chain, list, window)?;
        let s = check_checkpoints(bundle, chain, &heads, list, key)?;
        signed &= s.is_some();
        keyid = keyid.or(s);
    }
    Ok(Verified {
        host: bundle.host.clone(),
        records: records.len(),
        chains: chains.len(),
        signed,
        keyid: if signed { keyid } else { None },
    })
}

/// Folds a chain's records and tail: the head after every record, by
/// chain length.
fn fold(
    bundle: &Bundle,
    chain: &str,
    list: &[(usize, &Record)],
    window: Window,
) -> Result<BTreeMap<u64, Hash>, Refusal> {
    let Some((_, first)) = list.first() else {
        return Ok(BTreeMap::new());
    };
    let Some(mut head) = from_hex(&first.prev) else {
        return refuse(format!(
            "chain {chain}: seq {} has a prev that is not 64 hex digits",
            first.seq
        ));
    };
    if first.seq > 0 {
        check_before(bundle, chain, first, &head, window)?;
    }
    let mut heads = BTreeMap::new();
    let mut expect = first.seq;
    for (i, r) in list {
        if r.seq != expect {
            let why = if r.seq > expect {
                format!("record(s) seq {expect}..{} dropped", r.seq - 1)
            } else {
                format!(
                    "seq {} again or out of place: a record inserted or moved",
                    r.seq
                )
            };
            return refuse(format!("chain {chain}, records[{i}]: {why}"));
        }
        if r.prev != hex(&head) {
            return refuse(format!(
                "chain {chain}, records[{i}] (seq {}): it does not follow the record before it: that record (seq {}) was edited, or one between them dropped",
                r.seq,
                r.seq.saturating_sub(1)
            ));
        }
        head = next_head(&head, &record_digest(&bundle.records[*i]));
        expect += 1;
        heads.insert(expect, head);
    }
    let tail = bundle.tails.get(chain).map_or(&[][..], Vec::as_slice);
    match bundle.after.get(chain) {
        Some(after) => {
            let r = edge(after, chain, "after")?;
            let late = window
                .until
                .is_some_and(|u| r.millis().is_some_and(|t| t > u));
            if r.seq != expect || !late {
                return refuse(format!(
                    "chain {chain}: seq {} ({}) is not the first record after the window: records sent in it are left out",
                    r.seq, r.time
                ));
            }
            head = next_head(&head, &record_digest(after));
            expect += 1;
            heads.insert(expect, head);
        }
        None if !tail.is_empty() => {
            return refuse(format!(
                "chain {chain}: {} record(s) after seq {} are shown only as digests",
                tail.len(),
                expect - 1
            ));
        }
        None => {}
    }
    for (j, d) in tail.iter().enumerate() {
        let Some(d) = from_hex(d) else {
            return refuse(format!("chain {chain}: tail[{j}] is not a digest"));
        };
        head = next_head(&head, &d);
        expect += 1;
        heads.insert(expect, head);
    }
    Ok(heads)
}

/// A record at a window's edge, read.
fn edge(value: &serde_json::Value, chain: &str, which: &str) -> Result<Record, Refusal> {
    let r: Record = serde_json::from_value(value.clone())
        .map_err(|e| Refusal(format!("chain {chain}: the record {which} the window: {e}")))?;
    if r.chain != chain {
        return refuse(format!(
            "chain {chain}: the record {which} the window is of chain {}",
            r.chain
        ));
    }
    Ok(r)
}

/// A chain given from `first` on: the record before it must be shown,
/// sent before the window, and lead to `first`.
fn check_before(
    bundle: &Bundle,
    chain: &str,
    first: &Record,
    head: &Hash,
    window: Window,
) -> Result<(), Refusal> {
    let left_out = || {
        refuse(format!(
            "chain {chain}: records before seq {} are left out, and the window does not exclude them",
            first.seq
        ))
    };
    let Some(value) = bundle.before.get(chain) else {
        return left_out();
    };
    let r = edge(value, chain, "before")?;
    let early = window
        .since
        .is_some_and(|s| r.millis().is_some_and(|t| t < s));
    let leads = from_hex(&r.prev).is_some_and(|p| next_head(&p, &record_digest(value)) == *head);
    if r.seq + 1 != first.seq || !early || !leads {
        return left_out();
    }
    Ok(())
}

/// Checks a chain's proofs and checkpoints; `Some(keyid)` when all are
/// signed, `None` when unsigned.
fn check_checkpoints(
    bundle: &Bundle,
    chain: &str,
    heads: &BTreeMap<u64, Hash>,
    list: &[(usize, &Record)],
    want: Option<&PublicKey>,
) -> Result<Option<String>, Refusal> {
    let writer_key = bundle.key_of(chain);
    let key = want.or(writer_key);
    let first_n = list.first().map_or(0, |(_, r)| r.seq + 1);
    let last_n = list.last().map_or(0, |(_, r)| r.seq + 1);
    let mut covered = 0;
    let mut keyid: Option<String> = None;
    let mut any_unsigned = false;
    for p in &bundle.proofs {
        let Some(c) = bundle.checkpoints.get(p.checkpoint) else {
            return refuse(format!(
                "a proof names checkpoint {} of {}",
                p.checkpoint,
                bundle.checkpoints.len()
            ));
        };
        if c.chain != chain {
            continue;
        }
        let at = format!("chain {chain}, checkpoint of {}", c.time);
        let path: Option<Vec<Hash>> = p.path.iter().map(|h| from_hex(h)).collect();
        let (Some(path), Some(head)) = (path, from_hex(&p.head)) else {
            return refuse(format!("{at}: its proof is not hex"));
        };
        let leaf = merkle::leaf(&bundle.host, p.n, &head);
        let reached = merkle::root_from_path(&leaf, p.index, c.hosts, &path).map(|r| hex(&r));
        if reached.as_deref() != Some(c.root.as_str()) {
            return refuse(format!("{at}: the proof does not reach its root"));
        }
        if p.n >= first_n {
            if heads.get(&p.n) != Some(&head) {
                return refuse(format!(
                    "{at}: the chain does not reach it: a record up to seq {} was edited, dropped or added",
                    p.n - 1
                ));
            }
            covered = covered.max(p.n);
        }
        match (c.is_signed(), key) {
            (true, Some(k)) => {
                c.verify(k).map_err(|e| Refusal(format!("{at}: {e}")))?;
                keyid = Some(k.thumbprint());
            }
            (true, None) => {
                return refuse(format!("{at}: signed, but the bundle gives no key for it"))
            }
            (false, Some(_)) => {
                return refuse(format!(
                    "{at}: unsigned, but its writer signs (or a key was asked for)"
                ))
            }
            (false, None) => any_unsigned = true,
        }
    }
    if covered < last_n {
        return refuse(format!(
            "chain {chain}: records seq {}..{} reach no checkpoint",
            covered.max(first_n - 1),
            last_n - 1
        ));
    }
    check_request_keys(chain, list, keyid.as_deref())?;
    Ok(if any_unsigned { None } else { keyid })
}

/// A record signed with a `keyid` must be checkpointed by that key: a
/// bundle whose checkpoints another key signed is not the crawler's.
fn check_request_keys(
    chain: &str,
    list: &[(usize, &Record)],
    keyid: Option<&str>,
) -> Result<(), Refusal> {
    for (i, r) in list {
        if let Some(k) = &r.keyid {
            if keyid != Some(k.as_str()) {
                return refuse(format!(
                    "chain {chain}, records[{i}]: the request was signed with key {k}, the checkpoints {}",
                    keyid.map_or("are unsigned".to_owned(), |s| format!("with key {s}"))
                ));
            }
        }
    }
    Ok(())
}
