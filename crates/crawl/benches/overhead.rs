//! What the polite engine costs over a bare fetch loop: the same URLs,
//! the same concurrency, the same simulated web (testweb with many hosts
//! and no delay configured), in the same run. The engine does everything
//! a crawl does (robots.txt, the frontier on disk, politeness bookkeeping,
//! link extraction, WARC, the log); the bare loop only fetches the list of
//! URLs the engine fetched, with reqwest and a semaphore. Each runs in a
//! child process of this binary, so CPU time (user + system) and peak RSS
//! are its own; testweb runs in the parent.
//!
//! Run: `cargo bench -p mannerly-crawl --bench overhead`
//! (`MANNERLY_BENCH_HOSTS=N`, default 10,000; `MANNERLY_BENCH_PAGES=N`
//! pages per host, default 3). With `MANNERLY_BENCH_SEED_ALL=1` every page
//! is a seed, so the frontier holds hosts × pages URLs at the start: the
//! peak-RSS run of 1 M URLs over 10,000 hosts is
//! `MANNERLY_BENCH_HOSTS=10000 MANNERLY_BENCH_PAGES=100 MANNERLY_BENCH_SEED_ALL=1`.
//! `MANNERLY_BENCH_WRAP` runs the engine and bare children under a
//! profiler (see [`wrapped`]).
//! Both children run on a current-thread runtime and allocate with
//! jemalloc, as `mannerly crawl` does by default; with
//! `MANNERLY_BENCH_MULTI_THREAD=1`, on tokio's default multi-thread one.
//!
//! The engine runs three ways, in turn, three rounds over
//! (`MANNERLY_BENCH_ROUNDS`; every other round in reverse order), each
//! kept at its best: as a crawl runs by default (evidence on), without
//! evidence, and with metrics counted, served and scraped every second.
//! Evidence's cost is also given round by round, with its median. A
//! fourth way keeps the frontier and the robots.txt states in memory
//! ([`Memory`]: a crawl that a kill would lose, which `mannerly crawl`
//! does not offer), so the durable store's whole share is measured: no
//! work on the store can take more than that off. The bare loop runs on
//! reqwest and on hyper's own client, in turn, as many rounds: what a
//! leaner client could take off. A last child times the output work
//! alone (the WARC records, link extraction, the log line) on pages
//! fetched once: the engine's CPU per request cannot fall below the bare
//! loop's plus that. Every child gets a testweb of its own (see `main`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mannerly_crawl::{crawl, crawl_on, Backend, CrawlConfig, CrawlDir, CrawlError, CrawlSettings};
use mannerly_polite::controller::Politeness;
use mannerly_polite::frontier::{FrontierConfig, LocalFrontier};
use mannerly_testweb::{Generated, TestWeb, WebConfig};

const CONCURRENCY: usize = 64;

/// Every child allocates as `mannerly crawl` does.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// User + system CPU seconds of this process.
fn cpu_seconds() -> f64 {
    mannerly_metrics::process::usage().map_or(0.0, |u| u.cpu_seconds)
}

fn runtime() -> tokio::runtime::Runtime {
    if std::env::var_os("MANNERLY_BENCH_MULTI_THREAD").is_some() {
        tokio::runtime::Runtime::new().expect("runtime")
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }
}

/// The frontier and the robots.txt states held in memory, lost at the
/// end: the engine without its durable store.
struct Memory;

impl Backend for Memory {
    type Frontier = LocalFrontier;

    fn resumable(&self, _dir: &CrawlDir) -> bool {
        false
    }

    async fn settings(
        &self,
        _dir: &CrawlDir,
        mut fresh: CrawlSettings,
        seeds: &[String],
    ) -> Result<CrawlSettings, CrawlError> {
        fresh.add_seeds(seeds);
        Ok(fresh)
    }

