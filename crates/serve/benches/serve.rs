//! `mannerly serve` on loopback: single-URL `/api/check` latency at a
//! fixed 1,000 requests/s and the most requests/s a closed loop reaches;
//! and `/api/batch` checks/s for origins already cached, beside the
//! library's own checks/s on the same files and URLs, in the same run.
//!
//! Run: `cargo bench -p mannerly-serve --bench serve`. Uses the corpus in
//! `../shared/corpus` (every file served by testweb as its own origin, each
//! batch the file's own URLs repeated to 1,000); without it, a built-in
//! file (and says so). Client, server and testweb share this machine.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mannerly_fetch::{FetchConfig, HttpFetcher};
use mannerly_robots::Robots;
use mannerly_serve::{router_with, ServeConfig};
use mannerly_testweb::{HostSpec, TestWeb, WebConfig};
use serde_json::json;

const BATCH: usize = 1_000;
const AGENT: &str = "Googlebot";

struct File {
    body: String,
    paths: Vec<String>,
}

fn corpus() -> Option<Vec<File>> {
    let dir = std::env::var_os("MANNERLY_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
        .join("corpus");
    let expected = std::fs::read_to_string(dir.join("expected.jsonl")).ok()?;
    let mut files = Vec::new();
    for line in expected.lines() {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let id = v["id"].as_str()?;
        let body = std::fs::read(dir.join("files").join(format!("{id}.txt"))).ok()?;
        let paths: Vec<String> = v["urls"]
            .as_array()?
            .iter()
            .filter_map(|u| u.as_str().map(str::to_owned))
            .collect();
        if paths.is_empty() {
            continue;
        }
        files.push(File {
            body: String::from_utf8_lossy(&body).into_owned(),
            paths,
        });
    }
    Some(files)
}

fn builtin() -> Vec<File> {
    vec![File {
        body: "User-agent: *\nDisallow: /private/\nAllow: /private/ok\nDisallow: /*.pdf$\n\nUser-agent: Googlebot\nDisallow: /nogoogle/\n".into(),
        paths: ["/", "/private/x", "/private/ok", "/a.pdf", "/nogoogle/x", "/b/c?d"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    }]
}

/// The file's paths repeated to one batch.
fn batch_of(f: &File) -> Vec<String> {
    f.paths.iter().cycle().take(BATCH).cloned().collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let (files, source) = match corpus() {
        Some(f) => (f, "the shared corpus"),
        None => {
            eprintln!("SKIPPED the corpus: ../shared/corpus not found; using a built-in file");
            (builtin(), "a built-in file")
        }
    };
    let batches: Vec<Vec<String>> = files.iter().map(batch_of).collect();

    // The library on the same files and URLs: parse once (as the server's
    // cache does), then per batch the agent's view and every check.
    let parsed: Vec<Robots> = files
        .iter()
        .map(|f| Robots::parse(f.body.as_bytes()))
        .collect();
    let mut best_allowed = Duration::MAX;
    let mut best_explain = Duration::MAX;
    let mut sink = 0usize;
    for _ in 0..3 {
        let t = Instant::now();
        for (r, b) in parsed.iter().zip(&batches) {
            let view = r.for_agent(AGENT);
            sink += b.iter().filter(|u| view.is_allowed(u)).count();
        }
        best_allowed = best_allowed.min(t.elapsed());
        let t = Instant::now();
        for (r, b) in parsed.iter().zip(&batches) {
            let view = r.for_agent(AGENT);
            sink += b
                .iter()
                .map(|u| view.explain(u).rule.map_or(0, |r| r.line as usize))
                .sum::<usize>();
        }
        best_explain = best_explain.min(t.elapsed());
    }
    let checks = batches.len() * BATCH;
    let lib_allowed = checks as f64 / best_allowed.as_secs_f64();
    let lib_explain = checks as f64 / best_explain.as_secs_f64();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        // testweb serves every file as its own origin.
        let mut config = WebConfig {
            record: false,
            ..WebConfig::default()
        };
        for (i, f) in files.iter().enumerate() {
            config
                .hosts
                .insert(format!("h{i}.test"), HostSpec::default().robots(f.body.clone()));
        }
        let web = TestWeb::start(config).await.expect("testweb");
        let fetch = FetchConfig::default();
        let client = HttpFetcher::client_builder(&fetch)
            .dns_resolver(web.resolver())
            .build()
            .expect("client");
        let app = router_with(
            ServeConfig {
                allow_private: true,
                rate_limit: 1_000_000,
                ..ServeConfig::default()
            },
            HttpFetcher::with_client(client, fetch),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await;
        });
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .expect("client");

        // Warm the cache: one batch per origin fetches its robots.txt.
        let origins: Vec<String> = (0..files.len())
            .map(|i| web.url(&format!("h{i}.test"), "/").trim_end_matches('/').to_owned())
            .collect();
        let bodies: Arc<Vec<String>> = Arc::new(
            origins
                .iter()
                .zip(&batches)
                .map(|(o, b)| json!({"origin": o, "agent": AGENT, "urls": b}).to_string())
                .collect(),
        );
        for chunk in bodies.chunks(64) {
            let mut tasks = Vec::new();
            for b in chunk {
                tasks.push(http.post(format!("{base}/api/batch")).body(b.clone()).send());
            }
            for t in tasks {
                let r = t.await.expect("warm-up batch");
                assert_eq!(r.status(), 200);
            }
        }

        // Batches against cached origins, 4 in flight.
        let start = Instant::now();
        let mut done = 0usize;
        let mut tasks = tokio::task::JoinSet::new();
        let per = bodies.len().max(256);
        for w in 0..4 {
            let (http, base, bodies) = (http.clone(), base.clone(), bodies.clone());
            tasks.spawn(async move {
                let mut n = 0;
                let mut i = w;
                while i < per {
                    let b = &bodies[i % bodies.len()];
                    let r = http.post(format!("{base}/api/batch")).body(b.clone()).send().await.expect("batch");
                    assert_eq!(r.status(), 200);
                    let _ = r.bytes().await.expect("body");
                    n += BATCH;
                    i += 4;
                }
                n
            });
        }
        while let Some(n) = tasks.join_next().await {
            done += n.expect("task");
        }
        let served = done as f64 / start.elapsed().as_secs_f64();

        // Single-URL checks: the most a closed loop of 16 reaches.
        let file = &files[files.len() / 2];
        let single = Arc::new(json!({"robots": file.body, "agent": AGENT, "urls": [file.paths[0]]}).to_string());
        let window = Duration::from_secs(3);
        let start = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..16 {
            let (http, base, single) = (http.clone(), base.clone(), single.clone());
            tasks.spawn(async move {
                let mut n = 0u64;
                while start.elapsed() < window {
                    let r = http.post(format!("{base}/api/check")).body((*single).clone()).send().await.expect("check");
                    let _ = r.bytes().await.expect("body");
                    n += 1;
                }
                n
            });
        }
        let mut n = 0;
        while let Some(k) = tasks.join_next().await {
            n += k.expect("task");
        }
        let max_rps = n as f64 / start.elapsed().as_secs_f64();

        // Open loop at 1,000 requests/s for 5 s: latency of each.
        let mut ticker = tokio::time::interval(Duration::from_millis(1));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let mut tasks = tokio::task::JoinSet::new();
        let sent_at = Instant::now();
        for _ in 0..5_000 {
            ticker.tick().await;
            let (http, base, single) = (http.clone(), base.clone(), single.clone());
            tasks.spawn(async move {
                let t = Instant::now();
                let r = http.post(format!("{base}/api/check")).body((*single).clone()).send().await.expect("check");
                let _ = r.bytes().await.expect("body");
                t.elapsed()
            });
        }
        let mut lat = Vec::with_capacity(5_000);
        while let Some(d) = tasks.join_next().await {
            lat.push(d.expect("task"));
        }
        let offered = 5_000.0 / sent_at.elapsed().as_secs_f64();
        lat.sort();

        println!("mannerly serve on loopback ({source}: {} origins, batches of {BATCH} URLs, agent {AGENT})", files.len());
        println!("  library, for_agent + is_allowed : {:>12.0} checks/s", lib_allowed);
        println!("  library, for_agent + explain    : {:>12.0} checks/s", lib_explain);
        println!("  /api/batch, cached origins      : {:>12.0} checks/s  ({:.2}x slower than is_allowed, {:.2}x than explain)", served, lib_allowed / served, lib_explain / served);
        println!("  /api/check single URL, closed loop of 16: {:.0} requests/s", max_rps);
        println!(
            "  /api/check single URL at {:.0} requests/s offered: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            offered,
            percentile(&lat, 0.50).as_secs_f64() * 1e3,
            percentile(&lat, 0.99).as_secs_f64() * 1e3,
            lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3
        );
        std::hint::black_box(sink);
    });
}
