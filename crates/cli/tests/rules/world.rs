//! The world the rules are tried on: the logs they are written from, the
//! published ranges, and the requests sent, each with whether a rule
//! must refuse it.

use std::net::IpAddr;
use std::path::PathBuf;

pub const GOOGLEBOTS: [&str; 5] = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/131.0.6778.69 Safari/537.36",
    "Googlebot-Image/1.0",
];
pub const BINGBOT: &str = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";
pub const BADBOT: &str = "Mozilla/5.0 (compatible; BadBot/1.0; +https://bad.example/)";
const ROBOTS: &str = "User-agent: *\nDisallow: /private\nCrawl-delay: 10\n";

/// Browsers when `../shared` is absent (outside CI): hyphens, `git`-like
/// words and platform words included.
const BUILT_IN_BROWSERS: [&str; 4] = [
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0",
];

/// Some of Google's published crawler ranges (common-crawlers.json) and
/// Bing's (bingbot.json), when `../shared` is absent.
const BUILT_IN_GOOGLE: [&str; 4] = [
    "66.249.64.0/27",
    "66.249.66.0/27",
    "66.249.79.224/27",
    "2001:4860:4801:10::/64",
];
const BUILT_IN_BING: [&str; 2] = ["157.55.39.0/24", "40.77.167.0/24"];

/// One request to send, and whether a rule must refuse it.
pub struct Ask {
    pub path: &'static str,
    pub user_agent: String,
    pub client: IpAddr,
    pub refuse: bool,
    pub what: &'static str,
}

pub struct World {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub logs: Vec<PathBuf>,
    pub range_args: Vec<String>,
    /// `--rules-include anonymous`, when asked.
    pub rule_args: Vec<String>,
    pub asks: Vec<Ask>,
}

impl World {
    /// The world; `anonymous`: the rules are asked to refuse anonymous
    /// clients and HTTP tools that broke robots.txt, by address.
    pub fn new(anonymous: bool) -> World {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().to_path_buf();
        let shared = mannerly_testsupport::shared_dir("the real-world server-rules test");
        std::fs::write(dir.join("robots.txt"), ROBOTS).expect("robots");
        std::fs::write(dir.join("access.log"), scripted_log()).expect("log");
        let mut logs = vec![dir.join("access.log")];
        let (google, bing, browsers) = match &shared {
            Some(s) => {
                logs.extend(shared_logs(s));
                let ranges = s.join("bots/ipverse_crawlers.json");
                (
                    ipverse(
                        &ranges,
                        &["Googlebot", "Google (special)", "Google (user-triggered)"],
                    ),
                    ipverse(&ranges, &["Bingbot"]),
                    real_browsers(s),
                )
            }
            None => {
                eprintln!("SKIPPED: ../shared is absent: built-in browsers and ranges stand in");
                let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
                (
                    own(&BUILT_IN_GOOGLE),
                    own(&BUILT_IN_BING),
                    own(&BUILT_IN_BROWSERS),
                )
            }
        };
        let mut range_args = Vec::new();
        for (name, nets) in [("Google", &google), ("Microsoft", &bing)] {
            let file = dir.join(format!("{name}.json"));
            std::fs::write(&file, prefixes_json(nets)).expect("ranges");
            range_args.push("--ip-ranges".to_owned());
            range_args.push(format!("{name}={}", file.display()));
        }
        let mut asks = asks(&browsers, &google, &bing);
        let mut rule_args = Vec::new();
        if anonymous {
            rule_args = vec!["--rules-include".to_owned(), "anonymous".to_owned()];
            for a in asks
                .iter_mut()
                .filter(|a| matches!(a.what, "anonymous" | "curl"))
            {
                a.refuse = a.path != "/robots.txt";
            }
            let anon: IpAddr = [198, 51, 100, 3].into();
            asks.push(Ask {
                path: "/robots.txt",
                user_agent: "-".to_owned(),
                client: anon,
                refuse: false,
                what: "anonymous reading robots.txt",
            });
            asks.push(Ask {
                path: "/",
                user_agent: "-".to_owned(),
                client: [198, 51, 100, 250].into(),
                refuse: false,
                what: "anonymous at an address that broke nothing",
            });
        }
        World {
            _tmp: tmp,
            dir,
            logs,
            range_args,
            rule_args,
            asks,
        }
    }