    async fn open(
        self,
        _dir: &CrawlDir,
        politeness: Politeness,
    ) -> Result<(LocalFrontier, Arc<dyn mannerly_fetch::Store>), CrawlError> {
        let frontier = LocalFrontier::in_memory(politeness, FrontierConfig::default());
        Ok((
            frontier,
            Arc::new(mannerly_fetch::cache::MemoryStore::default()),
        ))
    }
}

/// One way of the engine (`what`): as a crawl runs by default, without
/// evidence, on [`Memory`], or with metrics (the families counted, served
/// on 127.0.0.1 and scraped from this process every second, 15 times as
/// often as Prometheus's default).
fn engine(port: u16, hosts: u32, dir: &Path, what: &str) {
    let (evidence, metrics) = (what != "engine-no-evidence", what == "engine-metrics");
    let rt = runtime();
    let out = out_dir(dir, what);
    // A fresh crawl every round.
    let _ = std::fs::remove_dir_all(&out);
    let seeds: Vec<String> = if seed_all() {
        (0..pages())
            .flat_map(|p| (0..hosts).map(move |i| format!("http://h{i}.test/p{p}.html")))
            .collect()
    } else {
        (0..hosts).map(|i| format!("http://h{i}.test/")).collect()
    };
    let config = CrawlConfig {
        min_delay: Duration::ZERO,
        concurrency: CONCURRENCY,
        proxy: Some(format!("http://127.0.0.1:{port}")),
        give_up_after: Duration::from_secs(5),
        sitemaps: false,
        evidence,
        metrics: metrics.then(|| {
            mannerly_crawl::metrics::CrawlMetrics::new(mannerly_metrics::Registry::new(true))
        }),
        ..CrawlConfig::default()
    };
    if let Some(m) = &config.metrics {
        let registry = m.registry().clone();
        rt.spawn(async move {
            let (at, _task) = mannerly_metrics::serve::bind("127.0.0.1:0", registry)
                .await
                .expect("metrics");
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if let Ok(mut s) = tokio::net::TcpStream::connect(at).await {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let _ = s
                        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        .await;
                    let mut sink = Vec::new();
                    let _ = s.read_to_end(&mut sink).await;
                }
            }
        });
    }
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let cpu0 = cpu_seconds();
    let t = Instant::now();
    let summary = if what == "engine-memory" {
        rt.block_on(crawl_on(Memory, config, seeds, &out, stop, |_| {}))
    } else {
        rt.block_on(crawl(config, seeds, &out, stop, |_| {}))
    }
    .expect("crawl");
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    // The crawl's peak, before this bench reads the log back.
    let peak = mannerly_testsupport::peak_rss_kb();
    let requests: u64 = summary.pages_by_status.values().sum::<u64>() + summary.robots_requests;
    // What the bench reads back (the evidence's compressed size, the URLs
    // for the bare loop) the parent reads, so that none of it is counted
    // as the engine's.
    println!(
        "{requests} {wall} {cpu} {peak} {}",
        dir_bytes(&out.join("warc"))
    );
}

/// The output directory of an engine child.
fn out_dir(dir: &Path, what: &str) -> PathBuf {
    dir.join(match what {
        "engine-metrics" => "out-metrics",
        "engine-no-evidence" => "out-no-evidence",
        "engine-memory" => "out-memory",
        _ => "out",
    })
}

/// After an engine child: the size of its evidence once gzip-compressed
/// and, for the default way, the URLs it fetched, for the bare loop
/// (streamed: the log of a large run is hundreds of MB).
fn read_back(dir: &Path, what: &str) -> f64 {
    use std::io::{BufRead, Write};
    let out = out_dir(dir, what);
    let gz = gzip_bytes(&out.join("evidence/records.jsonl")) as f64;
    if what != "engine" {
        return gz;
    }
    let log = std::io::BufReader::new(std::fs::File::open(out.join("log.jsonl")).expect("log"));
    let mut urls =
        std::io::BufWriter::new(std::fs::File::create(dir.join("urls.txt")).expect("urls"));
    for line in log.lines() {
        let line = line.expect("log line");
        let v: serde_json::Value = serde_json::from_str(&line).expect("json");
        if matches!(v["kind"].as_str(), Some("page" | "robots")) && v["status"].is_number() {
            if let Some(u) = v["url"].as_str() {
                writeln!(urls, "{u}").expect("urls");
            }
        }
    }
    urls.flush().expect("urls");
    gz
}

