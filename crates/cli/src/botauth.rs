//! `mannerly keys`, `sign`, `verify`, `verify-ip`.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::Path;

use anyhow::{bail, Context, Result};
use mannerly_botauth::client::{DirectoryClient, DirectoryConfig};
use mannerly_botauth::directory::signed_directory;
use mannerly_botauth::fcrdns::{verify_ip, HickoryDns, IpRanges, IpVerdict};
use mannerly_botauth::UnixMillis;
use mannerly_botauth::{
    sign_request, summarise, verify_each, AgentForm, KeyPair, Message, Outcome, SignConfig,
    StaticKeys, Verdict, VerifyConfig,
};

fn now() -> UnixMillis {
    UnixMillis::now()
}

/// Reads a private key: PKCS#8 PEM or a JWK with `d`.
fn load_key(path: &str) -> Result<KeyPair> {
    let path = std::path::Path::new(path);
    Ok(mannerly_botauth::KeyFile::read(path)?.into_private(path)?)
}

/// `--origin`: an http(s) origin, a trailing `/` allowed, nothing more.
fn origin_value(s: &str) -> Result<String, String> {
    let u = request_url(s)?;
    if u.path() != "/" || u.query().is_some() || u.fragment().is_some() {
        let origin = u.origin().ascii_serialization();
        return Err(format!("'{s}' is not an origin: give {origin}"));
    }
    Ok(s.to_owned())
}

/// `--signature-agent`: the https URL verifiers fetch the keys from.
fn directory_url(s: &str) -> Result<String, String> {
    match url::Url::parse(s) {
        Ok(u) if u.scheme() == "https" && u.host().is_some() => Ok(s.to_owned()),
        Ok(_) => Err(format!(
            "'{s}' is not an https URL: key directories are served over https"
        )),
        Err(e) => Err(format!(
            "'{s}' is not a URL ({e}): give the https URL of the key directory"
        )),
    }
}

/// An absolute http(s) URL.
fn request_url(s: &str) -> Result<url::Url, String> {
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(u),
        Ok(_) => Err(format!("'{s}' is not an http(s) URL")),
        Err(e) => Err(format!(
            "'{s}' is not an absolute URL ({e}), like https://example.com/"
        )),
    }
}

/// `--method`: an HTTP method token (`GET`, `POST`, ...).
fn method_value(s: &str) -> Result<String, String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if s.is_empty() || !s.chars().all(token) {
        return Err(format!(
            "'{s}' is not an HTTP method (a token such as GET or POST)"
        ));
    }
    Ok(s.to_owned())
}

#[derive(clap::Subcommand)]
pub enum KeysCommand {
    /// Make a new Ed25519 key: private.pem (readable by its owner only),
    /// public.jwk.json, and the keyid.
    Generate {
        /// The directory to write the key files into (made if missing; an
        /// existing key there is never overwritten).
        #[arg(long, value_name = "DIR")]
        out: String,
    },
    /// Print the signed key directory response for
    /// /.well-known/http-message-signatures-directory.
    Directory {
        /// Private keys to publish (give several while rotating).
        #[arg(long = "key", value_name = "FILE", required = true)]
        keys: Vec<String>,
        /// The origin the directory is served from (`https://example.com`).
        #[arg(long, value_name = "URL", value_parser = origin_value)]
        origin: String,
        /// Seconds the signatures are valid, 1 to 86400 (verifiers cache
        /// the directory at most that long).
        #[arg(long, value_name = "SECS", default_value_t = 86_400, value_parser = clap::value_parser!(i64).range(1..=86_400))]
        validity: i64,
    },
}

