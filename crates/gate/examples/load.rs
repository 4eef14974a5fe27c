//! An open-loop load generator for the gate benchmark
//! (`tools/gate-bench/run.sh`): requests are sent on a fixed schedule,
//! whatever the answers (a stalled server does not slow the sending), and
//! each latency is measured from when its request was sent.
//!
//! ```text
//! load URL RATE SECONDS TEMPLATES
//! ```
//! TEMPLATES holds request templates separated by blank lines: `Name:
//! value` header lines; requests cycle through them.

use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, rate, seconds, templates] = &args[..] else {
        return Err("usage: load URL RATE SECONDS TEMPLATES".into());
    };
    let rate: f64 = rate.parse()?;
    let seconds: f64 = seconds.parse()?;
    let templates = read_templates(&std::fs::read_to_string(templates)?)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let (mut micros, statuses, errors) = rt.block_on(run(url, rate, seconds, &templates))?;
    micros.sort_unstable();
    let q = |p: f64| {
        micros
            .get(((micros.len() as f64 * p) as usize).min(micros.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "requests {} errors {errors} p50_us {} p90_us {} p99_us {} p999_us {} max_us {} statuses {statuses:?}",
        micros.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        micros.last().copied().unwrap_or(0)
    );
    Ok(())
}

type Template = reqwest::header::HeaderMap;

fn read_templates(text: &str) -> Result<Vec<Template>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut h = Template::new();
        for line in block.lines() {
            let (n, v) = line
                .split_once(": ")
                .ok_or_else(|| format!("not a header line: {line}"))?;
            h.append(
                reqwest::header::HeaderName::from_bytes(n.as_bytes())?,
                v.parse()?,
            );
        }
        out.push(h);
    }
    Ok(out)
}

async fn run(
    url: &str,
    rate: f64,
    seconds: f64,
    templates: &[Template],
) -> Result<(Vec<u64>, std::collections::BTreeMap<u16, u64>, u64), Box<dyn std::error::Error>> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(512)
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(10))
        .build()?;
    let total = (rate * seconds) as u64;
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    let mut tasks = Vec::with_capacity(total as usize);
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        tokio::time::sleep_until(due).await;
        let req = client
            .get(url)
            .headers(templates[i as usize % templates.len()].clone());
        tasks.push(tokio::spawn(async move {
            // From when it is sent: the generator's own timer (1 ms
            // granularity) is not the server's latency.
            let sent = Instant::now();
            let r = req.send().await;
            let took = sent.elapsed();
            (took.as_micros() as u64, r.map(|r| r.status().as_u16()).ok())
        }));
    }
    let (mut micros, mut statuses, mut errors) = (Vec::new(), std::collections::BTreeMap::new(), 0);
    for t in tasks {
        let (us, status) = t.await?;
        micros.push(us);
        match status {
            Some(s) => *statuses.entry(s).or_insert(0) += 1,
            None => errors += 1,
        }
    }
    Ok((micros, statuses, errors))
}
