//! Verifying a bundle: every chain unbroken from its first record given
//! to a checkpoint, every checkpoint's root reached by its proof and
//! signed by the writer's key. A refusal says what is wrong and where.

use std::collections::BTreeMap;

use crate::bundle::{Bundle, Window, BUNDLE_VERSION};
use crate::chain::{from_hex, hex, next_head, record_digest, Hash};
use crate::checkpoint::PublicKey;
use crate::merkle;
use crate::record::Record;
use crate::refusal::{Edge, Refusal};

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

fn refuse<T>(why: Refusal) -> Result<T, Refusal> {
    Err(why)
}

/// Verifies `bundle`. With `key`, every checkpoint must be signed by it;
/// without, by its writer's own key when the writer names one.
pub fn verify(bundle: &Bundle, key: Option<&PublicKey>) -> Result<Verified, Refusal> {
    if bundle.v != BUNDLE_VERSION {
        return refuse(Refusal::Version {
            found: bundle.v,
            reads: BUNDLE_VERSION,
        });
    }
    let records = bundle
        .records
        .iter()
        .enumerate()
        .map(|(index, v)| {
            serde_json::from_value::<Record>(v.clone()).map_err(|e| Refusal::Unreadable {
                index,
                why: e.to_string(),
            })
        })
        .collect::<Result<Vec<Record>, Refusal>>()?;
    if records.is_empty() {
        return refuse(Refusal::Empty);
    }
    let Some(window) = bundle.window.window() else {
        return refuse(Refusal::Window(format!("{:?}", bundle.window)));
    };
    let mut chains: BTreeMap<&str, Vec<(usize, &Record)>> = BTreeMap::new();
    let mut last: Option<(u64, &str, u64)> = None;
    for (i, r) in records.iter().enumerate() {
        let (index, chain, seq) = (i, r.chain.clone(), r.seq);
        if r.host != bundle.host {
            return refuse(Refusal::ForeignHost {
                index,
                chain,
                seq,
                host: r.host.clone(),
                bundle_host: bundle.host.clone(),
            });
        }
        let Some(ms) = r.millis() else {
            let time = r.time.clone();
            return refuse(Refusal::Time {
                index,
                chain,
                seq,
                time,
            });
        };
        if !window.holds(Some(ms)) {
            let time = r.time.clone();
            return refuse(Refusal::OutsideWindow {
                index,
                chain,
                seq,
                time,
            });
        }
        let key = (ms, r.chain.as_str(), r.seq);
        if last.is_some_and(|l| l > key) {
            return refuse(Refusal::OutOfOrder { index, chain, seq });
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
        return refuse(Refusal::BadPrev {
            chain: chain.to_owned(),
            seq: first.seq,
        });
    };
    if first.seq > 0 {
        check_before(bundle, chain, first, &head, window)?;
    }
    let mut heads = BTreeMap::new();
    let mut expect = first.seq;
    for (i, r) in list {
        let (chain, index) = (chain.to_owned(), *i);
        if r.seq > expect {
            return refuse(Refusal::Dropped {
                chain,
                index,
                from: expect,
                to: r.seq - 1,
            });
        }
        if r.seq < expect {
            let seq = r.seq;
            return refuse(Refusal::Misplaced { chain, index, seq });
        }
        if r.prev != hex(&head) {
            let seq = r.seq;
            return refuse(Refusal::Unlinked { chain, index, seq });
        }
        head = next_head(&head, &record_digest(&bundle.records[*i]));
        expect += 1;
        heads.insert(expect, head);
    }
    let tail = bundle.tails.get(chain).map_or(&[][..], Vec::as_slice);
    match bundle.after.get(chain) {
        Some(after) => {
            let r = edge(after, chain, Edge::After)?;
            let late = window
                .until
                .is_some_and(|u| r.millis().is_some_and(|t| t > u));
            if r.seq != expect || !late {
                return refuse(Refusal::NotFirstAfter {
                    chain: chain.to_owned(),
                    seq: r.seq,
                    time: r.time,
                });
            }
            head = next_head(&head, &record_digest(after));
            expect += 1;
            heads.insert(expect, head);
        }
        None if !tail.is_empty() => {
            return refuse(Refusal::TailWithoutAfter {
                chain: chain.to_owned(),
                count: tail.len(),
                seq: expect - 1,
            });
        }
        None => {}
    }
    for (j, d) in tail.iter().enumerate() {
        let Some(d) = from_hex(d) else {
            return refuse(Refusal::TailNotDigest {
                chain: chain.to_owned(),
                index: j,
            });
        };
        head = next_head(&head, &d);
        expect += 1;
        heads.insert(expect, head);
    }
    Ok(heads)
}

/// A record at a window's edge, read.
fn edge(value: &serde_json::Value, chain: &str, edge: Edge) -> Result<Record, Refusal> {
    let r: Record = serde_json::from_value(value.clone()).map_err(|e| Refusal::EdgeUnreadable {
        chain: chain.to_owned(),
        edge,
        why: e.to_string(),
    })?;
    if r.chain != chain {
        return refuse(Refusal::EdgeOtherChain {
            chain: chain.to_owned(),
            edge,
            other: r.chain,
        });
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
        refuse(Refusal::LeftOut {
            chain: chain.to_owned(),
            seq: first.seq,
        })
    };
    let Some(value) = bundle.before.get(chain) else {
        return left_out();
    };
    let r = edge(value, chain, Edge::Before)?;
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
            return refuse(Refusal::NoSuchCheckpoint {
                checkpoint: p.checkpoint,
                of: bundle.checkpoints.len(),
            });
        };
        if c.chain != chain {
            continue;
        }
        let (chain, time) = (chain.to_owned(), c.time.clone());
        let path: Option<Vec<Hash>> = p.path.iter().map(|h| from_hex(h)).collect();
        let (Some(path), Some(head)) = (path, from_hex(&p.head)) else {
            return refuse(Refusal::ProofNotHex { chain, time });
        };
        let leaf = merkle::leaf(&bundle.host, p.n, &head);
        let reached = merkle::root_from_path(&leaf, p.index, c.hosts, &path).map(|r| hex(&r));
        if reached.as_deref() != Some(c.root.as_str()) {
            return refuse(Refusal::ProofOffRoot { chain, time });
        }
        if p.n >= first_n {
            if heads.get(&p.n) != Some(&head) {
                let seq = p.n - 1;
                return refuse(Refusal::Unreached { chain, time, seq });
            }
            covered = covered.max(p.n);
        }
        match (c.is_signed(), key) {
            (true, Some(k)) => {
                c.verify(k).map_err(|e| Refusal::Signature {
                    chain,
                    time,
                    problem: e.into(),
                })?;
                keyid = Some(k.thumbprint());
            }
            (true, None) => return refuse(Refusal::NoKey { chain, time }),
            (false, Some(_)) => return refuse(Refusal::Unsigned { chain, time }),
            (false, None) => any_unsigned = true,
        }
    }
    if covered < last_n {
        return refuse(Refusal::Uncovered {
            chain: chain.to_owned(),
            from: covered.max(first_n - 1),
            to: last_n - 1,
        });
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
                return refuse(Refusal::OtherKey {
                    chain: chain.to_owned(),
                    index: *i,
                    key: k.clone(),
                    checkpoints: keyid.map(str::to_owned),
                });
            }
        }
    }
    Ok(())
}
