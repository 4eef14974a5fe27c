//! `mannerly fetch`, and fetching robots.txt for `mannerly check`.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::text::clean;
use anyhow::{Context, Result};
use mannerly_fetch::policy::PolicyConfig;
use mannerly_fetch::{
    Access, CacheConfig, Decision, FetchConfig, HttpFetcher, NoStore, Origin, OriginState, Profile,
    RobotsCache, SystemClock,
};
use mannerly_robots::ParseOptions;

#[derive(clap::Args)]
pub struct Args {
    /// Any URL on the origin whose robots.txt to fetch (scheme, host and
    /// port make the origin).
    #[arg(value_name = "URL")]
    url: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Follow RFC 9309 instead of Google's handling.
    #[arg(long)]
    rfc: bool,
    /// User-Agent header for the request.
    #[arg(long, value_name = "UA", value_parser = crate::crawl::user_agent_value)]
    user_agent: Option<String>,
    /// Whole-request timeout in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
}

/// Fetches the robots.txt of `origin` once, as a crawler would.
pub fn fetch_origin(
    origin: &Origin,
    rfc: bool,
    user_agent: Option<&str>,
    timeout: u64,
    max_bytes: usize,
) -> Result<(Decision, OriginState)> {
    let mut config = FetchConfig {
        timeout: Duration::from_secs(timeout.max(1)),
        max_bytes,
        ..FetchConfig::default()
    };
    if let Some(ua) = user_agent {
        config.user_agent = ua.to_owned();
    }
    let fetcher = HttpFetcher::new(config)?;
    let policy = PolicyConfig {
        profile: if rfc {
            Profile::Rfc9309
        } else {
            Profile::Google
        },
        parse: ParseOptions {
            max_bytes,
            ..ParseOptions::strict(rfc)
        },
        ..PolicyConfig::default()
    };
    let cache = RobotsCache::new(
        fetcher,
        Arc::new(SystemClock),
        Arc::new(NoStore),
        CacheConfig {
            policy,
            ..CacheConfig::default()
        },
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok(runtime.block_on(async {
        let d = cache.decision(origin).await;
        (d, cache.state(origin).await)
    }))
}

#[derive(serde::Serialize)]
struct Json<'a> {
    origin: String,
    access: mannerly_fetch::AccessKind,
    reason: &'a str,
    expires_at: String,
    groups: Option<usize>,
    rules: Option<usize>,
    sitemaps: Vec<String>,
    history: Vec<JsonHistory<'a>>,
}

#[derive(serde::Serialize)]
struct JsonHistory<'a> {
    at: String,
    outcome: &'a str,
    decision: &'a str,
}

pub fn run(args: Args) -> Result<u8> {
    let origin = Origin::of(&args.url)?;
    let (decision, state) = fetch_origin(
        &origin,
        args.rfc,
        args.user_agent.as_deref(),
        args.timeout,
        mannerly_robots::DEFAULT_MAX_BYTES,
    )?;
    let (groups, rules, sitemaps) = match &decision.access {
        Access::Rules(r) => (
            Some(r.groups().len()),
            Some(r.rules().iter().filter(|r| !r.is_derived()).count()),
            r.sitemaps().iter().map(|s| s.url.clone()).collect(),
        ),
        _ => (None, None, Vec::new()),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let json = Json {
            origin: origin.to_string(),
            access: decision.access.kind(),
            reason: &decision.reason,
            expires_at: decision.expires_at.to_string(),
            groups,
            rules,
            sitemaps,
            history: state
                .history
                .iter()
                .map(|h| JsonHistory {
                    at: h.at.to_string(),
                    outcome: &h.outcome,
                    decision: &h.decision,
                })
                .collect(),
        };
        // One JSON document per line, like every other --json.
        serde_json::to_writer(&mut out, &json)?;
        writeln!(out)?;
    } else {
        writeln!(out, "origin:   {origin}")?;
        let state_line = match (groups, rules) {
            (Some(g), Some(r)) => format!("rules ({g} group(s), {r} rule(s))"),
            _ => decision.access.kind().to_string(),
        };
        writeln!(out, "state:    {state_line}")?;
        writeln!(out, "reason:   {}", clean(&decision.reason))?;
        writeln!(out, "expires:  {}", decision.expires_at)?;
        for s in &sitemaps {
            writeln!(out, "sitemap:  {}", clean(s))?;
        }
        writeln!(out, "history:")?;
        for h in &state.history {
            writeln!(out, "  {}  {}", h.at, clean(&h.outcome))?;
        }
    }
    Ok(0)
}
