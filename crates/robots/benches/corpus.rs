//! Parse + match over the real-world corpus in `../shared/corpus`, next to
//! the crates `texting_robots` 0.2 and `robotstxt` 0.3 doing the same work in
//! the same run.
//!
//! The work: for every file, parse it, then check every URL listed for it in
//! `expected.jsonl` for each of its agents (about 1.29 million checks). Each
//! library does this the way its API allows:
//! - mannerly: parse once per file, `for_agent` per agent, `is_allowed` per URL
//!   (also timed parsing once per agent, like texting_robots must);
//! - texting_robots: `Robot::new(agent, body)` per agent, `allowed` per URL;
//! - robotstxt: `one_agent_allowed_by_robots(body, agent, url)` per URL (its
//!   API re-parses the body on every call, as Google's C++ API does).
//!
//! Bodies are read into memory before timing; each engine runs `ROUNDS` times
//! and the fastest round counts. Agreement with Google's reference verdicts
//! is printed too.
//!
//! Run: `cargo bench -p mannerly-robots --bench corpus`
//! (`MANNERLY_BENCH_ROUNDS=N` to change the rounds, default 3;
//! `MANNERLY_BENCH_SKIP_PEERS=1` to time only mannerly while iterating;
//! `MANNERLY_BENCH_ONLY=file` to time only parsing once per file,
//! `MANNERLY_BENCH_ONLY=call` only one call per check: for a profile).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mannerly_robots::{ParseOptions, Robots};

struct Case {
    body: Vec<u8>,
    text: String,
    urls: Vec<String>,
    agents: Vec<(String, Vec<bool>)>,
}

