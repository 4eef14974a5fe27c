//! The Merkle tree a checkpoint signs: RFC 6962's (§2.1), over one leaf
//! per host chain, leaves in order of host. A leaf is SHA-256 of `0x00`
//! and the canonical bytes of `{"head":…,"host":…,"n":…}`; an inner node
//! SHA-256 of `0x01`, the left and the right. An audit path proves one
//! leaf is in the tree without showing any other leaf but by its hash.

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::chain::{hex, Hash};
use crate::jcs::canonical;

/// The leaf for `host`'s chain of `n` records ending in `head`.
pub fn leaf(host: &str, n: u64, head: &Hash) -> Hash {
    let body = canonical(&json!({"head": hex(head), "host": host, "n": n}));
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(&body);
    h.finalize().into()
}

fn node(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The largest power of two below `n` (n ≥ 2).
fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// The root over `leaves` (SHA-256 of nothing when there are none).
pub fn root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => Sha256::digest([]).into(),
        1 => leaves[0],
        n => {
            let k = split(n);
            node(&root(&leaves[..k]), &root(&leaves[k..]))
        }
    }
}

/// The audit path of leaf `index` among `leaves`, from the leaf up.
pub fn path(leaves: &[Hash], index: usize) -> Vec<Hash> {
    let n = leaves.len();
    if n <= 1 || index >= n {
        return Vec::new();
    }
    let k = split(n);
    if index < k {
        let mut p = path(&leaves[..k], index);
        p.push(root(&leaves[k..]));
        p
    } else {
        let mut p = path(&leaves[k..], index - k);
        p.push(root(&leaves[..k]));
        p
    }
}

/// The root that leaf `leaf`, at `index` of `size` leaves, reaches along
/// `path` (RFC 9162 §2.1.3.2); `None` when the path does not fit.
pub fn root_from_path(leaf: &Hash, index: u64, size: u64, path: &[Hash]) -> Option<Hash> {
    if index >= size {
        return None;
    }
    let (mut f_n, mut s_n) = (index, size - 1);
    let mut r = *leaf;
    for p in path {
        if s_n == 0 {
            return None;
        }
        if f_n & 1 == 1 || f_n == s_n {
            r = node(p, &r);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            r = node(&r, p);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    (s_n == 0).then_some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_leaf_of_every_size_reaches_the_root_and_no_other_place_does() {
        for n in 1..40usize {
            let leaves: Vec<Hash> = (0..n)
                .map(|i| leaf(&format!("h{i}"), i as u64, &[i as u8; 32]))
                .collect();
            let r = root(&leaves);
            for (i, l) in leaves.iter().enumerate() {
                let p = path(&leaves, i);
                assert_eq!(
                    root_from_path(l, i as u64, n as u64, &p),
                    Some(r),
                    "{i} of {n}"
                );
                if n > 1 {
                    let wrong = (i + 1) % n;
                    assert_ne!(root_from_path(l, wrong as u64, n as u64, &p), Some(r));
                }
            }
        }
    }
}