pub fn keys(cmd: KeysCommand) -> Result<u8> {
    match cmd {
        KeysCommand::Generate { out } => {
            let dir = Path::new(&out);
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create '{out}'"))?;
            let private = dir.join("private.pem");
            if private.exists() {
                bail!(
                    "'{}' exists; refusing to overwrite a key",
                    private.display()
                );
            }
            let pair = KeyPair::generate();
            let pem = pair.to_pkcs8_pem()?;
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            opts.open(&private)
                .and_then(|mut f| f.write_all(pem.as_bytes()))
                .with_context(|| format!("cannot write '{}'", private.display()))?;
            let public = dir.join("public.jwk.json");
            std::fs::write(&public, serde_json::to_string_pretty(&pair.public_jwk())?)
                .with_context(|| format!("cannot write '{}'", public.display()))?;
            println!("keyid {}", pair.keyid());
            println!("private key {} (mode 600)", private.display());
            println!("public key {}", public.display());
            Ok(0)
        }
        KeysCommand::Directory {
            keys,
            origin,
            validity,
        } => {
            let pairs = keys
                .iter()
                .map(|k| load_key(k))
                .collect::<Result<Vec<_>>>()?;
            for (i, pair) in pairs.iter().enumerate() {
                if let Some(j) = pairs[..i].iter().position(|p| p.keyid() == pair.keyid()) {
                    bail!(
                        "--key '{}' and --key '{}' are the same key ({}): a directory lists each key once",
                        keys[j],
                        keys[i],
                        pair.keyid()
                    );
                }
            }
            let (resp, body) = signed_directory(&pairs, &origin, now(), validity)?;
            println!("HTTP/1.1 {} OK", resp.status);
            for (k, v) in &resp.headers {
                println!("{k}: {v}");
            }
            println!();
            println!("{body}");
            Ok(0)
        }
    }
}

#[derive(clap::Args)]
pub struct SignArgs {
    /// The private key (PKCS#8 PEM or JWK).
    #[arg(long, value_name = "FILE")]
    key: String,
    /// The https URL of the crawler's JWK Set (its key directory), which
    /// verifiers fetch as it is.
    #[arg(long, value_name = "URL", alias = "agent-origin", value_parser = directory_url)]
    signature_agent: String,
    /// Use the legacy bare-string Signature-Agent form (draft -00), for
    /// verifiers that know nothing newer.
    #[arg(long)]
    legacy: bool,
    /// Also cover these components (@method, @path, @target-uri, ...).
    #[arg(long = "component", value_name = "NAME")]
    components: Vec<String>,
    /// The request's method.
    #[arg(long, default_value = "GET", value_parser = method_value)]
    method: String,
    /// Seconds until expiry, 1 to 86400.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(i64).range(1..=86_400))]
    validity: i64,
    /// The request URL.
    #[arg(value_parser = request_url)]
    url: url::Url,
}

pub fn sign(args: SignArgs) -> Result<u8> {
    let pair = load_key(&args.key)?;
    let agent = if args.legacy {
        AgentForm::Legacy {
            url: args.signature_agent.clone(),
        }
    } else {
        AgentForm::dictionary(&args.signature_agent)
    };
    let mut config = SignConfig::new(now(), agent);
    config.extra_components = args.components;
    config.validity = args.validity;
    for (k, v) in sign_request(
        &pair,
        &Message::new(&args.method, args.url.as_str()),
        &config,
    )? {
        println!("{k}: {v}");
    }
    Ok(0)
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// A raw HTTP request (request line and headers), or `-` for stdin.
    #[arg(default_value = "-")]
    request: String,
    /// Check against this public JWK instead of fetching the directory.
    #[arg(long, value_name = "FILE")]
    key: Option<String>,
    /// Scheme for building the target URI from the request line and Host.
    #[arg(long, default_value = "https", value_parser = ["http", "https"])]
    scheme: String,
    /// Verify as of this instant (unix seconds or RFC 3339), to replay a
    /// logged request; default now.
    #[arg(long, value_name = "TIME")]
    at: Option<String>,
    /// Longest `expires - created` accepted, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 86_400)]
    max_validity: i64,
    /// Accept signatures on plain http requests (refused by default, §6.1).
    #[arg(long)]
    allow_http: bool,
    /// Accept the RFC 9421 test keys (for experiments).
    #[arg(long)]
    allow_test_keys: bool,
    /// Cross-check the request against its bot's Signature Agent Card
    /// (a file or an https URL): the User-Agent, and with --robots, the
    /// robots.txt group its product token obeys.
    #[arg(long, value_name = "FILE|URL")]
    card: Option<String>,
    /// The robots.txt the request was made under (with --card).
    #[arg(long, value_name = "FILE", requires = "card")]
    robots: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Reads a request to verify, up to 1 MiB (and one byte to know it went
/// on): never the whole of an endless input.
fn read_request(path: &str) -> Result<String> {
    const MAX_REQUEST: u64 = 1 << 20;
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_REQUEST + 1)
            .read_to_end(&mut bytes)
            .context("cannot read the request from stdin")?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_REQUEST + 1).read_to_end(&mut bytes))
            .with_context(|| format!("cannot read '{path}'"))?;
    }
    if bytes.len() as u64 > MAX_REQUEST {
        bail!("'{path}' is longer than {MAX_REQUEST} bytes: not a request to verify");
    }
    String::from_utf8(bytes).with_context(|| format!("'{path}' is not UTF-8 text"))
}

