//! A fleet of `mannerly crawl --frontier redis://...` workers on the demo's
//! simulated web, judged from the server's own request log: a worker is
//! killed, another paused past its lease, a new one joins, and still no
//! host gets two requests at once or two closer than its delay, robots.txt
//! rules hold, and no page is missing. Needs `redis-server` (installed by
//! `.ci/run`; elsewhere the test says SKIPPED without it).

use std::process::Command;

use mannerly_testsupport::{RedisCluster, RedisServer};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

/// `mannerly demo` on 12 hosts with a 0.3 s delay, running `extra`.
fn start_demo(extra: &[&str]) -> std::process::Child {
    Command::new(BIN)
        .args(["demo", "--json", "--hosts", "12", "--min-delay", "0.3"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mannerly demo runs")
}

fn demo(extra: &[&str]) -> serde_json::Value {
    audit(start_demo(extra))
}

/// The workers' logs, one after another.
fn logs(dir: &std::path::Path, workers: &[&str]) -> String {
    workers
        .iter()
        .map(|w| std::fs::read_to_string(dir.join(format!("{w}.log"))).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// What `mannerly crawl --status --json` wrote to `status.json`.
fn status(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("status.json")).expect("status written"))
        .expect("status is JSON")
}

fn audit(child: std::process::Child) -> serde_json::Value {
    let out = child.wait_with_output().expect("mannerly demo ends");
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "the demo printed no audit ({e}):\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_fleet_that_loses_workers_stays_polite_and_misses_nothing() {
    let Some(server) = RedisServer::start(&[]) else {
        eprintln!("SKIPPED: redis-server is not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mannerly-fleet-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // What one crawler on its own fetches of the same web.
    let alone = demo(&[]);
    assert_eq!(alone["violations"], 0, "{alone}");
    let script = dir.join("fleet.sh");
    std::fs::write(
        &script,
        format!(
            r#"set -u
common="--proxy $MANNERLY_DEMO_PROXY --min-delay $MANNERLY_DEMO_DELAY --give-up-after 8 --frontier {url} --crawl-name chaos --partitions 64 --lease 3"
"{bin}" crawl $common --seeds "$MANNERLY_DEMO_SEEDS" --out "{d}/w0" >"{d}/w0.log" 2>&1 & p0=$!
sleep 0.3
"{bin}" crawl $common --join --out "{d}/w1" >"{d}/w1.log" 2>&1 & p1=$!
"{bin}" crawl $common --join --out "{d}/w2" >"{d}/w2.log" 2>&1 & p2=$!
sleep 1
kill -9 $p1                                  # a worker dies mid-crawl
kill -STOP $p2; sleep 4; kill -CONT $p2      # another stalls past its lease
"{bin}" crawl $common --join --out "{d}/w3" >"{d}/w3.log" 2>&1 & p3=$!
wait $p0 $p2 $p3
"{bin}" crawl --status --frontier {url} --crawl-name chaos --json >"{d}/status.json"
"#,
            url = server.url(),
            bin = BIN,
            d = dir.display()
        ),
    )
    .expect("script");
    let fleet = demo(&["--", "sh", &script.display().to_string()]);
    let logs = logs(&dir, &["w0", "w1", "w2", "w3"]);
    for kind in [
        "hosts_concurrent",
        "too_soon",
        "retry_after_ignored",
        "disallowed",
        "robots_not_first",
        "pages_while_robots_unavailable",
        "nofollow_followed",
    ] {
        assert_eq!(fleet[kind], 0, "{kind}: {fleet}\n{logs}");
    }
    assert_eq!(
        fleet["distinct_pages"], alone["distinct_pages"],
        "every page the lone crawler fetched, the fleet fetched: {fleet}\n{logs}"
    );
    let status = status(&dir);
    eprintln!("fleet status at the end: {status}");
    assert_eq!(status["partitions"], 64, "{status}");
    assert_eq!(status["in_flight"], 0, "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fleet_rides_out_a_server_restart() {
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let Some(mut server) = RedisServer::start(&aof) else {
        eprintln!("SKIPPED: redis-server is not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mannerly-fleet-restart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let alone = demo(&[]);
    let script = dir.join("fleet.sh");
    std::fs::write(
        &script,
        format!(
            r#"common="--proxy $MANNERLY_DEMO_PROXY --min-delay $MANNERLY_DEMO_DELAY --give-up-after 8 --frontier {url} --crawl-name restart --partitions 16 --lease 3"
"{bin}" crawl $common --seeds "$MANNERLY_DEMO_SEEDS" --out "{d}/w0" >"{d}/w0.log" 2>&1 &
"{bin}" crawl $common --seeds "$MANNERLY_DEMO_SEEDS" --out "{d}/w1" >"{d}/w1.log" 2>&1 &
wait
"#,
            url = server.url(),
            bin = BIN,
            d = dir.display()
        ),
    )
    .expect("script");
    let child = start_demo(&["--", "sh", &script.display().to_string()]);
    // Mid-crawl, the server is killed (SIGKILL) and started again: what it
    // had acknowledged is in its append-only file.
    std::thread::sleep(std::time::Duration::from_secs(2));
    server.restart(&aof);
    let fleet = audit(child);
    let logs = logs(&dir, &["w0", "w1"]);
    assert_eq!(fleet["violations"], 0, "{fleet}\n{logs}");
    assert_eq!(
        fleet["distinct_pages"], alone["distinct_pages"],
        "nothing queued was lost: {fleet}\n{logs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fleet_on_a_cluster_rides_out_a_node_restart() {
    let Some(mut cluster) = RedisCluster::start(3) else {
        eprintln!("SKIPPED: redis-server is not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("mannerly-fleet-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let alone = demo(&[]);
    // Workers are given one node's address or all three: either finds the
    // Cluster.
    let one = cluster.nodes()[2].url();
    let script = dir.join("fleet.sh");
    std::fs::write(
        &script,
        format!(
            r#"common="--proxy $MANNERLY_DEMO_PROXY --min-delay $MANNERLY_DEMO_DELAY --give-up-after 8 --crawl-name cl --partitions 64 --lease 3"
"{bin}" crawl $common --frontier {all} --seeds "$MANNERLY_DEMO_SEEDS" --out "{d}/w0" >"{d}/w0.log" 2>&1 &
sleep 0.3
"{bin}" crawl $common --frontier {one} --join --out "{d}/w1" >"{d}/w1.log" 2>&1 &
"{bin}" crawl $common --frontier {all} --join --out "{d}/w2" >"{d}/w2.log" 2>&1 &
wait
"{bin}" crawl --status --frontier {one} --crawl-name cl --json >"{d}/status.json"
"#,
            all = cluster.url(),
            one = one,
            bin = BIN,
            d = dir.display()
        ),
    )
    .expect("script");
    let child = start_demo(&["--", "sh", &script.display().to_string()]);
    // Mid-crawl, one node is killed (SIGKILL) and started again from its
    // append-only file.
    std::thread::sleep(std::time::Duration::from_secs(2));
    cluster.restart(0);
    let fleet = audit(child);
    let logs = logs(&dir, &["w0", "w1", "w2"]);
    assert_eq!(fleet["violations"], 0, "{fleet}\n{logs}");
    assert_eq!(
        fleet["distinct_pages"], alone["distinct_pages"],
        "nothing queued was lost: {fleet}\n{logs}"
    );
    let status = status(&dir);
    assert_eq!(status["partitions"], 64, "{status}");
    assert_eq!(status["in_flight"], 0, "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}
