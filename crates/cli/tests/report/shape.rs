//! A generated day of a small site's access log, shaped like a real one
//! a site owner brought (5,854 lines): about 6,000 lines, 60 and more
//! clients of every kind: browsers and their assets, crawlers that keep
//! the rules (Googlebot and Bingbot from their operators' ranges), a few
//! that break them, spoofers of Googlebot and Bingbot, user-triggered
//! fetchers, feed readers, link previews, monitors, HTTP tools and
//! clients with no User-Agent. The User-Agents are the ones these clients
//! send.

use std::fmt::Write;

/// The robots.txt the log is judged against.
pub const ROBOTS: &str =
    "User-agent: *\nDisallow: /private/\nCrawl-delay: 10\n\nUser-agent: GPTBot\nDisallow: /\n";

/// Googlebot's and Bingbot's ranges (JAFAR-like), as `--ip-ranges` takes.
pub const GOOGLE_RANGES: &str = r#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/19"}]}"#;
pub const BING_RANGES: &str = r#"{"prefixes":[{"ipv4Prefix":"157.55.39.0/24"}]}"#;

const BROWSERS: [&str; 6] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0",
];

/// Crawlers that read robots.txt first and keep to its rules and pace:
/// (address, User-Agent, requests).
const POLITE: [(&str, &str, u32); 20] = [
    ("66.249.66.1", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 180),
    ("157.55.39.10", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 120),
    ("17.241.219.3", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", 60),
    ("40.88.21.235", "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", 30),
    ("5.255.253.9", "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", 70),
    ("114.119.132.7", "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)", 40),
    ("52.70.240.171", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36", 50),
    ("18.97.9.168", "CCBot/2.0 (https://commoncrawl.org/faq/)", 45),
    ("185.191.171.4", "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", 90),
    ("54.36.148.92", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", 110),
    ("207.46.13.5", "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", 35),
    ("216.244.66.2", "Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)", 25),
    ("77.75.77.62", "Mozilla/5.0 (compatible; SeznamBot/4.0; +https://o-seznamu.seznam.cz/)", 20),
    ("220.181.108.75", "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", 30),
    ("91.242.162.20", "Mozilla/5.0 (compatible; Qwantbot/1.0_4193332; +https://help.qwant.com/bot/)", 15),
    ("3.224.220.101", "Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)", 25),
    ("85.208.96.200", "Mozilla/5.0 (compatible; DataForSeoBot/1.0; +https://dataforseo.com/dataforseo-bot)", 20),
    ("65.108.2.171", "Mozilla/5.0 (compatible; BLEXBot/1.0; +http://webmeup-crawler.com/)", 15),
    ("141.95.1.10", "Mozilla/5.0 (compatible; Barkrowler/0.9; +https://babbar.tech/crawler)", 15),
    ("51.222.253.1", "Mozilla/5.0 (compatible; ImagesiftBot; +imagesift.com)", 10),
];

/// Crawlers that break rules: (address, User-Agent, requests, how).
const RUDE: [(&str, &str, u32, Rude); 5] = [
    ("20.171.207.12", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", 60, Rude::Disallowed),
    ("110.249.201.9", "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", 150, Rude::TooSoon),
    ("34.162.46.92", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", 40, Rude::NoRobots),
    ("47.128.30.4", "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", 50, Rude::Private),
    ("94.130.0.8", "Mozilla/5.0 (compatible; SERankingBacklinksBot/1.0; +https://seranking.com/backlinks-crawler)", 80, Rude::TooSoon),
];

#[derive(Clone, Copy)]
enum Rude {
    /// Asks for what its own group disallows.
    Disallowed,
    /// Two seconds apart against a Crawl-delay of 10.
    TooSoon,
    /// Never reads robots.txt.
    NoRobots,
    /// Reads robots.txt, then asks for /private/ too.
    Private,
}

/// Clients robots.txt does not govern, and spoofers: (address,
/// User-Agent, requests).
const OTHERS: [(&str, &str, u32); 39] = [
    // Spoofers: crawlers' names from outside their operators' ranges.
    ("45.155.205.7", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 40),
    ("193.32.162.8", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 25),
    ("89.248.165.3", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 12),
    ("62.210.10.5", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 18),
    // User-triggered fetchers.
    ("23.98.142.180", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", 12),
    ("44.221.181.252", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)", 8),
    // Feed readers.
    ("52.1.2.3", "Feedly/1.0 (+http://www.feedly.com/fetcher.html; 12 subscribers; like FeedFetcher-Google)", 48),
    ("185.53.178.9", "Mozilla/5.0 (compatible; Inoreader/1.0; https://www.inoreader.com; 4 subscribers)", 48),
    ("104.131.9.77", "NewsBlur Feed Fetcher - 3 subscribers - https://www.newsblur.com/site/1234/site (Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.0.1 Safari/605.1.15)", 24),
    ("192.241.160.2", "Feedbin feed-id:1234 - 2 subscribers", 24),
    // Link previews.
    ("69.171.249.11", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", 9),
    ("54.209.60.63", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", 6),
    ("199.16.157.180", "Twitterbot/1.0", 5),
    ("35.227.62.178", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", 4),
    ("149.154.161.10", "TelegramBot (like TwitterBot)", 3),
    // Monitors.
    ("69.162.124.226", "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", 96),
    ("178.255.152.2", "Mozilla/5.0 (compatible; pingdom.com_bot_version_1.4_(http://www.pingdom.com/))", 48),
    // HTTP tools, each address on its own.
    ("203.0.113.10", "curl/8.5.0", 20),
    ("203.0.113.11", "curl/7.81.0", 6),
    ("203.0.113.20", "python-requests/2.31.0", 35),
    ("203.0.113.21", "python-requests/2.28.1", 8),
    ("203.0.113.30", "Go-http-client/1.1", 30),
    ("203.0.113.40", "Wget/1.21.4", 10),
    ("203.0.113.50", "axios/1.6.8", 7),
    ("203.0.113.51", "okhttp/4.12.0", 5),
    ("203.0.113.60", "Java/17.0.9", 4),
    ("203.0.113.61", "libwww-perl/6.72", 3),
    ("203.0.113.62", "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", 6),
    ("203.0.113.63", "Python-urllib/3.11", 5),
    ("203.0.113.64", "aiohttp/3.9.3", 4),
    ("203.0.113.12", "curl/8.4.0", 3),
    ("203.0.113.22", "python-requests/2.32.3", 11),
    // No User-Agent.
    ("198.18.0.5", "-", 15),
    ("198.18.0.6", "-", 9),
    ("198.18.0.7", "-", 4),
    ("198.18.0.8", "-", 3),
    ("198.18.0.9", "-", 2),
    ("198.18.0.10", "-", 6),
    ("198.18.0.11", "-", 2),
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `secs` after 2026-03-01T00:00:00Z, as a combined log writes it.
fn clf(secs: u64) -> String {
    let s = secs.min(86_399);
    format!(
        "01/Mar/2026:{:02}:{:02}:{:02} +0000",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

fn line(t: u64, ip: &str, path: &str, status: u16, ua: &str) -> (u64, String) {
    let mut l = String::new();
    let _ = write!(
        l,
        "{ip} - - [{}] \"GET {path} HTTP/1.1\" {status} 5120 \"-\" \"{ua}\"",
        clf(t)
    );
    (t, l)
}

/// A crawler's day: robots.txt, then `n` pages `gap` seconds or more
/// apart, starting at `start`.
fn crawler(out: &mut Vec<(u64, String)>, rng: &mut Rng, c: (&str, &str, u32), how: Option<Rude>) {
    let (ip, ua, n) = c;
    let mut t = 600 + rng.below(3_600);
    if !matches!(how, Some(Rude::NoRobots)) {
        out.push(line(t, ip, "/robots.txt", 200, ua));
        t += 15;
    }
    for i in 0..n {
        let path = match how {
            Some(Rude::Disallowed) => format!("/articles/{}", rng.below(5_000)),
            Some(Rude::Private) if i % 3 == 0 => format!("/private/{}", rng.below(500)),
            _ => format!("/articles/{}", rng.below(5_000)),
        };
        out.push(line(t, ip, &path, 200, ua));
        t += match how {
            Some(Rude::TooSoon) => 2,
            _ => 11 + rng.below(600),
        };
    }
}

/// The log's lines, in time order.
pub fn log() -> String {
    let mut rng = Rng(5_854);
    let mut out: Vec<(u64, String)> = Vec::new();
    for c in POLITE {
        crawler(&mut out, &mut rng, c, None);
    }
    for (ip, ua, n, how) in RUDE {
        crawler(&mut out, &mut rng, (ip, ua, n), Some(how));
    }
    for (ip, ua, n) in OTHERS {
        let every = 86_000 / u64::from(n);
        for i in 0..u64::from(n) {
            let path = if ua.contains("Feed") || ua.contains("Inoreader") || ua.contains("NewsBlur")
            {
                "/feed.xml".to_owned()
            } else {
                format!("/articles/{}", rng.below(5_000))
            };
            out.push(line(
                i * every + rng.below(every / 2 + 1),
                ip,
                &path,
                200,
                ua,
            ));
        }
    }
    // People: pages with their assets, and one who reads fast.
    let mut n = 0;
    while n < 4_000 {
        let who = rng.below(40);
        let ip = format!("198.51.100.{}", who + 1);
        let ua = BROWSERS[(who % 6) as usize];
        let t = rng.below(86_000);
        out.push(line(
            t,
            &ip,
            &format!("/articles/{}", rng.below(5_000)),
            200,
            ua,
        ));
        for a in ["/static/site.css", "/static/app.js", "/favicon.ico"]
            .iter()
            .take(rng.below(4) as usize)
        {
            out.push(line(t, &ip, a, 200, ua));
            n += 1;
        }
        n += 1;
    }
    // A browser's User-Agent that reads like a crawler: no assets, a
    // page every few seconds, into /private/ too.
    let suspect = BROWSERS[0];
    for i in 0..120u64 {
        let path = match i % 4 {
            0 => format!("/private/{i}"),
            _ => format!("/articles/{}", rng.below(5_000)),
        };
        out.push(line(40_000 + i * 3, "192.0.2.77", &path, 200, suspect));
    }
    out.sort_by_key(|(t, _)| *t);
    let mut text = String::new();
    for (_, l) in out {
        text.push_str(&l);
        text.push('\n');
    }
    text
}
