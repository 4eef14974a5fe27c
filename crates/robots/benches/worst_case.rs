//! Worst cases: inputs built to make a matcher blow up.
//!
//! - `stars_vs_100k_url`: a pattern of 10,000 `*` (then `x$`) against a
//!   100 KiB URL. The reference algorithm does about 10^9 steps here; the
//!   linear matcher does one pass. For contrast, the reference algorithm is
//!   timed on a case 100x smaller (1,000 stars, 10 KiB).
//! - `file_30k_rules`: a 500 KiB robots.txt of 30,000 wildcard rules: parse
//!   it, then check URLs (2 KiB and 100 KiB, adversarial) with `is_allowed`
//!   and with the precompiled `for_agent` view.
//! - `file_12k_agents`: a robots.txt naming 12,000 crawlers, whose names
//!   fill the one call's filters: `is_allowed` for a crawler it names and
//!   for one it does not (its view found by binary search, not a scan).
//!
//! Run: `cargo bench -p mannerly-robots --bench worst_case`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use mannerly_robots::pattern::{matches, matches_reference_quadratic};
use mannerly_robots::Robots;

fn big_file() -> Vec<u8> {
    let mut body = b"User-agent: *\n".to_vec();
    let mut i = 0u32;
    while i < 30_000 {
        if i.is_multiple_of(2) {
            body.extend_from_slice(format!("Allow:/{i:x}*z\n").as_bytes());
        } else {
            body.extend_from_slice(format!("Disallow:/*{i:x}*q$\n").as_bytes());
        }
        i += 1;
    }
    assert!(body.len() <= 500 * 1024, "{} bytes", body.len());
    body
}

fn adversarial_url(len: usize) -> String {
    // Every hex digit appears, so byte filters pass and each `/*<hex>*q$`
    // rule has to search the whole path; no `q` at the end, so none match.
    let mut url = String::from("http://example.com/");
    while url.len() < len {
        url.push_str("0123456789abcdef:");
    }
    url
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("stars_vs_100k_url");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let pattern = "*".repeat(10_000) + "x$";
    let path = "/".to_owned() + &"a".repeat(100 * 1024);
    g.bench_function("linear/10k_stars_100k_path", |b| {
        b.iter(|| matches(black_box(pattern.as_bytes()), black_box(path.as_bytes())))
    });
    let alternating = "/".to_owned() + &"a*".repeat(5_000) + "b";
    g.bench_function("linear/5k_a_star_pieces_100k_path", |b| {
        b.iter(|| {
            matches(
                black_box(alternating.as_bytes()),
                black_box(path.as_bytes()),
            )
        })
    });
    let small_pattern = "*".repeat(1_000) + "x$";
    let small_path = "/".to_owned() + &"a".repeat(10 * 1024);
    g.bench_function("reference_quadratic/1k_stars_10k_path", |b| {
        b.iter(|| {
            matches_reference_quadratic(
                black_box(small_pattern.as_bytes()),
                black_box(small_path.as_bytes()),
            )
        })
    });
    g.finish();

    let body = big_file();
    let mut g = c.benchmark_group("file_30k_rules");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    g.bench_function("parse_500k", |b| b.iter(|| Robots::parse(black_box(&body))));
    let robots = Robots::parse(&body);
    assert_eq!(robots.rules().len(), 30_000);
    for len in [2 * 1024, 100 * 1024] {
        let url = adversarial_url(len);
        g.bench_function(format!("is_allowed_{}k_url", len / 1024), |b| {
            b.iter(|| robots.is_allowed(black_box("bot"), black_box(&url)))
        });
        let view = robots.for_agent("bot");
        g.bench_function(format!("for_agent_{}k_url", len / 1024), |b| {
            b.iter(|| view.is_allowed(black_box(&url)))
        });
    }
    g.bench_function("for_agent_build", |b| {
        b.iter(|| robots.for_agent(black_box("bot")))
    });
    g.finish();
}

/// A crawler's name of nine letters (`b` and eight more, one for each
/// hex digit of `n`): product tokens hold letters, `-` and `_` only.
fn agent_name(n: u32) -> String {
    let letters = (0..8).map(|k| char::from(b'a' + ((n >> (4 * k)) & 15) as u8));
    std::iter::once('b').chain(letters).collect()
}

/// A file naming 12,000 crawlers, spread so that their keys fill the one
/// call's filters.
fn many_agents_file() -> Vec<u8> {
    let mut body = Vec::new();
    for i in 0..12_000u32 {
        let name = agent_name(i.wrapping_mul(2_654_435_761));
        body.extend_from_slice(format!("User-agent: {name}\nDisallow: /p{i}/\n\n").as_bytes());
    }
    body.extend_from_slice(b"User-agent: *\nDisallow: /private/\n");
    body
}

fn agents(c: &mut Criterion) {
    let body = many_agents_file();
    let robots = Robots::parse_with(
        &body,
        mannerly_robots::ParseOptions {
            max_bytes: usize::MAX,
            ..Default::default()
        },
    );
    let named = agent_name(7_000u32.wrapping_mul(2_654_435_761)).to_uppercase();
    assert!(!robots.is_allowed(&named, "/p7000/x"));
    assert!(!robots.is_allowed("crawlerzz", "/private/x"));
    let mut g = c.benchmark_group("file_12k_agents");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    // Two crawlers in turn, so the last one found is never the one asked.
    g.bench_function("is_allowed_unnamed_then_named", |b| {
        b.iter(|| {
            robots.is_allowed(black_box("crawlerzz"), black_box("/private/x"))
                ^ robots.is_allowed(black_box(&named), black_box("/p7000/x"))
        })
    });
    g.finish();
}

criterion_group!(benches, bench, agents);
criterion_main!(benches);