/// `--at`: unix seconds or RFC 3339.
fn parse_at(text: &str) -> Result<UnixMillis> {
    if let Ok(secs) = text.trim().parse::<u64>() {
        return Ok(UnixMillis::from_secs(secs));
    }
    let stamp = mannerly_logs::parse_rfc3339(text.trim()).with_context(|| {
        format!("--at {text:?}: not unix seconds or an RFC 3339 time (2026-11-26T08:00:00Z)")
    })?;
    u64::try_from(stamp.millis)
        .map(UnixMillis)
        .with_context(|| format!("--at {text:?}: before 1970"))
}

pub fn verify(args: VerifyArgs) -> Result<u8> {
    let text = read_request(&args.request)?;
    let msg = Message::parse_http(&text, &args.scheme)
        .with_context(|| format!("'{}' is not an HTTP request", args.request))?;
    if args.max_validity < 1 {
        bail!(
            "--max-validity {}: give at least 1 second",
            args.max_validity
        );
    }
    let mut config = VerifyConfig::at(match &args.at {
        Some(t) => parse_at(t)?,
        None => now(),
    });
    config.reject_test_keys = !args.allow_test_keys;
    config.max_validity = args.max_validity;
    config.allow_http = args.allow_http;
    let verdicts = match &args.key {
        Some(path) => {
            let keys = mannerly_botauth::read_jwk_file(std::path::Path::new(path))?;
            verify_each(&msg, None, &StaticKeys::labelled(keys), &config)
        }
        None => {
            let client = DirectoryClient::new(DirectoryConfig::default())?;
            let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
            rt.block_on(client.verify_each(&msg, &config))
        }
    };
    let cross = match &args.card {
        Some(card) => crate::card::cross_check(card, args.robots.as_deref(), &msg)?,
        None => Vec::new(),
    };
    report(args.json, &verdicts, &cross)
}

/// One outcome's word, detail and exit code.
fn describe(outcome: &Outcome) -> (&'static str, String, u8) {
    match outcome {
        // The thumbprint of the key that verified, not the keyid the
        // signature claims; the agent only when the key came from it.
        Outcome::Verified {
            agent, thumbprint, ..
        } => (
            "verified",
            format!(
                "key {thumbprint}, attributed to {}",
                agent
                    .as_deref()
                    .unwrap_or("the key alone (not fetched from the agent's URL)")
            ),
            0,
        ),
        Outcome::Invalid { reason } => ("invalid", reason.to_string(), 1),
        Outcome::Unverified { reason } => ("unverified", reason.to_string(), 1),
        _ => (
            "unsigned",
            "no Signature-Input or Signature header".into(),
            1,
        ),
    }
}

