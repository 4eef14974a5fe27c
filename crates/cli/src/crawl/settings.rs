//! `mannerly crawl`'s flags made into a [`CrawlConfig`]: who the
//! crawler says it is (flags, else its Signature Agent Card), its bounds,
//! its scope and its signing key.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use mannerly_crawl::normalize::ScopeMode;
use mannerly_crawl::CrawlConfig;

use super::{Args, Scope};

/// The crawl's configuration from its flags (before a fleet's lease
/// bounds its timeouts).
pub(super) fn config(args: &Args) -> Result<CrawlConfig> {
    let identity = CrawlerIdentity::of(args)?;
    let mut config = CrawlConfig::default();
    if let Some(ua) = &identity.user_agent {
        identifiable(ua, args.anonymous_ok)?;
        config.user_agent = ua.clone();
        config.agent = mannerly_robots::product_token(ua).unwrap_or_default();
    }
    if let Some(a) = &identity.agent {
        config.agent = a.clone();
    }
    if config.agent.is_empty() {
        bail!(
            "--user-agent {:?} names no product token of its own (only browser and platform words): give --agent TOKEN, the robots.txt group to obey",
            config.user_agent
        );
    }
    bounds(args, &mut config);
    config.signing = signing(args, &identity)?;
    config.options = args.options.clone();
    Ok(config)
}

/// Whether a User-Agent names its crawler as the Crawler Best Practices
/// ask: a product token of its own and an http(s) URL of a page about it.
/// Without both, the crawl is refused unless `--anonymous-ok`.
fn identifiable(ua: &str, anonymous_ok: bool) -> Result<()> {
    let token = mannerly_robots::product_token(ua);
    let url = ua.contains("http://") || ua.contains("https://");
    let lacks = match (token.is_some(), url) {
        (true, true) => return Ok(()),
        (false, true) => "a product token of its own",
        (true, false) => "an http(s) URL of a page about the crawler",
        (false, false) => "a product token of its own and an http(s) URL",
    };
    let good = "ExampleBot/1.0 (+https://example.com/bot)";
    let lacks = match mannerly_robots::page_without_scheme(ua).filter(|_| !url) {
        Some(w) => format!("{lacks} (`{w}` lacks its scheme: write `+https://{w}`)"),
        None => lacks.to_owned(),
    };
    if anonymous_ok {
        eprintln!("mannerly: warning: --user-agent {ua:?} lacks {lacks}: site owners cannot tell who crawled them (like {good:?})");
        return Ok(());
    }
    bail!(
        "--user-agent {ua:?} lacks {lacks}, so site owners cannot tell who crawled them or reach you: give one like {good:?} (the page saying what the crawler is, how to block it and whom to contact), or --anonymous-ok"
    )
}

/// The crawl's bounds, scope and switches, as the flags set them.
fn bounds(args: &Args, config: &mut CrawlConfig) {
    config.min_delay = Duration::from_secs_f64(args.min_delay);
    config.concurrency = args.concurrency;
    config.open_hosts = args.open_hosts;
    config.max_bytes = args.max_bytes;
    config.max_pages = args.max_pages;
    config.max_pages_per_host = args.max_pages_per_host;
    config.max_depth = Some(args.max_depth);
    config.scope = match args.scope {
        Scope::Host => ScopeMode::Host,
        Scope::Domain => ScopeMode::Domain,
        Scope::Any => ScopeMode::Any,
    };
    config.include = args.include.clone();
    config.exclude = args.exclude.clone();
    config.follow_rel_nofollow = args.follow_rel_nofollow;
    config.content_types = args.content_types.clone();
    config.retries = args.retries;
    config.give_up_after = Duration::from_secs(args.give_up_after);
    config.timeout = Duration::from_secs(args.timeout);
    config.first_byte_timeout = config.first_byte_timeout.min(config.timeout);
    config.connect_timeout = config.connect_timeout.min(config.timeout);
    config.warc_max_size = args.warc_max_size;
    config.proxy = args.proxy.clone();
    config.sitemaps = !args.no_sitemaps;
    config.evidence = !args.no_evidence;
}