/// The bytes of the files in a directory.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// A file's size once gzip-compressed (0 when it is not there).
fn gzip_bytes(path: &Path) -> u64 {
    use std::io::Write;
    let Ok(bytes) = std::fs::read(path) else {
        return 0;
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).expect("gzip");
    gz.finish().expect("gzip").len() as u64
}

/// A bare loop: the URLs the engine fetched, `CONCURRENCY` at a time,
/// through reqwest (as the engine's client) or, with `hyper`, through
/// hyper's own pooled client without reqwest's layers (a connection per
/// host either way: the pool is keyed by the URL's host, and every
/// connection goes to testweb, which routes by `Host`).
fn bare(port: u16, dir: &Path, hyper: bool) {
    let rt = runtime();
    let urls = round_robin(&std::fs::read_to_string(dir.join("urls.txt")).expect("urls"));
    let fetch: Fetch = if hyper {
        bare_hyper_client(port)
    } else {
        let client = reqwest::Client::builder()
            .proxy(reqwest::Proxy::all(format!("http://127.0.0.1:{port}")).expect("proxy"))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Arc::new(move |u: String| {
            let client = client.clone();
            Box::pin(async move {
                match client.get(&u).send().await {
                    Ok(r) => r.bytes().await.is_ok(),
                    Err(_) => false,
                }
            })
        })
    };
    let cpu0 = cpu_seconds();
    let t = Instant::now();
    let fetched = rt.block_on(async {
        let sem = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
        let mut tasks = tokio::task::JoinSet::new();
        let mut n = 0u64;
        for u in urls {
            // Finished tasks are collected as the loop goes, so memory
            // stays bounded by the concurrency, not the URL count.
            while let Some(ok) = tasks.try_join_next() {
                n += u64::from(ok.unwrap_or(false));
            }
            let permit = sem.clone().acquire_owned().await.expect("semaphore");
            let fetch = fetch(u);
            tasks.spawn(async move {
                let _permit = permit;
                fetch.await
            });
        }
        while let Some(ok) = tasks.join_next().await {
            n += u64::from(ok.unwrap_or(false));
        }
        n
    });
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    println!(
        "{fetched} {wall} {cpu} {}",
        mannerly_testsupport::peak_rss_kb()
    );
}

/// A bare loop's fetch of one URL: whether its body was read.
type Fetch = Arc<
    dyn Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>
        + Send
        + Sync,
>;

/// hyper's pooled client, every connection to testweb.
fn bare_hyper_client(port: u16) -> Fetch {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let client: Client<ToTestweb, Empty<hyper::body::Bytes>> =
        Client::builder(TokioExecutor::new()).build(ToTestweb(port));
    Arc::new(move |u: String| {
        let client = client.clone();
        Box::pin(async move {
            let Ok(uri) = u.parse::<hyper::Uri>() else {
                return false;
            };
            match client.get(uri).await {
                Ok(r) => r.into_body().collect().await.is_ok(),
                Err(_) => false,
            }
        })
    })
}

/// Connects every request to testweb, whatever its host.
#[derive(Clone)]
struct ToTestweb(u16);

impl tower_service::Service<hyper::Uri> for ToTestweb {
    type Response = hyper_util::rt::TokioIo<tokio::net::TcpStream>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: hyper::Uri) -> Self::Future {
        let port = self.0;
        Box::pin(async move {
            let s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
            s.set_nodelay(true)?;
            Ok(hyper_util::rt::TokioIo::new(s))
        })
    }
}

