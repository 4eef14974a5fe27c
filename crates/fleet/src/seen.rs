//! A worker's memory of the URLs the store already answered for, so a link
//! it meets again (a site's menu, on every page) costs the server nothing.
//!
//! The store's seen-set is the truth; this is a copy of the part of it this
//! worker was told about, and it is only as good as the store's memory. A
//! server that restarts may come back without its last writes (`appendfsync
//! everysec`), and then a URL remembered here may be gone there: answered
//! "duplicate" from here, it would be forgotten for good. So the cache is
//! tied to the connection's *incarnation* (a number that changes whenever
//! the connection failed and may have reached a new server since, see
//! [`FleetConnection::incarnation`](crate::client::FleetConnection::incarnation)):
//!
//! - When the incarnation changes, the cache is emptied.
//! - An offer answered from the cache is also *held* until a round trip
//!   shows the incarnation unchanged after it. If instead it has changed,
//!   every held offer is sent again (*replayed*): the store may have lost
//!   it before the offer was answered here.
//!
//! So every offer the store might have lost reaches the store after the
//! change, as it would with no cache; what the cache answers is only what
//! the same server had already answered. A connection that cannot tell
//! (`None`: a Cluster, whose client follows a failover by itself) gets no
//! cache.
//!
//! What the cache answers differs from the store in one way: a URL it
//! remembers is "duplicate" even where the store would now answer that the
//! host was skipped (a bound reached does not differ: the store, as the
//! embedded frontier, answers "duplicate" first). Either way the URL is not
//! queued again; it already was, once. And an offer sent again after a
//! restart was answered already: if the store now turns it away (a bound
//! reached meanwhile), that answer reaches no caller.
//!
//! No I/O here: the frontier tells the cache what it offered, what the
//! store answered and which incarnation each round trip saw.

use std::collections::HashSet;

/// An offer answered from the cache, kept until it is known the store still
/// had what the cache remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    pub url: String,
    pub priority: u8,
    pub tag: u32,
}

/// Held offers past this many are sent to the store instead (a worker
/// that makes no round trip for that long is not saving much).
const HELD_MAX: usize = 65_536;

#[derive(Debug)]
pub(crate) struct SeenCache {
    /// Fingerprints at most; past this the cache starts again empty.
    max: usize,
    known: HashSet<u128>,
    /// The incarnation `known` was filled under (`None`: no cache).
    incarnation: Option<u64>,
    held: Vec<Held>,
    replay: Vec<Held>,
}

impl SeenCache {
    /// A cache of at most `max` fingerprints (0: none), for a connection
    /// now at `incarnation`.
    pub(crate) fn new(max: usize, incarnation: Option<u64>) -> SeenCache {
        SeenCache {
            max,
            known: HashSet::new(),
            incarnation,
            held: Vec::new(),
            replay: Vec::new(),
        }
    }

    fn on(&self) -> bool {
        self.max > 0 && self.incarnation.is_some()
    }

    /// Whether the store already answered for `fp`: then the offer is
    /// answered "duplicate" here, and held.
    pub(crate) fn answers(&mut self, fp: u128, offer: impl FnOnce() -> Held) -> bool {
        if !self.on() || self.held.len() >= HELD_MAX || !self.known.contains(&fp) {
            return false;
        }
        self.held.push(offer());
        true
    }

    /// The store answered `fp` queued or duplicate.
    pub(crate) fn remember(&mut self, fp: u128) {
        if !self.on() {
            return;
        }
        if self.known.len() >= self.max {
            self.known.clear();
        }
        self.known.insert(fp);
    }

    /// A round trip ended, and the connection is now at `incarnation`.
    pub(crate) fn round_trip(&mut self, incarnation: Option<u64>) {
        if incarnation == self.incarnation {
            // The same server answered after the held offers were
            // answered here: it had what the cache remembered.
            self.held.clear();
            return;
        }
        self.known.clear();
        self.replay.append(&mut self.held);
        self.incarnation = incarnation;
    }