    /// How many requests of each sort.
    pub fn tally(&self) -> String {
        let mut t: Vec<(&str, usize, usize)> = Vec::new();
        for a in &self.asks {
            match t.iter_mut().find(|(w, _, _)| *w == a.what) {
                Some((_, n, r)) => {
                    *n += 1;
                    *r += usize::from(a.refuse);
                }
                None => t.push((a.what, 1, usize::from(a.refuse))),
            }
        }
        t.iter()
            .map(|(w, n, r)| format!("{w}: {n} sent, {r} refused"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The scripted log: what a site sees on a bad day.
fn scripted_log() -> String {
    let line = |at: u32, ip: &str, path: &str, ua: &str| {
        format!(
            "{ip} - - [01/Mar/2026:10:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 5 \"-\" \"{ua}\"\n",
            at / 60,
            at % 60
        )
    };
    let mut l = String::new();
    for i in 0..30 {
        // The real Googlebot, every second under a Crawl-delay of 10.
        let path = if i == 0 { "/robots.txt" } else { "/a" };
        l += &line(i, "66.249.66.1", path, GOOGLEBOTS[0]);
        // Anonymous clients and curl hammering a disallowed path.
        l += &line(i, &format!("198.51.100.{i}"), "/private/x", "-");
        l += &line(
            i,
            &format!("198.51.100.{}", 100 + i),
            "/private/x",
            "curl/8.5.0",
        );
        l += &line(
            i,
            "192.0.2.8",
            "/private/f",
            "Feedly/1.0 (+http://www.feedly.com/fetcher.html; 3 subscribers)",
        );
    }
    l += &line(40, "203.0.113.9", "/private/y", GOOGLEBOTS[0]);
    l += &line(41, "2001:db8::9", "/", GOOGLEBOTS[2]);
    l += &line(42, "198.51.100.200", "/", BINGBOT);
    l += &line(43, "192.0.2.7", "/robots.txt", BADBOT);
    l += &line(44, "192.0.2.7", "/private/z", BADBOT);
    l
}

fn shared_logs(shared: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(shared.join("logs"))
        .expect("../shared/logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log" || x == "jsonl"))
        .collect();
    v.sort();
    assert!(v.len() >= 10, "the real logs: {v:?}");
    v
}

/// Every real browser User-Agent the catalogues hold that a header can
/// carry.
fn real_browsers(shared: &std::path::Path) -> Vec<String> {
    let mut v = Vec::new();
    let jsonl = std::fs::read_to_string(shared.join("bots/fake-useragent_browsers.jsonl"))
        .expect("fake-useragent");
    for l in jsonl.lines() {
        let j: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
        if let Some(ua) = j["useragent"].as_str() {
            v.push(ua.to_owned());
        }
    }
    let yml = std::fs::read_to_string(shared.join("bots/isbot_browsers.yml")).expect("isbot");
    v.extend(
        yml.lines()
            .filter_map(|l| l.strip_prefix("  - "))
            .map(|s| s.trim().trim_matches('\'').trim_matches('"').to_owned()),
    );
    v.retain(|ua| !ua.is_empty() && ua.bytes().all(|b| (0x20..0x7f).contains(&b)));
    v.sort();
    v.dedup();
    assert!(v.len() >= 1_000, "{} real browser User-Agents", v.len());
    v
}

/// The ranges ipverse's file lists for these services.
fn ipverse(path: &std::path::Path, services: &[&str]) -> Vec<String> {
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("ipverse")).expect("JSON");
    let mut v = Vec::new();
    for s in services {
        for family in ["ipv4", "ipv6"] {
            for r in j["services"][s][family].as_array().expect("ranges") {
                v.push(r.as_str().expect("a range").to_owned());
            }
        }
    }
    assert!(!v.is_empty(), "{services:?}");
    v
}

fn prefixes_json(nets: &[String]) -> String {
    let p: Vec<serde_json::Value> = nets
        .iter()
        .map(|n| {
            let key = if n.contains(':') {
                "ipv6Prefix"
            } else {
                "ipv4Prefix"
            };
            serde_json::json!({ key: n })
        })
        .collect();
    serde_json::json!({ "prefixes": p }).to_string()
}

/// An address inside a range: its first host.
fn inside(net: &str) -> IpAddr {
    let (addr, _) = net.split_once('/').unwrap_or((net, ""));
    match addr.parse().expect("a range's address") {
        IpAddr::V4(a) => IpAddr::V4((u32::from(a) + 1).into()),
        IpAddr::V6(a) => IpAddr::V6((u128::from(a) + 1).into()),
    }
}

fn asks(browsers: &[String], google: &[String], bing: &[String]) -> Vec<Ask> {
    let ask = |path, ua: &str, client: IpAddr, refuse, what| Ask {
        path,
        user_agent: ua.to_owned(),
        client,
        refuse,
        what,
    };
    let mut v = Vec::new();
    for (i, ua) in browsers.iter().enumerate() {
        let client = IpAddr::from([198, 18, (i / 250) as u8, (i % 250 + 1) as u8]);
        v.push(ask("/", ua, client, false, "browser"));
    }
    for (i, net) in google.iter().enumerate() {
        let ua = GOOGLEBOTS[i % GOOGLEBOTS.len()];
        v.push(ask(
            "/",
            ua,
            inside(net),
            false,
            "Google's crawler from its ranges",
        ));
    }
    for net in bing {
        v.push(ask(
            "/",
            BINGBOT,
            inside(net),
            false,
            "Bingbot from its ranges",
        ));
    }
    let spoofers: [IpAddr; 3] = [
        [203, 0, 113, 50].into(),
        "2001:db8::50".parse().expect("v6"),
        [192, 0, 2, 99].into(),
    ];
    for client in spoofers {
        // Googlebot-Image is left out: no spoofer of it is in the log, so
        // no rule refuses one.
        for ua in GOOGLEBOTS[..4].iter().chain([&BINGBOT]) {
            v.push(ask("/", ua, client, true, "spoofer"));
            v.push(ask(
                "/robots.txt",
                ua,
                client,
                false,
                "spoofer reading robots.txt",
            ));
        }
    }
    let breaker: IpAddr = [192, 0, 2, 7].into();
    for path in ["/", "/private/z", "/page"] {
        v.push(ask(path, BADBOT, breaker, true, "rule-breaker"));
    }
    v.push(ask(
        "/robots.txt",
        BADBOT,
        breaker,
        false,
        "rule-breaker reading robots.txt",
    ));
    v.push(ask(
        "/",
        "badbot",
        [192, 0, 2, 70].into(),
        true,
        "rule-breaker",
    ));
    v.push(ask("/", "NotBadBot/1.0", breaker, false, "a longer name"));
    v.push(ask("/", "BadBotany/1.0", breaker, false, "a longer name"));
    let anon: IpAddr = [198, 51, 100, 3].into();
    v.push(ask("/private/x", "-", anon, false, "anonymous"));
    v.push(ask(
        "/private/x",
        "curl/8.5.0",
        [198, 51, 100, 103].into(),
        false,
        "curl",
    ));
    v
}
