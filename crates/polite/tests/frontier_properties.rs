//! The backend contract (`mannerly_polite::testing`), run against the
//! on-disk frontier: random sequences of enqueues (random hosts and
//! priorities, duplicates included), releases, completions with random
//! statuses, cancellations and robots.txt reports, with a one-URL window on
//! disk (so nearly every release refills from disk) and the store closed
//! and reopened at random points with nothing in flight. Every answer must
//! be the in-memory reference's. The in-memory backend runs the contract
//! too (against itself: a check that the contract's own harness is
//! deterministic). Both run again with at most two hosts open at a time,
//! and with three requests a host at once (a page in flight keeps its
//! entry queued on disk until it settles: refills must pass it by).

use mannerly_polite::controller::{Config, Politeness};
use mannerly_polite::frontier::{FrontierConfig, LocalFrontier};
use mannerly_polite::testing::{
    block_on, check_contract, check_contract_under, check_contract_with, contract_config,
    contract_politeness, ops,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn disk_and_memory_agree(ops in ops()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let result = block_on(check_contract(&ops, true, |config| {
            let path = dir.path().to_owned();
            async move {
                LocalFrontier::open(&path, contract_politeness(), FrontierConfig { window: 1, ..config })
            }
        }));
        prop_assert_eq!(result, Ok(()));
    }

    #[test]
    fn memory_keeps_the_contract(ops in ops()) {
        let result = block_on(check_contract(&ops, false, |config| async move {
            Ok(LocalFrontier::in_memory(contract_politeness(), config))
        }));
        prop_assert_eq!(result, Ok(()));
    }
}

proptest! {
    // Fewer cases: the bound is one more rule over the same calls.
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// With two hosts open at a time, the disk frontier parks and opens
    /// hosts exactly as memory does.
    #[test]
    fn disk_and_memory_agree_with_two_open_hosts(ops in ops()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = FrontierConfig { max_open_keys: 2, ..contract_config() };
        let result = block_on(check_contract_with(&ops, true, config, |config| {
            let path = dir.path().to_owned();
            async move {
                LocalFrontier::open(&path, contract_politeness(), FrontierConfig { window: 1, ..config })
            }
        }));
        prop_assert_eq!(result, Ok(()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Three requests a host at once, a one-URL window: releases refill
    /// the window while the host's other pages are in flight, their
    /// entries still queued on disk, and release each page once.
    #[test]
    fn disk_and_memory_agree_with_three_requests_a_host(ops in ops()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let politeness = Config { max_in_flight: 3, ..Config::default() };
        let result = block_on(check_contract_under(&ops, true, contract_config(), politeness.clone(), |config| {
            let path = dir.path().to_owned();
            let politeness = Politeness::new(politeness.clone());
            async move {
                LocalFrontier::open(&path, politeness, FrontierConfig { window: 1, ..config })
            }
        }));
        prop_assert_eq!(result, Ok(()));
    }
}
