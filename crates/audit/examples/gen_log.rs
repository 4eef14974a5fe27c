//! Writes a generated access log in the combined format to stdout: a day
//! of a site's traffic, browsers (pages and their assets) and bots (some
//! polite, some not), for the audit's benchmark.
//!
//! `cargo run --release -p mannerly-audit --example gen_log -- LINES [SEED]`

use std::io::{BufWriter, Write};

const BROWSERS: [&str; 6] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0",
];

const BOTS: [&str; 12] = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
    "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    "CCBot/2.0 (https://commoncrawl.org/faq/)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "python-requests/2.31.0",
    "curl/8.5.0",
    "Scrapy/2.11.2 (+https://scrapy.org)",
    "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
    "Go-http-client/1.1",
];

const ASSETS: [&str; 4] = [
    "/static/site.css",
    "/static/app.js",
    "/static/logo.png",
    "/favicon.ico",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `secs` after 2026-03-01T00:00:00Z, as a combined log writes it (the
/// generated logs span less than March).
fn clf(secs: u64) -> String {
    let day = 1 + secs / 86_400;
    let s = secs % 86_400;
    format!(
        "{:02}/Mar/2026:{:02}:{:02}:{:02} +0000",
        day.min(31),
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let lines: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = Rng(args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7));
    let out = std::io::stdout();
    let mut w = BufWriter::with_capacity(1 << 20, out.lock());
    let per_sec = (lines / 86_400).max(1);
    let mut n = 0;
    while n < lines {
        let t = n / per_sec;
        let bot = rng.below(10) < 4;
        let (ip, ua) = if bot {
            let b = rng.below(BOTS.len() as u64) as usize;
            (format!("66.249.{}.{}", b, rng.below(4)), BOTS[b])
        } else {
            let c = rng.below(50_000);
            (
                format!("10.{}.{}.{}", c >> 16, (c >> 8) & 255, c & 255),
                BROWSERS[(c % 6) as usize],
            )
        };
        let page = match rng.below(20) {
            0 => "/robots.txt".to_owned(),
            1 | 2 => format!("/private/{}", rng.below(1000)),
            3 => format!("/search?q={}", rng.below(100_000)),
            _ => format!("/articles/{}", rng.below(200_000)),
        };
        let status = match rng.below(100) {
            0 => 429,
            1..=4 => 404,
            _ => 200,
        };
        writeln!(
            w,
            "{ip} - - [{}] \"GET {page} HTTP/1.1\" {status} {} \"-\" \"{ua}\"",
            clf(t),
            500 + rng.below(50_000)
        )?;
        n += 1;
        if !bot && n < lines {
            for a in ASSETS.iter().take(rng.below(4) as usize) {
                writeln!(w, "{ip} - - [{}] \"GET {a} HTTP/1.1\" 200 {} \"https://site.example{page}\" \"{ua}\"", clf(t), 100 + rng.below(9_000))?;
                n += 1;
            }
        }
    }
    w.flush()
}