/// The Web Bot Auth key and Signature-Agent, when `--sign-key` is given.
fn signing(
    args: &Args,
    identity: &CrawlerIdentity,
) -> Result<Option<(mannerly_botauth::KeyPair, String)>> {
    let Some(key) = &args.sign_key else {
        return Ok(None);
    };
    let bytes = std::fs::read(key)
        .with_context(|| format!("cannot read --sign-key '{}'", key.display()))?;
    let pem = String::from_utf8_lossy(&bytes);
    let pair = mannerly_botauth::KeyPair::from_pkcs8_pem(&pem)
        .with_context(|| format!("--sign-key '{}'", key.display()))?;
    let Some(agent) = &identity.signature_agent else {
        bail!("--sign-key needs --signature-agent URL (or a --card with a jwks_uri)");
    };
    if !agent.starts_with("https://") {
        bail!("--signature-agent {agent}: key directories are served over https");
    }
    Ok(Some((pair, agent.clone())))
}

/// The longest `--min-delay`: a day between two requests to a host.
const MAX_DELAY_SECS: f64 = 86_400.0;

/// A `--min-delay` (and the audit's spans of time): seconds from 0 to a
/// day (a fraction allowed).
pub(crate) fn delay_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=MAX_DELAY_SECS).contains(&v) => Ok(v),
        Ok(v) if v.is_finite() && v > MAX_DELAY_SECS => Err(format!(
            "{s} seconds is longer than a day ({MAX_DELAY_SECS} s), the longest taken"
        )),
        _ => Err(format!(
            "'{s}' is not a number of seconds from 0 to {MAX_DELAY_SECS}"
        )),
    }
}

/// A `--user-agent`: text that can go in an HTTP header as it is (no
/// control character but tab), not blank.
pub(crate) fn user_agent_value(s: &str) -> Result<String, String> {
    if let Some((at, c)) = mannerly_robots::unsendable_char(s) {
        return Err(format!(
            "{s:?} cannot be sent as a User-Agent header: it holds the control character {c:?} at byte {at}"
        ));
    }
    if s.trim().is_empty() {
        return Err("a User-Agent cannot be blank: give one like \"ExampleBot/1.0 (+https://example.com/bot)\"".into());
    }
    Ok(s.to_owned())
}

/// A `--frontier`: one Redis URL, or several comma-separated (a cluster's
/// nodes), each `redis://`, `rediss://` or a Unix socket's.
pub(crate) fn frontier_value(s: &str) -> Result<String, String> {
    const SCHEMES: [&str; 4] = ["redis", "rediss", "redis+unix", "unix"];
    for node in s.split(',').map(str::trim) {
        let ok = url::Url::parse(node).is_ok_and(|u| SCHEMES.contains(&u.scheme()));
        if !ok {
            return Err(format!(
                "'{node}' is not a Redis URL: give redis://HOST:PORT/ (rediss:// for TLS), several comma-separated for a cluster"
            ));
        }
    }
    Ok(s.to_owned())
}

/// An `--agent`: not blank (a blank one would obey only the `*` group
/// while the crawl said otherwise).
pub(crate) fn agent_value(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err(
            "name the product token whose robots.txt group to obey, e.g. ExampleBot".into(),
        );
    }
    Ok(s.trim().to_owned())
}

/// A `--proxy`: an http(s) URL naming a host (the HTTP client speaks to
/// http and https proxies only).
pub(crate) fn proxy_value(s: &str) -> Result<String, String> {
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(s.to_owned()),
        Ok(u) => Err(format!(
            "'{s}': only http:// and https:// proxies are spoken to, not {}:",
            u.scheme()
        )),
        Err(e) => Err(format!("'{s}' is not a URL ({e}): give http://HOST:PORT")),
    }
}

