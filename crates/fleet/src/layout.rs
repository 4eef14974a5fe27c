//! Where a host's state lives: its partition, and the hash-tagged names of
//! the partition's keys.
//!
//! `partition = xxh3(host key) % P`, with P fixed when the crawl is created.
//! Every key of a partition starts with the same hash tag,
//! `{<crawl>:<partition>}`, so Redis Cluster puts them in one slot and each
//! script (which touches one partition) runs on one node, atomically. On a
//! standalone server the tag is only part of the name.

/// Partitions in a new crawl (1024): enough that a fleet's workers rarely
/// contend on one, few enough that a status scan is quick.
pub const DEFAULT_PARTITIONS: u32 = 1024;

/// The key layout of one crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    crawl: String,
    partitions: u32,
}

/// A crawl name that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// Empty, too long, or with characters that would break a hash tag.
    #[error("crawl name {0:?} must be 1 to 64 characters of letters, digits, '-', '_' and '.'")]
    BadName(String),
    /// No partitions, or more than 65,536.
    #[error("{0} partitions: use 1 to 65536")]
    BadPartitions(u32),
}

impl Layout {
    /// The layout of crawl `crawl` with `partitions` partitions.
    pub fn new(crawl: &str, partitions: u32) -> Result<Layout, LayoutError> {
        let ok = !crawl.is_empty()
            && crawl.len() <= 64
            && crawl
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !ok {
            return Err(LayoutError::BadName(crawl.to_owned()));
        }
        if partitions == 0 || partitions > 65_536 {
            return Err(LayoutError::BadPartitions(partitions));
        }
        Ok(Layout {
            crawl: crawl.to_owned(),
            partitions,
        })
    }

    /// The crawl's name.
    pub fn crawl(&self) -> &str {
        &self.crawl
    }

    /// How many partitions.
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// The partition a politeness key (a host) belongs to.
    pub fn partition_of(&self, key: &str) -> u32 {
        (xxhash_rust::xxh3::xxh3_64(key.as_bytes()) % u64::from(self.partitions)) as u32
    }

    /// The prefix every key of partition `p` starts with, hash tag
    /// included: `{crawl:p}`.
    pub fn tag(&self, p: u32) -> String {
        format!("{{{}:{p}}}", self.crawl)
    }

    /// The crawl-wide key holding its settings (`{crawl}:meta`), which
    /// fixes P for every worker that joins.
    pub fn meta_key(&self) -> String {
        format!("{{{}}}:meta", self.crawl)
    }

    /// The crawl-wide hash of workers and when each last reported.
    pub fn workers_key(&self) -> String {
        format!("{{{}}}:workers", self.crawl)
    }

    /// The crawl-wide board (a sorted set: partition → sequence number of
    /// the last change posted there), read by idle workers so that they
    /// probe only the partitions that changed.
    pub fn board_key(&self) -> String {
        format!("{{{}}}:board", self.crawl)
    }

    /// The counter that numbers the board's posts.
    pub fn board_seq_key(&self) -> String {
        format!("{{{}}}:boardseq", self.crawl)
    }

    /// The key of one of partition `p`'s structures (`due`, `lease`, ...).
    pub fn key(&self, p: u32, what: &str) -> String {
        format!("{}:{what}", self.tag(p))
    }

    /// The key of host `key`'s queue.
    pub fn queue(&self, key: &str) -> String {
        format!("{}:q:{key}", self.tag(self.partition_of(key)))
    }
}

/// The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, or of
/// the whole key when it has none, modulo 16384), as the server computes it.
pub fn slot(key: &str) -> u16 {
    let b = key.as_bytes();
    let hashed = match b.iter().position(|&c| c == b'{') {
        Some(open) => match b[open + 1..].iter().position(|&c| c == b'}') {
            Some(len) if len > 0 => &b[open + 1..open + 1 + len],
            _ => b,
        },
        None => b,
    };
    crc16_xmodem(hashed) % 16_384
}

fn crc16_xmodem(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_a_host_lands_in_one_slot() {
        let l = Layout::new("crawl-1", 1024).expect("layout");
        for host in [
            "example.com",
            "a.b.example.org",
            "xn--bcher-kva.example",
            "h7.test:8080",
        ] {
            let p = l.partition_of(host);
            let want = slot(&l.queue(host));
            for what in ["due", "lease", "own", "state", "seen", "meta", "robots"] {
                assert_eq!(slot(&l.key(p, what)), want, "{host} {what}");
            }
        }
    }

    #[test]
    fn the_slot_function_matches_the_cluster_spec() {
        // The example from the Redis Cluster specification.
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(slot("{user1000}.following"), slot("{user1000}.followers"));
        assert_eq!(slot("foo{}{bar}"), crc16_xmodem(b"foo{}{bar}") % 16_384);
        assert_eq!(slot("foo{{bar}}zap"), crc16_xmodem(b"{bar") % 16_384);
    }

    #[test]
    fn partitions_spread_hosts() {
        let l = Layout::new("c", 16).expect("layout");
        let mut counts = [0u32; 16];
        for i in 0..16_000 {
            counts[l.partition_of(&format!("site{i}.test")) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn bad_names_and_sizes_are_refused() {
        assert!(Layout::new("", 4).is_err());
        assert!(Layout::new("a{b}", 4).is_err());
        assert!(Layout::new("ok", 0).is_err());
        assert!(Layout::new("ok", 70_000).is_err());
        assert_eq!(
            Layout::new("a b", 4).expect_err("a space").to_string(),
            "crawl name \"a b\" must be 1 to 64 characters of letters, digits, '-', '_' and '.'"
        );
    }
}
