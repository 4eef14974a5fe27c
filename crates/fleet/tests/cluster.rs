//! The fleet on a Redis Cluster of three nodes on 127.0.0.1 (created by
//! the test with `redis-cli --cluster create`; `.ci/run` installs
//! `redis-server`, and elsewhere these tests say SKIPPED without it): every
//! step lands on the node serving its partition, the reads that span
//! partitions gather from every node, the contract holds, and a node killed
//! and restarted mid-crawl loses nothing.

use std::collections::HashSet;
use std::time::Duration;

use mannerly_fleet::client::fleet_status;
use mannerly_fleet::layout::slot;
use mannerly_fleet::{connect, Connection, FleetConfig, FleetFrontier, Layout, TimeSource};
use mannerly_polite::controller::{Config, Politeness, UnixMillis};
use mannerly_polite::frontier::{Admission, Frontier, FrontierConfig, FrontierError, Next};
use mannerly_polite::testing::{check_contract, ops};
use mannerly_testsupport::RedisCluster;
use proptest::prelude::*;

mod common;
use common::{ok, T0};

fn cluster() -> Option<RedisCluster> {
    let c = RedisCluster::start(3);
    if c.is_none() {
        eprintln!("SKIPPED: redis-server or redis-cli is not installed");
    }
    c
}

async fn worker(
    url: &str,
    crawl: &str,
    partitions: u32,
    min_delay: u64,
) -> Result<FleetFrontier<Connection>, FrontierError> {
    let con = connect(url).await?;
    FleetFrontier::open(
        con,
        url,
        Layout::new(crawl, partitions).expect("layout"),
        Politeness::new(Config {
            min_delay,
            ..Config::default()
        }),
        FrontierConfig {
            robots_gate: false,
            ..FrontierConfig::default()
        },
        FleetConfig {
            lease: Duration::from_secs(60),
            time: TimeSource::Caller,
            claim: 1,
            ..FleetConfig::default()
        },
    )
    .await
}

/// The ports of the nodes serving the layout's partitions, from `CLUSTER
/// NODES` (a line per node: id, `ip:port@bus`, flags, ..., then its slot
/// ranges from the ninth field on).
fn nodes_of(cluster: &RedisCluster, layout: &Layout) -> HashSet<u16> {
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &cluster.nodes()[0].port().to_string()])
        .args(["cluster", "nodes"])
        .output()
        .expect("redis-cli");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut ranges: Vec<(u16, u16, u16)> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(port) = fields
            .get(1)
            .and_then(|a| a.split('@').next())
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| p.parse().ok())
        else {
            continue;
        };
        for range in fields.iter().skip(8) {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                ranges.push((a, b, port));
            }
        }
    }
    (0..layout.partitions())
        .filter_map(|p| {
            let s = slot(&layout.tag(p));
            ranges
                .iter()
                .find(|(a, b, _)| (*a..=*b).contains(&s))
                .map(|r| r.2)
        })
        .collect()
}

#[tokio::test]
async fn a_crawl_spread_over_three_nodes_fetches_everything_once() {
    let Some(cluster) = cluster() else { return };
    let url = cluster.url();
    let layout = Layout::new("spread", 64).expect("layout");
    assert_eq!(
        nodes_of(&cluster, &layout).len(),
        3,
        "the partitions are served by all three nodes"
    );
    let (hosts, per_host) = (40, 5);
    {
        let mut w = worker(&url, "spread", 64, 0).await.expect("seed");
        for h in 0..hosts {
            for i in 0..per_host {
                let u = format!("https://h{h}.test/{i}");
                assert_eq!(w.enqueue(&u, 0, T0).await.ok(), Some(Admission::Queued));
            }
        }
        // The reads that span partitions gather from all three nodes.
        let stats = w.stats().await.expect("stats");
        assert_eq!(stats.queued, hosts * per_host);
        assert_eq!(stats.keys, hosts);
        let busiest = w.busiest(3).await.expect("busiest");
        assert_eq!(busiest.len(), 3);
        assert!(busiest.iter().all(|k| k.queued == per_host));
    }
    let mut workers = Vec::new();
    for _ in 0..4 {
        workers.push(worker(&url, "spread", 64, 0).await.expect("worker"));
    }
    let (got, want) = (common::race(workers).await, common::grid(hosts, per_host));
    assert_eq!(got, want, "every URL exactly once");
    let status = fleet_status(&url, "spread", 1).await.expect("status");
    assert_eq!(status.partitions, 64);
    assert_eq!((status.queued, status.in_flight), (0, 0), "{status:?}");
}