/// A `--content-types` entry: `type/subtype` or `type/*`.
pub(super) fn media_range(s: &str) -> Result<String, String> {
    let t = s.trim().to_ascii_lowercase();
    let token = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    match t.split_once('/') {
        Some((top, sub)) if token(top) && (sub == "*" || token(sub)) => Ok(t),
        _ => Err(format!(
            "'{s}' is not a media type (type/subtype, or type/* for a whole type)"
        )),
    }
}

/// Who the crawler says it is: from the flags, else its card.
struct CrawlerIdentity {
    user_agent: Option<String>,
    agent: Option<String>,
    signature_agent: Option<String>,
}

impl CrawlerIdentity {
    /// The identity the flags and the card give.
    fn of(args: &Args) -> Result<CrawlerIdentity> {
        let mut id = CrawlerIdentity {
            user_agent: args.user_agent.clone(),
            agent: args.agent.clone(),
            signature_agent: args.signature_agent.clone(),
        };
        let Some(path) = &args.card else {
            return Ok(id);
        };
        let text = std::fs::read(path)
            .with_context(|| format!("cannot read --card '{}'", path.display()))?;
        let card: mannerly_botauth::card::Card =
            serde_json::from_slice(&text).with_context(|| {
                format!("--card '{}' is not a Signature Agent Card", path.display())
            })?;
        let expected = card
            .web_bot_auth
            .as_ref()
            .map(|w| w.expected_user_agent.clone())
            .unwrap_or_default();
        match &id.user_agent {
            Some(ua) if !expected.is_empty() && !card.matches_user_agent(ua) => bail!(
                "--user-agent {ua:?} is not one the card expects ({expected:?}): verifiers that check the card would flag every request"
            ),
            Some(_) => {}
            None => match expected.first() {
                Some(ua) if ua.contains('*') => bail!(
                    "the card's expected-user-agent {ua:?} is a pattern: give --user-agent"
                ),
                Some(ua) => id.user_agent = Some(ua.clone()),
                None => {}
            },
        }
        if id.agent.is_none() {
            id.agent = card.product_token().map(str::to_owned);
        }
        if id.signature_agent.is_none() {
            id.signature_agent = card.jwks_uri.clone();
        }
        Ok(id)
    }
}

/// A seed that is not a URL the crawl can fetch, where it was given, and
/// why.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct RejectedSeed {
    /// The seed as given.
    pub seed: String,
    /// `argument N`, or `FILE:LINE`.
    pub at: String,
    /// Why it was rejected.
    pub why: String,
}

/// The seeds given as arguments and in `--seeds`: those the crawl can
/// fetch, and each one it cannot, named on stderr with where and why.
pub(super) fn read_seeds(args: &Args) -> Result<(Vec<String>, Vec<RejectedSeed>)> {
    let mut given: Vec<(String, String)> = args
        .urls
        .iter()
        .enumerate()
        .map(|(i, u)| (u.clone(), format!("argument {}", i + 1)))
        .collect();
    if let Some(f) = &args.seeds {
        let text = if f == "-" {
            std::io::read_to_string(std::io::stdin()).context("cannot read seeds from stdin")?
        } else {
            std::fs::read_to_string(f).with_context(|| format!("cannot read seeds from '{f}'"))?
        };
        let name = if f == "-" { "<stdin>" } else { f.as_str() };
        // A byte-order mark, as some editors start a file with, is not
        // part of the first seed.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        given.extend(
            text.lines()
                .enumerate()
                .map(|(i, l)| (l.trim(), i + 1))
                .filter(|(l, _)| !l.is_empty() && !l.starts_with('#'))
                .map(|(l, n)| (l.to_owned(), format!("{name}:{n}"))),
        );
    }
    let mut good = Vec::with_capacity(given.len());
    let mut rejected = Vec::new();
    for (seed, at) in given {
        match mannerly_crawl::normalize::CrawlUrl::parse(&seed) {
            Ok(_) => good.push(seed),
            Err(e) => {
                let why = format!("{e}{}", scheme_hint(&seed));
                eprintln!("mannerly: {at}: seed {seed:?} rejected: {why}");
                rejected.push(RejectedSeed { seed, at, why });
            }
        }
    }
    Ok((good, rejected))
}

