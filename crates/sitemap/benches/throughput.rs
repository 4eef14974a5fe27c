//! Entries per second and peak memory on a 50,000-entry gzip sitemap, next
//! to the `sitemap` crate 0.4 in the same run.
//!
//! Each engine runs in a child process of this binary (so its peak RSS,
//! `VmHWM`, is its own), three times; the best time and the largest peak
//! are reported. The `sitemap` crate has no gzip support, so it reads
//! through flate2's decoder, the same decoder mannerly uses.
//!
//! Run: `cargo bench -p mannerly-sitemap --bench throughput`

use std::io::{Read, Write};
use std::process::Command;
use std::time::Instant;

const ENTRIES: usize = 50_000;

fn make_sitemap() -> Vec<u8> {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
    );
    for i in 0..ENTRIES {
        s.push_str(&format!(
            "  <url>\n    <loc>https://www.example.com/catalog/item-{i}?ref=sitemap&amp;page={}</loc>\n    <lastmod>2026-11-{:02}T10:{:02}:00+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n    <priority>0.{}</priority>\n  </url>\n",
            i % 97,
            1 + i % 28,
            i % 60,
            i % 10
        ));
    }
    s.push_str("</urlset>\n");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(s.as_bytes()).expect("gzip");
    enc.finish().expect("gzip")
}

/// Runs one engine over the file and prints `entries seconds peak_kb`.
fn child(engine: &str, path: &str) {
    let bytes = std::fs::read(path).expect("read");
    let start = Instant::now();
    let n = match engine {
        "mannerly" => {
            let parser = mannerly_sitemap::SitemapParser::from_bytes(
                &bytes,
                mannerly_sitemap::Options::default(),
                None,
            );
            parser.count()
        }
        "sitemap-0.4" => {
            let reader = flate2::read::GzDecoder::new(&bytes[..]);
            sitemap::reader::SiteMapReader::new(reader)
                .filter(|e| matches!(e, sitemap::reader::SiteMapEntity::Url(_)))
                .count()
        }
        "read-only" => {
            // Baseline: decompress and discard.
            let mut d = flate2::read::GzDecoder::new(&bytes[..]);
            let mut sink = [0u8; 64 * 1024];
            let mut total = 0;
            while let Ok(k) = d.read(&mut sink) {
                if k == 0 {
                    break;
                }
                total += k;
            }
            std::hint::black_box(total);
            ENTRIES
        }
        other => panic!("unknown engine {other}"),
    };
    let secs = start.elapsed().as_secs_f64();
    println!("{n} {secs} {}", mannerly_testsupport::peak_rss_kb());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], &args[i + 2]);
        return;
    }
    let gz = make_sitemap();
    let path = std::env::temp_dir().join(format!(
        "mannerly-bench-sitemap-{}.xml.gz",
        std::process::id()
    ));
    std::fs::write(&path, &gz).expect("write");
    let me = std::env::current_exe().expect("exe");
    println!(
        "sitemap: {ENTRIES} entries, {} KiB gzip; best of 3 runs, each in its own process",
        gz.len() / 1024
    );
    let mut results = Vec::new();
    for engine in ["read-only", "mannerly", "sitemap-0.4"] {
        let mut best = f64::MAX;
        let mut peak = 0;
        let mut count = 0;
        for _ in 0..3 {
            let out = Command::new(&me)
                .args(["--child", engine, path.to_str().expect("path")])
                .output()
                .expect("child");
            let text = String::from_utf8_lossy(&out.stdout);
            let mut f = text.split_whitespace();
            count = f.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            best = best.min(f.next().and_then(|x| x.parse().ok()).unwrap_or(f64::MAX));
            peak = peak.max(f.next().and_then(|x| x.parse().ok()).unwrap_or(0u64));
        }
        println!(
            "{engine:<12} {count:>6} entries  {:>8.1} ms  {:>10.0} entries/s  peak RSS {:>6} KiB",
            best * 1e3,
            count as f64 / best,
            peak
        );
        results.push((engine, best, peak));
    }
    let _ = std::fs::remove_file(&path);
    let (_, ours, our_peak) = results[1];
    let (_, theirs, their_peak) = results[2];
    println!(
        "mannerly vs sitemap 0.4: {:.2}x the speed, {:.2}x the peak memory",
        theirs / ours,
        our_peak as f64 / their_peak.max(1) as f64
    );
}
