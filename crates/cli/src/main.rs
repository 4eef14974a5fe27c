//! `mannerly`: polite-crawling tools on the command line.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod audit;
mod botauth;
mod card;
mod check;
mod counts;
mod crawl;
mod demo;
mod demo_audit;
mod demo_evidence;
mod directory;
mod evidence;
mod fetch;
mod gate;
mod identity_args;
mod input;
mod lint;
mod metrics;
mod operator;
mod recrawl;
mod serve;
mod signals;
mod sitemap;
mod testweb;
mod text;

/// Polite, accountable web crawling: crawl with WARC out, check and lint
/// robots.txt, audit who crawled a site from its logs, and sign and verify
/// Web Bot Auth.
#[derive(Parser)]
#[command(name = "mannerly", version, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check URLs against a robots.txt file, as Google's reference library would.
    ///
    /// Prints one line per URL: `allowed` or `disallowed`, the URL, and the
    /// rule that decided (with its line number). Exit status: 0 when every
    /// URL is allowed, 1 when any is disallowed, 2 on usage or input errors.
    #[command(after_help = "Examples:\n  \
        mannerly check robots.txt --agent Googlebot https://example.com/private/x\n  \
        cat urls.txt | mannerly check robots.txt --agent MyBot --json\n  \
        curl -s https://example.com/robots.txt | mannerly check - --agent MyBot /a /b")]
    Check(check::Args),
    /// Explain the mistakes in a robots.txt file.
    ///
    /// Prints `file:line:col: severity[code]: message` for each finding
    /// (line 0 means the whole file), with a suggested fix where there is one.
    /// Exit status: 0 when there are no errors (warnings allowed), 1 when
    /// there are errors, 2 on usage or input errors.
    Lint(lint::Args),
    /// Fetch an origin's robots.txt and show its state, the reason, the
    /// expiry and the fetch history.
    ///
    /// Follows the same rules a crawler built on mannerly does: up to 5
    /// redirects, 500 KiB, 4xx = allow-all, 429/5xx/network errors = complete
    /// disallow (then Google's 12-hour and 30-day phases).
    Fetch(fetch::Args),
    /// List the pages of a sitemap file or URL, following indexes; or, with
    /// --discover, of every sitemap a site's robots.txt names.
    ///
    /// One line per page: loc, lastmod, changefreq, priority and the sitemap
    /// it came from (`--json` for JSON lines). A summary per sitemap goes to
    /// stderr: what was dropped or cut, and why. Exit status: 0 when
    /// everything was read, 1 when anything was dropped, cut, refused or
    /// failed, 2 on usage or input errors.
    Sitemap(sitemap::Args),
    /// Crawl politely from seed URLs, writing WARC files and a log.
    ///
    /// Every request waits its host's turn: robots.txt first on every
    /// origin (an unavailable one holds the origin's pages), one request in
    /// flight per host, --min-delay start to start (Crawl-delay and
    /// backoff only raise it), Retry-After honoured, nofollow obeyed. There
    /// is no switch to ignore robots.txt. Exit status: 0 when the crawl
    /// ended, 130 after Ctrl-C (143 after SIGTERM, which stops it as
    /// gracefully), 2 on usage or input errors.
    #[command(after_help = "Examples:\n  \
        mannerly crawl https://example.com/ --out crawl/ --max-pages 100\n  \
        mannerly crawl --seeds seeds.txt --out crawl/ --user-agent 'MyBot/1.0 (+https://example.com/bot)'\n  \
        mannerly crawl --resume crawl/")]
    Crawl(Box<crawl::Args>),
    /// Revisit an earlier crawl, fetching only what changed: every page it
    /// fetched is asked for with its validators (If-None-Match,
    /// If-Modified-Since); a 304 or an unchanged payload is archived as a
    /// WARC revisit record naming the earlier record. OLD stays as it is;
    /// NEW is a crawl of its own (`--resume NEW` goes on with it). Every
    /// crawl option applies.
    #[command(after_help = "Examples:\n  \
        mannerly recrawl crawl/ --out crawl-2/\n  \
        mannerly recrawl crawl-2/ --out crawl-3/ --json\n  \
        mannerly recrawl w1/ w2/ --out w1-2/ --frontier redis://127.0.0.1/")]
    Recrawl(Box<recrawl::RecrawlArgs>),
    /// Crawl a simulated web of a few hundred hosts on 127.0.0.1 (no
    /// network needed) and audit the crawl from the server's own log.
    Demo(demo::DemoArgs),
    /// Serve the robots.txt tester page and the robots decision API (JSON,
    /// described at /api/openapi.json), until Ctrl-C.
    #[command(after_help = "Examples:\n  \
        mannerly serve\n  \
        mannerly serve --listen 0.0.0.0:8080 --rate-limit 20")]
    Serve(serve::Args),
    /// Decide at the server's door: a forward-auth endpoint for nginx
    /// (auth_request), Caddy (forward_auth) and Traefik (ForwardAuth) that
    /// allows, slows down or refuses each request by who it really is.
    ///
    /// Identity by the audit's own checks: a Web Bot Auth signature, the
    /// operator's IP ranges, forward-confirmed reverse DNS (in the
    /// background). Classes: verified, spoofer, bot, browser. Answers:
    /// 200 allow, 403 deny, 429 slow with Retry-After (403 with
    /// X-Mannerly-Action: slow under --nginx), each with
    /// X-Mannerly-Identity and X-Mannerly-Action for the server's log.
    #[command(after_help = "Examples:\n  \
        mannerly gate --check policy.toml\n  \
        mannerly gate --listen 127.0.0.1:9181 --policy policy.toml --nginx")]
    Gate(gate::Args),
    /// Run the simulated multi-host web from a TOML file, until Ctrl-C.
    Testweb(testweb::Args),
    /// Web Bot Auth keys: generate one, or print a signed key directory.
    #[command(subcommand)]
    Keys(botauth::KeysCommand),
    /// Print the Web Bot Auth headers (Signature-Agent, Signature-Input,
    /// Signature) to add to a request.
    Sign(botauth::SignArgs),
    /// Verify a raw HTTP request's Web Bot Auth signatures (keys fetched
    /// from the JWK Set each Signature-Agent member names, or --key). Exit
    /// status: 0 verified, 1 invalid, unverified or unsigned, 2 on errors.
    Verify(botauth::VerifyArgs),
    /// Check an IP by forward-confirmed reverse DNS (and published ranges).
    VerifyIp(botauth::VerifyIpArgs),
    /// Signature Agent Cards: write one for a crawler, or check one.
    #[command(subcommand)]
    Card(card::CardCommand),
    /// A crawler's published identity (Crawler Best Practices): write
    /// yours (JAFAR ranges, the crawler's page, the User-Agent), or check
    /// anyone's.
    #[command(subcommand)]
    Operator(operator::OperatorCommand),
    /// Web Bot Auth key directories: check one as verifiers will fetch it.
    #[command(subcommand)]
    Directory(directory::DirectoryCommand),
    /// A crawl's evidence of its own conduct: export one host's as a
    /// bundle, or verify a bundle.
    #[command(subcommand)]
    Evidence(evidence::EvidenceCommand),
    /// Audit access logs: which bots broke robots.txt (as it was at each
    /// request's time), ignored Crawl-delay or Retry-After, never read
    /// robots.txt, or were not who they claimed.
    ///
    /// Reads nginx/Apache, W3C (IIS, CloudFront), AWS ALB/ELB/S3, HAProxy,
    /// Caddy, Traefik, Cloudflare and nginx JSON logs, finding each file's
    /// format by itself. Exit status: 0 when no bot broke a rule, 1 when
    /// one did, 2 on errors.
    #[command(after_help = "Examples:\n  \
        mannerly audit /var/log/nginx/access.log* --robots /var/www/robots.txt\n  \
        mannerly audit access.log.gz --robots-history robots-versions/ --json\n  \
        mannerly audit cf-*.jsonl --robots robots.txt --offline --html report.html")]
    Audit(Box<audit::Args>),
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Fetch(args) => fetch::run(args),
        Command::Sitemap(args) => sitemap::run(args),
        Command::Testweb(args) => testweb::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Crawl(args) => match matches.subcommand_matches("crawl") {
            Some(m) => crawl::run(*args, m),
            None => Err(anyhow::anyhow!("no crawl arguments")),
        },
        Command::Recrawl(args) => recrawl::run(*args),
        Command::Demo(args) => demo::demo(args),
        Command::Keys(cmd) => botauth::keys(cmd),
        Command::Sign(args) => botauth::sign(args),
        Command::Verify(args) => botauth::verify(args),
        Command::VerifyIp(args) => botauth::verify_ip_cmd(args),
        Command::Card(cmd) => card::card(cmd),
        Command::Directory(cmd) => directory::directory(cmd),
        Command::Operator(cmd) => operator::operator(cmd),
        Command::Audit(args) => audit::run(*args),
        Command::Evidence(cmd) => evidence::evidence(cmd),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "mannerly: {}", said(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes, each said once: a message that already
/// holds its cause's words (`{path}: {source}`) is not followed by them
/// again.
fn said(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

/// jemalloc, not the system's allocator: a long crawl frees and allocates
/// across many thousand hosts, and glibc's malloc kept the freed memory
/// resident. At 100,000 demo hosts the crawler peaked at 152.9 MiB
/// against 171.2, and at 10,000 it used some 15 % less CPU; at 300 hosts
/// the CPU is the same and the peak 1.5 MiB higher (BENCHMARKS.md,
/// "Memory per host").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every flag and argument of every subcommand says what it is for in
    /// `--help`: a bare `--json` or `<IP>` leaves the reader guessing.
    #[test]
    fn every_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, bare: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") || arg.is_hide_set() {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    bare.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), bare);
            }
        }
        let mut bare = Vec::new();
        walk(&super::Cli::command(), "mannerly", &mut bare);
        assert!(bare.is_empty(), "arguments without help: {bare:#?}");
    }
}