/// For a seed written as a bare host (`example.com/a`): the URL meant.
fn scheme_hint(seed: &str) -> String {
    let host = seed.split('/').next().unwrap_or_default();
    let looks_like_a_host = !seed.contains("://")
        && host.contains('.')
        && !host.contains(char::is_whitespace)
        && mannerly_crawl::normalize::CrawlUrl::parse(&format!("https://{seed}")).is_ok();
    if looks_like_a_host {
        format!(" (did you mean https://{seed}?)")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: super::Args,
    }

    fn config(flags: &[&str]) -> mannerly_crawl::CrawlConfig {
        let wrap = Wrap::try_parse_from([&["crawl"], flags, &["https://a.test/"]].concat())
            .unwrap_or_else(|e| panic!("{e}"));
        super::config(&wrap.args).unwrap_or_else(|e| panic!("{e:#}"))
    }

    /// The crawler obeys the group of the product token its User-Agent
    /// names, read as the audit and the gate read it, not its first word.
    #[test]
    fn a_browser_styled_user_agent_obeys_its_crawler_token() {
        let ua = "Mozilla/5.0 (compatible; MyBot/1.0; +https://x.example/bot)";
        assert_eq!(config(&["--user-agent", ua]).agent, "MyBot");
        let plain = "OpBot/1.0 (+http://op.example/bot)";
        assert_eq!(config(&["--user-agent", plain]).agent, "OpBot");
        // A version joined by `-` is not part of the group's name.
        let joined = "TwengaBot-2.0 (+http://www.twenga.com/bot.html)";
        assert_eq!(config(&["--user-agent", joined]).agent, "TwengaBot");
        let given = ["--user-agent", ua, "--agent", "Other"];
        assert_eq!(config(&given).agent, "Other");
        // A browser's User-Agent names no crawler: refused unless the
        // crawl is knowingly anonymous, and then the group must be said.
        let browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
        let refused = |flags: &[&str]| {
            let wrap = Wrap::try_parse_from([&["crawl"], flags, &["https://a.test/"]].concat())
                .unwrap_or_else(|e| panic!("{e}"));
            match super::config(&wrap.args) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{flags:?}: a browser's User-Agent has no token of its own"),
            }
        };
        let said = refused(&["--user-agent", browser, "--agent", "MyBot"]);
        assert!(said.contains("lacks a product token of its own"), "{said}");
        let said = refused(&["--user-agent", browser, "--anonymous-ok"]);
        assert!(said.contains("--agent TOKEN"), "{said}");
        let told = [
            "--user-agent",
            browser,
            "--anonymous-ok",
            "--agent",
            "MyBot",
        ];
        assert_eq!(config(&told).agent, "MyBot");
    }

    /// A seeds file saved with a byte-order mark keeps its first seed; a
    /// seed written as a bare host is rejected with the URL it meant.
    #[test]
    fn seeds_survive_a_byte_order_mark_and_bare_hosts_are_explained() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("seeds.txt");
        std::fs::write(
            &file,
            "\u{feff}https://a.test/\r\nexample.com/start\r\nnot a url\r\n",
        )
        .expect("seeds");
        let f = file.to_str().expect("utf-8");
        let wrap = Wrap::try_parse_from(["crawl", "--seeds", f]).unwrap_or_else(|e| panic!("{e}"));
        let (good, rejected) = super::read_seeds(&wrap.args).expect("read");
        assert_eq!(good, ["https://a.test/"]);
        assert_eq!(rejected.len(), 2);
        assert!(rejected[0]
            .why
            .ends_with("(did you mean https://example.com/start?)"));
        assert!(
            !rejected[1].why.contains("did you mean"),
            "{}",
            rejected[1].why
        );
    }
}