/// Releases and completes at `now` (each fetch taking 10 ms) until 20
/// calls in a row release nothing.
async fn drain(w: &mut FleetFrontier<Connection>, now: UnixMillis, fetched: &mut HashSet<String>) {
    let mut idle = 0;
    while idle < 20 {
        match w.next(now).await.expect("next across the restart") {
            Next::Fetch(r) => {
                idle = 0;
                fetched.insert(r.url.clone());
                tokio::time::sleep(Duration::from_millis(10)).await;
                w.complete(&r, &ok(), now).await.expect("complete");
            }
            _ => {
                idle += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

#[tokio::test]
async fn a_node_killed_mid_crawl_comes_back_with_its_partitions() {
    let Some(mut cluster) = cluster() else { return };
    let url = cluster.url();
    assert!(
        nodes_of(&cluster, &Layout::new("restart", 16).expect("layout"))
            .contains(&cluster.nodes()[1].port()),
        "the node to be killed serves some of the crawl's partitions"
    );
    let mut w = worker(&url, "restart", 16, 0).await.expect("open");
    let urls: Vec<String> = (0..60)
        .map(|i| format!("https://r{}.test/{i}", i % 20))
        .collect();
    for u in &urls {
        w.enqueue(u, 0, T0).await.expect("enqueue");
    }
    let mut fetched = HashSet::new();
    for _ in 0..10 {
        if let Next::Fetch(r) = w.next(T0).await.expect("next") {
            fetched.insert(r.url.clone());
            w.complete(&r, &ok(), T0).await.expect("complete");
        }
    }
    // SIGKILL one node and start it again from its append-only file while
    // the worker goes on: calls to its partitions fail meanwhile and are
    // retried, and the connection finds the node again.
    let restarted = std::thread::spawn(move || {
        cluster.restart(1);
        cluster
    });
    drain(&mut w, T0, &mut fetched).await;
    let _cluster = restarted.join().expect("the node restarted");
    // A release the node made just before the kill, whose reply the kill
    // swallowed, stays in flight until its lease lapses (the retried call
    // finds its host busy): past the lease, such URLs come back.
    drain(&mut w, T0.add_millis(61_000), &mut fetched).await;
    let want: HashSet<String> = urls.into_iter().collect();
    assert_eq!(fetched, want, "no URL was lost with the node");
    assert_eq!(
        w.enqueue("https://r0.test/0", 0, T0).await.ok(),
        Some(Admission::Duplicate),
        "the seen-sets survived"
    );
}

/// The contract suite (one worker, one partition, the caller's clock;
/// 16 random sequences, shrunk on failure) through a Cluster connection:
/// the same answers as the embedded frontier.
#[test]
fn the_contract_holds_on_a_cluster() {
    let Some(cluster) = cluster() else { return };
    let url = cluster.url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let crawl = std::sync::atomic::AtomicU32::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 16,
        ..ProptestConfig::default()
    });
    let result = runner.run(&ops(), |ops| {
        let n = crawl.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("contract-{n}");
        rt.block_on(check_contract(&ops, true, |config| {
            let (url, name) = (url.clone(), name.clone());
            async move {
                let con = connect(&url).await?;
                common::contract_frontier(con, &url, &name, config).await
            }
        }))
        .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