fn load() -> Option<Vec<Case>> {
    let dir = std::env::var_os("MANNERLY_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
        .join("corpus");
    let expected = std::fs::read_to_string(dir.join("expected.jsonl")).ok()?;
    let mut cases = Vec::new();
    for line in expected.lines() {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let id = v["id"].as_str()?;
        let body = std::fs::read(dir.join("files").join(format!("{id}.txt"))).ok()?;
        let text = String::from_utf8_lossy(&body).into_owned();
        let urls = v["urls"]
            .as_array()?
            .iter()
            .filter_map(|u| u.as_str().map(|p| format!("http://example.com{p}")))
            .collect();
        let agents = v["expect"]
            .as_object()?
            .iter()
            .map(|(a, e)| {
                let bits = e["allowed"]
                    .as_str()
                    .unwrap_or("")
                    .bytes()
                    .map(|b| b == b'1')
                    .collect();
                (a.clone(), bits)
            })
            .collect();
        cases.push(Case {
            body,
            text,
            urls,
            agents,
        });
    }
    Some(cases)
}

struct Outcome {
    best: Duration,
    checks: usize,
    agree: usize,
}

fn time(rounds: usize, mut f: impl FnMut() -> (usize, usize)) -> Outcome {
    let mut best = Duration::MAX;
    let (mut checks, mut agree) = (0, 0);
    for _ in 0..rounds {
        let start = Instant::now();
        let (c, a) = f();
        best = best.min(start.elapsed());
        (checks, agree) = (c, a);
    }
    Outcome {
        best,
        checks,
        agree,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // useful either; both just run the whole thing.
    let Some(cases) = load() else {
        eprintln!("SKIPPED: ../shared/corpus not found; the corpus benchmark did not run");
        return;
    };
    let rounds: usize = std::env::var("MANNERLY_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let bytes: usize = cases.iter().map(|c| c.body.len()).sum();
    let unlimited = ParseOptions {
        max_bytes: usize::MAX,
        ..Default::default()
    };
    println!(
        "corpus: {} files, {:.1} MiB, best of {rounds} rounds",
        cases.len(),
        bytes as f64 / 1048576.0
    );

    // parse_per_agent: parse again for every agent, as texting_robots must.
    let ours_run = |parse_per_agent: bool| {
        let (mut checks, mut agree) = (0, 0);
        for c in &cases {
            let once = (!parse_per_agent).then(|| Robots::parse_with(&c.body, unlimited));
            for (agent, want) in &c.agents {
                let fresh;
                let robots = match &once {
                    Some(r) => r,
                    None => {
                        fresh = Robots::parse_with(&c.body, unlimited);
                        &fresh
                    }
                };
                let view = robots.for_agent(agent);
                for (url, &w) in c.urls.iter().zip(want) {
                    let got = black_box(view.is_allowed(url));
                    checks += 1;
                    agree += usize::from(got == w);
                }
            }
        }
        (checks, agree)
    };
    // One call per check, no view kept: `Robots::is_allowed(agent, url)`.
    let one_call_run = || {
        let (mut checks, mut agree) = (0, 0);
        for c in &cases {
            let robots = Robots::parse_with(&c.body, unlimited);
            for (agent, want) in &c.agents {
                for (url, &w) in c.urls.iter().zip(want) {
                    let got = black_box(robots.is_allowed(agent, url));
                    checks += 1;
                    agree += usize::from(got == w);
                }
            }
        }
        (checks, agree)
    };
    // `MANNERLY_BENCH_ONLY`: one mode alone is timed (for a profile).
    let only = match std::env::var("MANNERLY_BENCH_ONLY").as_deref() {
        Ok("file") => Some((
            "mannerly (parse once per file)",
            time(rounds, || ours_run(false)),
        )),
        Ok("call") => Some(("mannerly (one call per check)", time(rounds, one_call_run))),
        _ => None,
    };
    if let Some((name, o)) = only {
        println!("{name:<44} {:>9.1} ms", o.best.as_secs_f64() * 1e3);
        return;
    }
    let ours = time(rounds, || ours_run(false));
    let one_call = time(rounds, one_call_run);
    let ours_per_agent = time(rounds, || ours_run(true));
    let parse_only = time(rounds, || {
        for c in &cases {
            black_box(Robots::parse_with(&c.body, unlimited));
        }
        (0, 0)
    });
    if std::env::var_os("MANNERLY_BENCH_SKIP_PEERS").is_some() {
        for (name, o) in [
            ("mannerly (parse once per file)", &ours),
            ("mannerly (one call per check)", &one_call),
            ("mannerly (parse once per agent)", &ours_per_agent),
            ("mannerly (parse only)", &parse_only),
        ] {
            println!("{name:<44} {:>9.1} ms", o.best.as_secs_f64() * 1e3);
        }
        return;
    }
    let texting = time(rounds, || {
        let (mut checks, mut agree) = (0, 0);
        for c in &cases {
            for (agent, want) in &c.agents {
                let robot = texting_robots::Robot::new(agent, &c.body);
                for (url, &w) in c.urls.iter().zip(want) {
                    // A file texting_robots cannot parse is treated as allow-all.
                    let got = black_box(robot.as_ref().map_or(true, |r| r.allowed(url)));
                    checks += 1;
                    agree += usize::from(got == w);
                }
            }
        }
        (checks, agree)
    });
    // One round: robotstxt re-parses the body for every URL and takes over a minute.
    let robotstxt_rounds = 1;
    let google_port = time(robotstxt_rounds, || {
        let (mut checks, mut agree) = (0, 0);
        for c in &cases {
            for (agent, want) in &c.agents {
                for (url, &w) in c.urls.iter().zip(want) {
                    let mut m = robotstxt::DefaultMatcher::default();
                    let got = black_box(m.one_agent_allowed_by_robots(&c.text, agent, url));
                    checks += 1;
                    agree += usize::from(got == w);
                }
            }
        }
        (checks, agree)
    });

    let row = |name: &str, o: &Outcome| {
        let per = if o.checks > 0 {
            o.best.as_nanos() as f64 / o.checks as f64
        } else {
            0.0
        };
        println!(
            "{name:<44} {:>9.1} ms  {:>8.0} ns/check  agrees with reference: {}",
            o.best.as_secs_f64() * 1e3,
            per,
            if o.checks > 0 {
                format!(
                    "{}/{} ({:.3}%)",
                    o.agree,
                    o.checks,
                    100.0 * o.agree as f64 / o.checks as f64
                )
            } else {
                "-".into()
            }
        );
    };
    row("mannerly (parse once per file)", &ours);
    row("mannerly (one call per check, is_allowed)", &one_call);
    row("mannerly (parse once per agent)", &ours_per_agent);
    row("mannerly (parse only, every file once)", &parse_only);
    row("texting_robots 0.2 (parse once per agent)", &texting);
    row(
        &format!("robotstxt 0.3 (parse per URL, {robotstxt_rounds} round)"),
        &google_port,
    );
    let fastest_peer = texting.best.min(google_port.best);
    let ratio = |o: &Outcome| fastest_peer.as_secs_f64() / o.best.as_secs_f64();
    println!(
        "ratio vs the faster peer: {:.1}x (parse once per file), {:.1}x (parse once per agent); goal >= 3x",
        ratio(&ours),
        ratio(&ours_per_agent)
    );
    println!(
        "ratios vs each peer (parse once per file): texting_robots {:.1}x, robotstxt {:.1}x",
        texting.best.as_secs_f64() / ours.best.as_secs_f64(),
        google_port.best.as_secs_f64() / ours.best.as_secs_f64()
    );
    println!(
        "one call per check (Robots::is_allowed) against texting_robots: {:.1}x; goal >= 15x",
        texting.best.as_secs_f64() / one_call.best.as_secs_f64()
    );
}