/// The URLs one host after another in turn (each host's in its order):
/// the bare loop's best order. Taken in the engine's order (a batch of
/// hosts at a time) its concurrent requests would share hosts, and it
/// would open several connections per host.
fn round_robin(urls: &str) -> Vec<String> {
    let mut by_host: Vec<Vec<String>> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for u in urls.lines() {
        let host = u.split('/').nth(2).unwrap_or_default().to_owned();
        let i = *index.entry(host).or_insert_with(|| {
            by_host.push(Vec::new());
            by_host.len() - 1
        });
        by_host[i].push(u.to_owned());
    }
    let longest = by_host.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .flat_map(|k| by_host.iter().filter_map(move |h| h.get(k).cloned()))
        .collect()
}

/// A page as fetched: URL, response head, body.
type Sample = (String, Vec<u8>, Vec<u8>);

/// The output work the issue asks of every page, with no fetching and no
/// politeness: the WARC `response` and `request` records (gzip, three
/// SHA-1 digests), link extraction and normalisation, and one JSON log
/// line, on pages fetched once from the same simulated web. Whatever the
/// engine's scheduling costs, its CPU per request cannot fall below the
/// bare loop's plus this.
fn floor(port: u16, hosts: u32, dir: &Path) {
    use std::io::Write;
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(format!("http://127.0.0.1:{port}")).expect("proxy"))
        .build()
        .expect("client");
    // Every generated page of the first hosts, as the crawl fetched them.
    let sample: Vec<Sample> = rt.block_on(async {
        let mut out = Vec::new();
        for i in 0..hosts.min(100) {
            for p in
                std::iter::once("/".to_owned()).chain((1..pages()).map(|p| format!("/p{p}.html")))
            {
                let url = format!("http://h{i}.test{p}");
                let Ok(r) = client.get(&url).send().await else {
                    continue;
                };
                let mut head = format!("HTTP/1.1 {}\r\n", r.status()).into_bytes();
                for (k, v) in r.headers() {
                    head.extend_from_slice(k.as_str().as_bytes());
                    head.extend_from_slice(b": ");
                    head.extend_from_slice(v.as_bytes());
                    head.extend_from_slice(b"\r\n");
                }
                head.extend_from_slice(b"\r\n");
                let body = r.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
                out.push((url, head, body));
            }
        }
        out
    });
    assert!(!sample.is_empty(), "no sample pages");
    let mut warc =
        mannerly_crawl::warc::WarcWriter::open(&dir.join("floor"), "floor", 1 << 30, "bench")
            .expect("warc");
    let mut log =
        std::io::BufWriter::new(std::fs::File::create(dir.join("floor.jsonl")).expect("log"));
    let rounds = 20_000usize.div_ceil(sample.len());
    let n = (rounds * sample.len()) as f64;
    // Each part timed on its own, so the note can say which costs what.
    let time = |f: &mut dyn FnMut(&Sample)| {
        let cpu0 = cpu_seconds();
        for _ in 0..rounds {
            sample.iter().for_each(&mut *f);
        }
        (cpu_seconds() - cpu0) / n * 1e6
    };
    let warc_us = time(&mut |(url, head, body)| {
        let request = format!(
            "GET {url} HTTP/1.1\r\nhost: h.test\r\nuser-agent: mannerly/0.1 (+https://example.com/bot)\r\naccept: */*\r\n\r\n"
        );
        warc.exchange(&mannerly_crawl::warc::Exchange {
            url,
            date: mannerly_time::UnixMillis::from_millis(1_700_000_000_000),
            ip: Some(std::net::Ipv4Addr::LOCALHOST.into()),
            request_head: request.as_bytes(),
            response_head: head,
            body,
            truncated: false,
            evidence: None,
        })
        .expect("warc");
    });
    let mut links = 0usize;
    let links_us = time(&mut |(url, _, body)| {
        let page = url::Url::parse(url).expect("url");
        links += mannerly_crawl::links::extract(body, &page, "mannerly", false)
            .links
            .len();
    });
    let log_us = time(&mut |(url, _, body)| {
        let line = serde_json::json!({
            "time": "2023-11-14T22:13:20.000Z", "kind": "page", "url": url,
            "status": 200, "bytes": body.len(), "ms": 3, "retry": 0,
        });
        serde_json::to_writer(&mut log, &line).expect("log");
        log.write_all(b"\n").expect("log");
    });
    log.flush().expect("log");
    let evidence_us = evidence_alone(dir, &sample, rounds, &mut warc) - warc_us;
    let bytes: usize = sample.iter().map(|s| s.2.len()).sum();
    eprintln!(
        "floor: {} sample pages, {} body bytes and {:.1} links each; WARC records {warc_us:.1} us, \
         links {links_us:.1} us, log line {log_us:.1} us per page",
        sample.len(),
        bytes / sample.len(),
        links as f64 / n
    );
    let cpu = (warc_us + links_us + log_us) * n / 1e6;
    // Same shape as the other children: count, wall, cpu, peak; then the
    // evidence's own work per page.
    println!("{n} {cpu} {cpu} 0 {evidence_us}");
}

