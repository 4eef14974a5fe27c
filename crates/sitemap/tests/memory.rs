//! Memory bounds against hostile sitemaps, each case in a process of its
//! own so its peak resident set (`VmHWM`) is its own:
//!
//! - one sitemap input costs under 32 MiB, whatever it holds: 70 MB of
//!   whitespace in one text node (gzip, cut at the 50 MiB limit), 50 MB of
//!   `xhtml:link` or of `video:tag` in one `<url>`, a 50 MB line of a text
//!   sitemap (inputs are generated as they are read, never held);
//! - a walk over a site whose index fans out to thousands of children,
//!   each of them the same index again (a reused gzip body), stays under
//!   64 MiB: children are deduplicated and dropped at the walk's limit, and
//!   skips are counted, not stored.
//!
//! Before the bounds, these cost up to 205 MB (one file) and gigabytes (a
//! walk).

use std::io::{Read, Write};
use std::process::Command;

use mannerly_sitemap::{Options, SitemapParser};

/// Yields `head`, then `unit` repeated until `total` bytes, then `tail`.
struct Generated {
    parts: Vec<Vec<u8>>,
    unit: Vec<u8>,
    left: u64,
    stage: usize,
    pos: usize,
}

impl Generated {
    fn new(head: &str, unit: &str, total: u64, tail: &str) -> Generated {
        Generated {
            parts: vec![head.as_bytes().to_vec(), tail.as_bytes().to_vec()],
            unit: unit.as_bytes().to_vec(),
            left: total,
            stage: 0,
            pos: 0,
        }
    }
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.stage {
                0 | 2 => {
                    let part = &self.parts[self.stage / 2];
                    if self.pos < part.len() {
                        let n = buf.len().min(part.len() - self.pos);
                        buf[..n].copy_from_slice(&part[self.pos..self.pos + n]);
                        self.pos += n;
                        return Ok(n);
                    }
                    if self.stage == 2 {
                        return Ok(0);
                    }
                    self.stage = 1;
                    self.pos = 0;
                }
                _ => {
                    if self.left == 0 {
                        self.stage = 2;
                        self.pos = 0;
                        continue;
                    }
                    let mut n = 0;
                    while n < buf.len() && self.left > 0 {
                        buf[n] = self.unit[self.pos % self.unit.len()];
                        self.pos += 1;
                        n += 1;
                        self.left -= 1;
                    }
                    return Ok(n);
                }
            }
        }
    }
}

const URLSET: &str = "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\" xmlns:video=\"http://www.google.com/schemas/sitemap-video/1.1\">";

fn parse_all(input: impl Read + 'static) -> String {
    let mut p = SitemapParser::new(input, Options::default(), None);
    let n = p.by_ref().count();
    let s = p.finish();
    format!("{n} entries, {}", s.describe())
}

fn case(name: &str) -> String {
    const MB50: u64 = 50_000_000;
    match name {
        "whitespace" => {
            // 70 MB of whitespace in one text node, gzip-compressed (the
            // compressed form is small and held; the text never is).
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            let mut src = Generated::new(URLSET, " \n\t", 70_000_000, "</urlset>");
            std::io::copy(&mut src, &mut gz).expect("gzip");
            let bytes = gz.finish().expect("gzip");
            parse_all(std::io::Cursor::new(bytes))
        }
        "xhtml-links" => parse_all(Generated::new(
            &format!("{URLSET}<url><loc>https://e.com/</loc>"),
            "<xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"https://e.com/de/\"/>",
            MB50,
            "</url></urlset>",
        )),
        "video-tags" => parse_all(Generated::new(
            &format!(
                "{URLSET}<url><loc>https://e.com/</loc><video:video><video:title>t</video:title>"
            ),
            "<video:tag>tag</video:tag>",
            MB50,
            "</video:video></url></urlset>",
        )),
        "long-text" => parse_all(Generated::new(
            &format!("{URLSET}<url><loc>https://e.com/"),
            "a",
            MB50,
            "</loc></url></urlset>",
        )),
        "long-line" => parse_all(Generated::new(
            "https://e.com/",
            "a",
            MB50,
            "\nhttps://e.com/ok\n",
        )),
        "walk" => walk(),
        other => panic!("unknown case {other}"),
    }
}

/// A site whose index lists 5,000 children, each the same index again.
fn walk() -> String {
    use mannerly_fetch::{FetchConfig, HttpFetcher};
    use mannerly_sitemap::walk::{Start, WalkConfig, Walker};
    use mannerly_testweb::{Body, HostSpec, Reply, TestWeb, WebConfig};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let web = TestWeb::start(WebConfig::default()).await.expect("web");
        let base = web.url("fan.test", "/index.xml");
        let mut xml = String::from("<sitemapindex>");
        for i in 0..5_000 {
            xml.push_str(&format!("<sitemap><loc>{base}?c={i}</loc></sitemap>"));
        }
        xml.push_str("</sitemapindex>");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(xml.as_bytes()).expect("gzip");
        let body = gz.finish().expect("gzip");
        web.set_host(
            "fan.test",
            HostSpec::default().route(
                "/index.xml",
                vec![Reply::body(Body::Binary { bytes: body })],
            ),
        );
        drop(xml);
        let fetch = FetchConfig::default();
        let client = HttpFetcher::client_builder(&fetch)
            .dns_resolver(web.resolver())
            .build()
            .expect("client");
        let walker = Walker::new(
            HttpFetcher::with_client(client, fetch),
            WalkConfig {
                max_sitemaps: 200,
                max_depth: 1_000,
                ..WalkConfig::default()
            },
        );
        let start = Start::Sitemaps(vec![url::Url::parse(&base).expect("url")]);
        let (report, _) = walker.walk_collect(start).await;
        let fetched = report
            .sitemaps
            .iter()
            .filter(|v| {
                !matches!(
                    v.result,
                    mannerly_sitemap::walk::VisitResult::Skipped { .. }
                )
            })
            .count();
        format!("{fetched} fetched, skipped {:?}", report.skipped)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let what = case(&args[i + 1]);
        println!("{} {what}", mannerly_testsupport::peak_rss_kb());
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let exe = std::env::current_exe().expect("exe");
    let mut failed = 0;
    for (name, limit_mib) in [
        ("whitespace", 32),
        ("xhtml-links", 32),
        ("video-tags", 32),
        ("long-text", 32),
        ("long-line", 32),
        ("walk", 64),
    ] {
        let out = Command::new(&exe)
            .args(["--child", name])
            .output()
            .expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        let peak_kib: u64 = text
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(u64::MAX);
        let ok = out.status.success() && peak_kib < limit_mib * 1024;
        println!(
            "memory {name}: peak {} KiB (limit {limit_mib} MiB) ... {} ({})",
            peak_kib,
            if ok { "ok" } else { "FAILED" },
            text.trim().split_once(' ').map_or("", |x| x.1)
        );
        if !ok {
            failed += 1;
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
}
