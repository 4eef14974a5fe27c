//! One crawler's view of a parsed file ([`AgentRules`]): its rules sorted
//! into decision order once and indexed by the first bytes of their
//! literal prefix, for checking many URLs fast.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::*;

/// One crawler's view of a robots.txt file, for checking many URLs fast.
///
/// Rules are sorted once into decision order (priority, then Allow before
/// Disallow, then file order), so the first matching rule decides; answers
/// are identical to [`Robots::explain`]. A rule can only match a path that
/// starts with the rule's literal prefix (the bytes before its first `*`),
/// so rules are also indexed by the first bytes of that prefix and a check
/// only tries the rules of the path's bucket plus the few rules whose
/// prefix is too short to index.
#[derive(Debug, Clone)]
pub struct AgentRules<'r> {
    robots: &'r Robots,
    agent_match: AgentMatch,
    groups: Vec<usize>,
    /// Rule indexes in decision order.
    order: Vec<usize>,
    /// Positions in `order` of rules whose literal prefix is shorter than
    /// [`KEY_LEN`]: tried for every path.
    short: Vec<u32>,
    /// Positions in `order` of the other rules, by the first [`KEY_LEN`]
    /// bytes of their literal prefix, each list ascending.
    by_key: HashMap<[u8; KEY_LEN], Vec<u32>, BuildHasherDefault<KeyHasher>>,
}

/// Bytes of the literal prefix used as the index key.
const KEY_LEN: usize = 3;

/// Below this many rules the index costs more than it saves.
const INDEX_MIN_RULES: usize = 12;

/// A multiplicative hash for the three-byte keys (SipHash would cost more
/// than the lookup saves; the keys come from one file, so flooding is moot:
/// at worst every rule shares a bucket, which is the unindexed scan).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
}

/// A 64-bit summary of which bytes occur in `bytes` (byte value mod 64).
/// If a pattern's mask has a bit the path's lacks, some literal byte of the
/// pattern is absent from the path and it cannot match.
pub(crate) fn byte_mask(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |m, &b| m | 1 << (b & 63))
}

/// The bytes every path matching `pattern` must start with.
fn literal_prefix(pattern: &[u8]) -> &[u8] {
    match memchr::memchr(b'*', pattern) {
        Some(i) => &pattern[..i],
        None => pattern.strip_suffix(b"$").unwrap_or(pattern),
    }
}

impl<'r> AgentRules<'r> {
    pub(super) fn new(
        robots: &'r Robots,
        agent_match: AgentMatch,
        groups: Vec<usize>,
        order: Vec<usize>,
    ) -> Self {
        let mut short = Vec::new();
        let mut by_key: HashMap<[u8; KEY_LEN], Vec<u32>, BuildHasherDefault<KeyHasher>> =
            HashMap::default();
        if order.len() >= INDEX_MIN_RULES {
            for (rank, &i) in order.iter().enumerate() {
                let prefix = literal_prefix(robots.rules[i].effective.as_bytes());
                match prefix
                    .get(..KEY_LEN)
                    .and_then(|k| <[u8; KEY_LEN]>::try_from(k).ok())
                {
                    Some(key) => by_key.entry(key).or_default().push(rank as u32),
                    None => short.push(rank as u32),
                }
            }
        }
        AgentRules {
            robots,
            agent_match,
            groups,
            order,
            short,
            by_key,
        }
    }

    /// How the agent selected groups.
    pub fn agent_match(&self) -> AgentMatch {
        self.agent_match
    }

    /// Whether the agent may fetch `url`.
    pub fn is_allowed(&self, url: &str) -> bool {
        let path = self.robots.normalized_path(url);
        self.decide(&path).0
    }

    /// Whether the agent may fetch `url`, and the deciding rule (borrowed
    /// from the file): what [`explain`](Self::explain) says, without
    /// building a [`Verdict`] (no allocation), for servers that answer
    /// many URLs.
    pub fn lookup(&self, url: &str) -> (bool, Option<&'r Rule>) {
        let path = self.robots.normalized_path(url);
        let (allowed, rule) = self.decide(&path);
        (allowed, rule.and_then(|i| self.robots.rules.get(i)))
    }

    /// Whether the agent may fetch `url`, and why.
    pub fn explain(&self, url: &str) -> Verdict {
        let path = self.robots.normalized_path(url);
        let (allowed, rule) = self.decide(&path);
        self.robots.verdict(
            &self.robots.groups,
            allowed,
            rule,
            self.agent_match,
            &self.groups,
            true,
        )
    }

    fn try_rule(&self, i: usize, path: &[u8], mask: u64) -> Option<(bool, Option<usize>)> {
        let rule = &self.robots.rules[i];
        rule.matches_masked(path, mask).then(|| {
            (
                rule.kind == RuleKind::Allow || rule.effective.is_empty(),
                Some(i),
            )
        })
    }

    /// The decision for an already extracted (and, in RFC mode, normalised)
    /// path: (allowed, deciding rule index).
    fn decide(&self, path: &[u8]) -> (bool, Option<usize>) {
        let mask = byte_mask(path);
        if self.order.len() < INDEX_MIN_RULES {
            return self
                .order
                .iter()
                .find_map(|&i| self.try_rule(i, path, mask))
                .unwrap_or((true, None));
        }
        let bucket: &[u32] = path
            .get(..KEY_LEN)
            .and_then(|k| <[u8; KEY_LEN]>::try_from(k).ok())
            .and_then(|k| self.by_key.get(&k))
            .map_or(&[], Vec::as_slice);
        // Merge the two ascending rank lists; the first match decides.
        let (mut a, mut b) = (0, 0);
        loop {
            let rank = match (self.short.get(a), bucket.get(b)) {
                (Some(&x), Some(&y)) if x < y => {
                    a += 1;
                    x
                }
                (_, Some(&y)) => {
                    b += 1;
                    y
                }
                (Some(&x), None) => {
                    a += 1;
                    x
                }
                (None, None) => return (true, None),
            };
            if let Some(d) = self.try_rule(self.order[rank as usize], path, mask) {
                return d;
            }
        }
    }
}