/// The evidence's own work per page, alone, as the engine does it: the
/// record (with the robots.txt and decision it names), its chain hashes,
/// one `write` of it (the engine writes a batch's records in one: this
/// is the most it can cost), and its copy in the WARC. Returns the CPU
/// µs per page of all that plus the page's own WARC records, which the
/// caller subtracts.
fn evidence_alone(
    dir: &Path,
    sample: &[Sample],
    rounds: usize,
    warc: &mut mannerly_crawl::warc::WarcWriter,
) -> f64 {
    use mannerly_evidence::{Decision, Delay, DelaySource, Kind, Record, RobotsState, RobotsUsed};
    use mannerly_time::UnixMillis;
    let mut log =
        mannerly_evidence::EvidenceLog::open(&dir.join("floor-evidence"), None, None).expect("log");
    let robots_sha = [7u8; 32];
    let fetched = UnixMillis::from_millis(1_700_000_000_000);
    let cpu0 = cpu_seconds();
    for _ in 0..rounds {
        for (url, head, body) in sample {
            let now = UnixMillis::now();
            let host = url.split('/').nth(2).unwrap_or_default();
            let record = Record {
                time: now.to_rfc3339_millis(),
                url: url.clone(),
                host: host.to_owned(),
                kind: Kind::Page,
                user_agent: "mannerly/0.1 (+https://example.com/bot)".to_owned(),
                robots: Some(RobotsUsed {
                    url: format!("http://{host}/robots.txt"),
                    sha256: Some(mannerly_evidence::chain::hex(&robots_sha)),
                    fetched: Some(fetched.to_rfc3339_millis()),
                    status: Some(200),
                    state: RobotsState::Parsed,
                    why: None,
                }),
                decision: Some(Decision {
                    allowed: true,
                    line: None,
                    rule: None,
                }),
                delay: Delay {
                    required_s: 0.0,
                    since_previous_s: Some(0.012),
                    source: DelaySource::Default,
                },
                ..Record::blank()
            };
            // As the page's own WARC records were timed (and subtracted).
            let request = format!(
                "GET {url} HTTP/1.1\r\nhost: h.test\r\nuser-agent: mannerly/0.1 (+https://example.com/bot)\r\naccept: */*\r\n\r\n"
            );
            let line = log.hold(record).expect("hold");
            log.flush().expect("flush");
            warc.exchange(&mannerly_crawl::warc::Exchange {
                url,
                date: now,
                ip: Some(std::net::Ipv4Addr::LOCALHOST.into()),
                request_head: request.as_bytes(),
                response_head: head,
                body,
                truncated: false,
                evidence: Some(&line),
            })
            .expect("warc");
        }
    }
    (cpu_seconds() - cpu0) / (rounds * sample.len()) as f64 * 1e6
}