    /// Offers to send to the store again.
    pub(crate) fn take_replay(&mut self) -> Vec<Held> {
        std::mem::take(&mut self.replay)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.known.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(url: &str) -> Held {
        Held {
            url: url.to_owned(),
            priority: 3,
            tag: 7,
        }
    }

    #[test]
    fn what_the_store_answered_is_answered_here_after() {
        let mut c = SeenCache::new(10, Some(0));
        assert!(!c.answers(1, || held("a")));
        c.remember(1);
        assert!(c.answers(1, || held("a")));
        assert!(!c.answers(2, || held("b")));
    }

    #[test]
    fn a_round_trip_to_the_same_server_lets_go_of_held_offers() {
        let mut c = SeenCache::new(10, Some(4));
        c.remember(1);
        assert!(c.answers(1, || held("a")));
        c.round_trip(Some(4));
        assert!(c.take_replay().is_empty());
        assert!(c.answers(1, || held("a")), "still remembered");
    }

    #[test]
    fn a_new_incarnation_empties_the_cache_and_replays_what_it_answered() {
        let mut c = SeenCache::new(10, Some(4));
        c.remember(1);
        c.remember(2);
        assert!(c.answers(1, || held("a")));
        assert!(c.answers(2, || held("b")));
        c.round_trip(Some(5));
        assert_eq!(c.take_replay(), vec![held("a"), held("b")]);
        assert!(c.take_replay().is_empty());
        assert!(!c.answers(1, || held("a")), "forgotten");
        c.remember(1);
        assert!(c.answers(1, || held("a")), "filled again under the new one");
    }

    #[test]
    fn a_connection_that_cannot_tell_gets_no_cache() {
        let mut c = SeenCache::new(10, None);
        c.remember(1);
        assert!(!c.answers(1, || held("a")));
        let mut off = SeenCache::new(0, Some(0));
        off.remember(1);
        assert!(!off.answers(1, || held("a")));
        // A connection that loses the means to tell drops what it had.
        let mut c = SeenCache::new(10, Some(1));
        c.remember(1);
        c.round_trip(None);
        c.remember(1);
        assert!(!c.answers(1, || held("a")));
    }

    #[test]
    fn the_cache_starts_again_when_full() {
        let mut c = SeenCache::new(3, Some(0));
        for fp in 0..3 {
            c.remember(fp);
        }
        assert_eq!(c.len(), 3);
        c.remember(3);
        assert_eq!(c.len(), 1);
        assert!(c.answers(3, || held("d")));
        assert!(!c.answers(0, || held("a")));
    }

    #[test]
    fn held_offers_are_bounded() {
        let mut c = SeenCache::new(10, Some(0));
        c.remember(1);
        for _ in 0..HELD_MAX {
            assert!(c.answers(1, || held("a")));
        }
        assert!(!c.answers(1, || held("a")), "sent to the store instead");
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// The worker meets a link.
        Offer(u128),
        /// The server restarts, losing everything (`true`) or nothing; the
        /// worker learns of it on its next round trip.
        Restart(bool),
        /// A round trip with no offer in it (a release, a completion).
        RoundTrip,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            6 => (0u128..12).prop_map(Op::Offer),
            1 => any::<bool>().prop_map(Op::Restart),
            2 => Just(Op::RoundTrip),
        ]
    }

    /// The store a worker with a cache of `max` leaves behind: what a
    /// server holds after `ops`, each offer the cache does not answer sent
    /// in a round trip of its own.
    fn play(ops: &[Op], max: usize) -> HashSet<u128> {
        struct World {
            store: HashSet<u128>,
            incarnation: u64,
            restarted: bool,
            cache: SeenCache,
        }
        impl World {
            /// A round trip (carrying the offer `sent`): it finds a
            /// restarted server (a new incarnation), and whatever the cache
            /// then gives back is sent again.
            fn trip(&mut self, sent: Option<u128>) {
                if std::mem::take(&mut self.restarted) {
                    self.incarnation += 1;
                }
                self.cache.round_trip(Some(self.incarnation));
                let replayed = self.cache.take_replay();
                let fps = replayed.iter().map(|h| h.url.parse().unwrap_or_default());
                for fp in sent.into_iter().chain(fps) {
                    self.store.insert(fp);
                    self.cache.remember(fp);
                }
            }
        }
        let mut w = World {
            store: HashSet::new(),
            incarnation: 0,
            restarted: false,
            cache: SeenCache::new(max, Some(0)),
        };
        for op in ops.iter().chain([&Op::RoundTrip]) {
            match op {
                Op::Offer(fp) => {
                    let h = || Held {
                        url: fp.to_string(),
                        priority: 0,
                        tag: 0,
                    };
                    if !w.cache.answers(*fp, h) {
                        w.trip(Some(*fp));
                    }
                }
                Op::Restart(lose) => {
                    if *lose {
                        w.store.clear();
                    }
                    w.restarted = true;
                }
                Op::RoundTrip => w.trip(None),
            }
        }
        w.store
    }

    proptest::proptest! {
        /// Whatever the restarts, the store ends holding all it would have
        /// held had every offer been sent to it (and more only where an
        /// offer the cache answered before a restart was sent again after
        /// it), and nothing never offered.
        #[test]
        fn the_store_forgets_nothing_it_would_have_kept_without_the_cache(
            ops in proptest::collection::vec(op(), 0..60),
            max in 1usize..16,
        ) {
            let (with, without) = (play(&ops, max), play(&ops, 0));
            proptest::prop_assert!(with.is_superset(&without), "{with:?} {without:?}");
            let offered: HashSet<u128> = ops
                .iter()
                .filter_map(|o| match o {
                    Op::Offer(fp) => Some(*fp),
                    _ => None,
                })
                .collect();
            proptest::prop_assert!(with.is_subset(&offered));
        }
    }
}