/// Prints the request's outcome, each signature's, and the card's
/// cross-checks; the exit code (0 verified and consistent, else 1).
fn report(json: bool, verdicts: &[Verdict], cross: &[(bool, String)]) -> Result<u8> {
    let (word, detail, mut code) = describe(&summarise(verdicts.to_vec()));
    if cross.iter().any(|(ok, _)| !ok) {
        code = code.max(1);
    }
    if json {
        let each: Vec<_> = verdicts
            .iter()
            .map(|v| {
                let (w, d, _) = describe(&v.outcome);
                serde_json::json!({ "label": v.label, "outcome": w, "detail": d })
            })
            .collect();
        let card: Vec<_> = cross
            .iter()
            .map(|(ok, what)| serde_json::json!({ "ok": ok, "check": what }))
            .collect();
        let out = serde_json::json!({ "outcome": word, "detail": detail, "signatures": each, "card": card });
        println!("{out}");
        return Ok(code);
    }
    println!("{word}: {}", crate::text::clean(&detail));
    if verdicts.len() > 1 {
        for v in verdicts {
            let (w, d, _) = describe(&v.outcome);
            println!("  {}: {w}: {}", v.label, crate::text::clean(&d));
        }
    }
    for (ok, what) in cross {
        let mark = if *ok { "ok" } else { "MISMATCH" };
        println!("card {mark}: {}", crate::text::clean(what));
    }
    Ok(code)
}

#[derive(clap::Args)]
pub struct VerifyIpArgs {
    /// The client's IP address (IPv4 or IPv6), as the access log gives it.
    ip: String,
    /// Allowed domains (e.g. googlebot.com); the PTR name must be under one.
    #[arg(long = "domain", value_name = "DOMAIN", required = true)]
    domains: Vec<String>,
    /// Also accept IPs in this published ranges file: Google's JSON
    /// format (JAFAR), or ipverse's crawlers.json with --token.
    #[arg(long, value_name = "FILE")]
    ranges: Option<String>,
    /// The crawler whose ranges to read from --ranges: a JAFAR prefix's
    /// `services` must name it, or in ipverse's crawlers.json, a service's
    /// User-Agent patterns.
    #[arg(long, value_name = "NAME", requires = "ranges")]
    token: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn verify_ip_cmd(args: VerifyIpArgs) -> Result<u8> {
    let ip: IpAddr = args
        .ip
        .parse()
        .with_context(|| format!("'{}' is not an IP address", args.ip))?;
    if let Some(path) = &args.ranges {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read '{path}'"))?;
        let ranges = match &args.token {
            Some(token) => IpRanges::parse_for(&text, token),
            None if text.contains("\"services\"") && !text.contains("\"prefixes\"") => {
                anyhow::bail!("'{path}' lists ranges by service (ipverse's crawlers.json): give --token NAME, the crawler whose ranges to read")
            }
            None => IpRanges::parse(&text),
        }
        .map_err(|e| anyhow::anyhow!("'{path}': {e}"))?;
        if ranges.contains(ip) {
            if args.json {
                println!(
                    "{}",
                    serde_json::json!({"result": "verified", "range": path})
                );
            } else {
                println!("verified: {ip} is in a published range of {path}");
            }
            return Ok(0);
        }
    }
    let dns = HickoryDns::system().map_err(|e| anyhow::anyhow!(e))?;
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let verdict = rt.block_on(verify_ip(ip, &args.domains, &dns));
    if args.json {
        println!("{}", serde_json::to_string(&verdict)?);
    }
    match verdict {
        IpVerdict::Verified { name } => {
            if !args.json {
                println!("verified: {ip} is {name}, which resolves back to it");
            }
            Ok(0)
        }
        IpVerdict::NotVerified { reason } => {
            if !args.json {
                println!("not verified: {reason}");
            }
            Ok(1)
        }
    }
}