fn pages() -> u32 {
    std::env::var("MANNERLY_BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn seed_all() -> bool {
    std::env::var_os("MANNERLY_BENCH_SEED_ALL").is_some_and(|v| v == "1")
}

/// `MANNERLY_BENCH_WRAP="CMD ARG..."`: the `engine` and `bare` children
/// run under that command, `{what}` in it named for the child (a profile
/// of each: `perf record -g --call-graph fp -o /tmp/{what}.perf` on a
/// build with frame pointers, or `heaptrack -o /tmp/{what}`).
fn wrapped(what: &str) -> Option<Vec<String>> {
    let wrap = std::env::var("MANNERLY_BENCH_WRAP").ok()?;
    let words: Vec<String> = wrap
        .split_whitespace()
        .map(|w| w.replace("{what}", what))
        .collect();
    (matches!(
        what,
        "engine" | "engine-no-evidence" | "bare" | "bare-hyper"
    ) && !words.is_empty())
    .then_some(words)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let what = args[i + 1].as_str();
        let port: u16 = args[i + 2].parse().expect("port");
        let hosts: u32 = args[i + 3].parse().expect("hosts");
        let dir = PathBuf::from(&args[i + 4]);
        match what {
            "engine" | "engine-no-evidence" | "engine-metrics" | "engine-memory" => {
                engine(port, hosts, &dir, what)
            }
            "floor" => floor(port, hosts, &dir),
            "bare-hyper" => bare(port, &dir, true),
            _ => bare(port, &dir, false),
        }
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let hosts: u32 = std::env::var("MANNERLY_BENCH_HOSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let web = WebConfig {
        generated: Generated {
            prefix: "h".into(),
            suffix: ".test".into(),
            count: hosts,
            robots: "User-agent: *\nDisallow: /private/\n".into(),
            pages_per_host: pages(),
            links_per_page: 2,
            cross_host_links: 0,
            ..Generated::default()
        },
        record: false,
        ..WebConfig::default()
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("exe");
    // MANNERLY_BENCH_CALLGRIND=1: the engine children (with evidence,
    // without, and with metrics) run under valgrind's callgrind, which
    // counts their instructions (a figure this machine's noise does not
    // move; the run is some 50x slower, so its CPU figures mean nothing).
    let callgrind = std::env::var_os("MANNERLY_BENCH_CALLGRIND").is_some_and(|v| v == "1");
    let instructions = std::cell::RefCell::new(Vec::<(String, f64)>::new());
    let run = |what: &str| -> Vec<f64> {
        // A fresh testweb, on a port of its own, for every child: each
        // child leaves its many thousand connections to testweb in
        // TIME_WAIT for a minute, and the next child's connects to the
        // same address and port then search the kernel's table for a
        // free source port (a tenth of its CPU, more in later children).
        let web = rt.block_on(TestWeb::start(web.clone())).expect("testweb");
        let port = web.port();
        let counted = callgrind && what.starts_with("engine");
        let mut cmd = if counted {
            let mut c = Command::new("valgrind");
            // MANNERLY_BENCH_CALLGRIND_OUT=DIR keeps the profiles there
            // (for callgrind_annotate); else they go with the temporary dir.
            let out = std::env::var_os("MANNERLY_BENCH_CALLGRIND_OUT")
                .map_or_else(|| dir.path().to_path_buf(), PathBuf::from);
            let dump = out.join(format!("{what}.callgrind"));
            c.arg("--tool=callgrind")
                .arg(format!("--callgrind-out-file={}", dump.display()))
                .arg(&exe);
            c
        } else if let Some(wrap) = wrapped(what) {
            let mut c = Command::new(&wrap[0]);
            c.args(&wrap[1..]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(["--child", what, &port.to_string(), &hosts.to_string()])
            .arg(dir.path())
            .output()
            .expect("child");
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if what == "floor" {
            print!("{}", String::from_utf8_lossy(&out.stderr));
        }
        if counted {
            // valgrind's summary: "==PID== Collected : N".
            let stderr = String::from_utf8_lossy(&out.stderr);
            let n = stderr
                .lines()
                .filter_map(|l| l.split("Collected :").nth(1))
                .find_map(|n| n.trim().parse::<f64>().ok());
            if let Some(n) = n {
                instructions.borrow_mut().push((what.to_owned(), n));
            }
        }
        let mut v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if what.starts_with("engine") {
            v.push(read_back(dir.path(), what));
        }
        v
    };
    println!(
        "overhead: {hosts} hosts, {} pages each{}, no delay, concurrency {CONCURRENCY}, through testweb as a proxy",
        pages(),
        if seed_all() { ", every page a seed" } else { "" }
    );
    // The engine's three ways in turn, ROUNDS times (default 3), each
    // kept at its best CPU per request: this machine's noise between one
    // child and the next is larger than the differences measured.
    let rounds: usize = std::env::var("MANNERLY_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let best = |a: Option<Vec<f64>>, b: Vec<f64>| match a {
        Some(a) if a[2] / a[0] <= b[2] / b[0] => Some(a),
        _ => Some(b),
    };
    let (mut e, mut n, mut m, mut mem) = (None, None, None, None);
    // Evidence's cost as each round measured it (with and without, run
    // one after the other): the spread shows the noise.
    let mut evidence_rounds = Vec::new();
    let us = |v: &[f64]| v[2] / v[0] * 1e6;
    for round in 0..rounds.max(1) {
        // Every other round in reverse, so neither way always runs first.
        let mut order = [
            "engine",
            "engine-no-evidence",
            "engine-metrics",
            "engine-memory",
        ];
        if round % 2 == 1 {
            order.reverse();
        }
        let (mut this_e, mut this_n) = (0.0, 0.0);
        for what in order {
            let v = run(what);
            match what {
                "engine" => (this_e, e) = (us(&v), best(e, v)),
                "engine-no-evidence" => (this_n, n) = (us(&v), best(n, v)),
                "engine-memory" => mem = best(mem, v),
                _ => m = best(m, v),
            }
        }
        evidence_rounds.push((this_e / this_n - 1.0) * 100.0);
    }
    let (e, n, m, mem) = (
        e.unwrap_or_default(),
        n.unwrap_or_default(),
        m.unwrap_or_default(),
        mem.unwrap_or_default(),
    );
    // The bare loops in turn too, each kept at its best.
    let (mut b, mut bh) = (None, None);
    for round in 0..rounds.max(1) {
        let mut order = ["bare", "bare-hyper"];
        if round % 2 == 1 {
            order.reverse();
        }
        for what in order {
            let v = run(what);
            match what {
                "bare" => b = best(b, v),
                _ => bh = best(bh, v),
            }
        }
    }
    let (b, bh) = (b.unwrap_or_default(), bh.unwrap_or_default());
    let f = run("floor");
    println!(
        "{:<20} {:>9} {:>9} {:>11} {:>15} {:>9}",
        "", "requests", "seconds", "requests/s", "CPU s/1000 req", "peak MiB"
    );
    for (name, v) in [
        ("mannerly engine", &e),
        ("  no evidence", &n),
        ("  with --metrics", &m),
        ("  store in memory", &mem),
        ("bare reqwest loop", &b),
        ("bare hyper loop", &bh),
    ] {
        println!(
            "{name:<20} {:>9.0} {:>9.2} {:>11.0} {:>15.3} {:>9.0}",
            v[0],
            v[1],
            v[0] / v[1],
            v[2] / v[0] * 1000.0,
            v[3] / 1024.0
        );
    }
    println!(
        "engine / bare: {:.0}% of the requests/s, {:.2}x the CPU per request",
        (e[0] / e[1]) / (b[0] / b[1]) * 100.0,
        (e[2] / e[0]) / (b[2] / b[0])
    );
    // The evidence's cost: the same crawl with and without it.
    println!(
        "evidence: {:+.1}% CPU per request ({:.1} against {:.1} us), {:.0} bytes per request \
         gzip-compressed in evidence/records.jsonl, {:+.0} bytes per request in the WARC",
        ((e[2] / e[0]) / (n[2] / n[0]) - 1.0) * 100.0,
        e[2] / e[0] * 1e6,
        n[2] / n[0] * 1e6,
        e[5] / e[0],
        (e[4] - n[4]) / e[0]
    );
    let mut sorted = evidence_rounds.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "evidence round by round: {} (median {:+.1}%)",
        evidence_rounds
            .iter()
            .map(|r| format!("{r:+.1}%"))
            .collect::<Vec<_>>()
            .join(", "),
        sorted[sorted.len() / 2]
    );
    // The metrics' cost: the same crawl with them on.
    println!(
        "metrics: {:+.1}% CPU per request ({:.1} against {:.1} us), served and scraped every second",
        ((m[2] / m[0]) / (e[2] / e[0]) - 1.0) * 100.0,
        m[2] / m[0] * 1e6,
        e[2] / e[0] * 1e6
    );
    // The durable store's whole share: the same crawl with nothing on disk
    // but its output.
    println!(
        "the frontier's store: {:.1}% of the engine's CPU per request ({:.1} against {:.1} us \
         with the frontier and the robots.txt states in memory)",
        (1.0 - (mem[2] / mem[0]) / (e[2] / e[0])) * 100.0,
        e[2] / e[0] * 1e6,
        mem[2] / mem[0] * 1e6
    );
    // What reqwest's layers cost over hyper's own client.
    println!(
        "reqwest over hyper: {:.1} against {:.1} us per request in the bare loops",
        b[2] / b[0] * 1e6,
        bh[2] / bh[0] * 1e6
    );
    // The floor: the bare loop's CPU plus the output work alone.
    let floor_us = f[2] / f[0] * 1e6;
    let bare_us = b[2] / b[0] * 1e6;
    println!(
        "output work alone (WARC records, links, log line): {floor_us:.1} us per page; \
         bare loop {bare_us:.1} us per request; so no engine that writes what the crawl \
         must write can go below {:.2}x the bare loop's CPU per request (the engine: {:.1} us)",
        (bare_us + floor_us) / bare_us,
        e[2] / e[0] * 1e6
    );
    // Evidence's own work, timed alone on the same pages: a figure this
    // machine's noise between crawls does not swamp.
    println!(
        "evidence's own work alone (record, chain hashes, a write, its WARC copy): {:.1} us \
         per page, {:+.1}% of the engine's CPU per request without evidence ({:.1} us)",
        f[4],
        f[4] / (n[2] / n[0] * 1e6) * 100.0,
        n[2] / n[0] * 1e6
    );
    let counts = instructions.borrow();
    for (what, n) in counts.iter() {
        println!(
            "{what} under callgrind: {n:.0} instructions, {:.0} per request",
            n / e[0]
        );
    }
    // Evidence's cost in instructions (the user-space part: what the
    // kernel does for its writes is not counted), the best of each way.
    let least = |way: &str| {
        counts
            .iter()
            .filter(|(w, _)| w == way)
            .map(|(_, n)| *n)
            .min_by(f64::total_cmp)
    };
    if let (Some(with), Some(without)) = (least("engine"), least("engine-no-evidence")) {
        println!(
            "evidence under callgrind: {:+.1}% instructions ({:.0} against {:.0} per request)",
            (with / without - 1.0) * 100.0,
            with / e[0],
            without / n[0]
        );
    }
}
