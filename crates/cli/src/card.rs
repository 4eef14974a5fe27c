//! `mannerly card new` and `card check`: Signature Agent Cards, and the
//! cross-check `mannerly verify --card` makes; `Reach`, how the checks
//! reach a server.

use std::net::IpAddr;

use anyhow::{bail, Context, Result};
use mannerly_botauth::card::{check_card, Card, Fetched, WebBotAuth};
use mannerly_botauth::client::{fetch_document, DirectoryClient, DirectoryConfig, Document};
use mannerly_botauth::directory::{Jwks, DIRECTORY_MEDIA_TYPE};
use mannerly_botauth::{Jwk, Message, UnixMillis};

/// How to reach a server: extra trust, names pinned to addresses.
#[derive(clap::Args, Clone)]
pub(crate) struct Reach {
    /// Also trust this CA certificate (PEM or DER), e.g. a staging CA.
    #[arg(long, value_name = "FILE")]
    ca: Option<String>,
    /// Connect to HOST at IP instead of resolving it (like curl's).
    #[arg(long, value_name = "HOST:IP")]
    resolve: Vec<String>,
}

impl Reach {
    /// A client that follows no redirect, over https only.
    fn client(&self) -> Result<reqwest::Client> {
        let config = DirectoryConfig {
            allow_private: true,
            ..DirectoryConfig::default()
        };
        let mut b = DirectoryClient::client_builder(&config);
        if let Some(path) = &self.ca {
            let bytes =
                std::fs::read(path).with_context(|| format!("--ca: cannot read '{path}'"))?;
            let cert = match bytes.starts_with(b"-----BEGIN") {
                true => reqwest::Certificate::from_pem(&bytes),
                false => reqwest::Certificate::from_der(&bytes),
            }
            .with_context(|| format!("--ca '{path}' is not a PEM or DER certificate"))?;
            // reqwest reads the certificate only when the client is built:
            // a file that is not one is said to be the --ca's fault.
            reqwest::Client::builder()
                .add_root_certificate(cert.clone())
                .build()
                .with_context(|| format!("--ca '{path}' is not a PEM or DER certificate"))?;
            b = b.add_root_certificate(cert);
        }
        for pin in &self.resolve {
            // A host has no ':', an IPv6 address may (`host:[::1]`).
            let (host, ip) = pin
                .split_once(':')
                .filter(|(h, _)| !h.is_empty())
                .with_context(|| format!("--resolve {pin:?}: give HOST:IP"))?;
            let ip: IpAddr = ip
                .trim_matches(|c| c == '[' || c == ']')
                .parse()
                .with_context(|| format!("--resolve {pin:?}: {ip:?} is not an IP address"))?;
            b = b.resolve(host, (ip, 0).into());
        }
        b.build().context("cannot build the HTTP client")
    }

    /// GETs `url` (no redirect followed).
    pub(crate) fn fetch(&self, url: &str, accept: &str) -> Result<Document> {
        let client = self.client()?;
        let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
        rt.block_on(fetch_document(&client, url, accept, 256 * 1024))
            .with_context(|| format!("cannot fetch {url}"))
    }
}

#[derive(clap::Subcommand)]
pub enum CardCommand {
    /// Write a Signature Agent Card for a crawler (JSON, to stdout or
    /// --out).
    New(Box<NewArgs>),
    /// Check a card as a client must. Exit status: 0 valid, 1 invalid, 2
    /// on errors (it could not be read or fetched).
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub struct NewArgs {
    /// The URL the card will be served at (its client_id).
    #[arg(long, value_name = "URL")]
    client_id: String,
    /// A name for people.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// A page describing the bot.
    #[arg(long, value_name = "URL")]
    about: Option<String>,
    /// How to reach the operator (mailto:...); repeat for more.
    #[arg(long = "contact", value_name = "URI")]
    contacts: Vec<String>,
    /// The JWK Set's URL (the crawler's key directory).
    #[arg(long, value_name = "URL", conflicts_with = "keys")]
    jwks_uri: Option<String>,
    /// Public keys to carry inline (JWK files, or private keys whose public
    /// half is taken); repeat for more.
    #[arg(long = "key", value_name = "FILE")]
    keys: Vec<String>,
    /// The robots.txt product token the crawler obeys.
    #[arg(long, value_name = "TOKEN")]
    product_token: Option<String>,
    /// The User-Agent it sends (or a prefix, `*` a wildcard); repeat.
    #[arg(long = "user-agent", value_name = "UA")]
    user_agents: Vec<String>,
    /// The crawler claims to follow robots.txt.
    #[arg(long)]
    robots_compliant: bool,
    /// `crawler` (autonomous) or `fetcher` (a user's request).
    #[arg(long, value_parser = ["crawler", "fetcher"])]
    trigger: Option<String>,
    /// What the data is for (e.g. search, ai-use).
    #[arg(long)]
    purpose: Option<String>,
    /// How origins can slow it (e.g. "Crawl-delay, 429 with Retry-After").
    #[arg(long, value_name = "TEXT")]
    rate_control: Option<String>,
    /// Its IP address list (https).
    #[arg(long, value_name = "URL")]
    ips_uri: Option<String>,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<String>,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The card: a file, or an https URL to fetch as a client does.
    source: String,
    /// The URL a card file is served at (client_id must equal it).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Check signatures as of this unix second (default now).
    #[arg(long, value_name = "SECS")]
    at: Option<u64>,
    #[command(flatten)]
    reach: Reach,
    /// Print one JSON document: every problem, and what held.
    #[arg(long)]
    json: bool,
}

pub fn card(cmd: CardCommand) -> Result<u8> {
    match cmd {
        CardCommand::New(args) => new(*args),
        CardCommand::Check(args) => check(args),
    }
}

/// A public JWK from a file holding a JWK or a private key.
fn public_key(path: &str) -> Result<Jwk> {
    Ok(mannerly_botauth::KeyFile::read(std::path::Path::new(path))?.public_jwk())
}

fn new(a: NewArgs) -> Result<u8> {
    let keys = a
        .keys
        .iter()
        .map(|k| public_key(k))
        .collect::<Result<Vec<_>>>()?;
    let card = Card {
        client_id: Some(a.client_id),
        client_name: a.name,
        client_uri: a.about,
        contacts: a.contacts,
        jwks_uri: a.jwks_uri,
        jwks: (!keys.is_empty()).then_some(Jwks { keys }),
        web_bot_auth: Some(WebBotAuth {
            expected_user_agent: a.user_agents,
            product_token: a.product_token,
            rfc9309_compliance: a.robots_compliant,
            trigger: a.trigger,
            purpose: a.purpose,
            rate_control: a.rate_control,
            ips_uri: a.ips_uri,
            ..WebBotAuth::default()
        }),
        ..Card::default()
    };
    let json = serde_json::to_string_pretty(&card)?;
    // What `card check` would refuse is refused here, before it is served.
    let report = check_card(
        json.as_bytes(),
        &Fetched {
            url: card.client_id.as_deref(),
            response: None,
            jwks_uri_keys: None,
            now: UnixMillis::now(),
        },
    );
    if !report.problems.is_empty() {
        bail!(
            "the card would be invalid:\n  {}",
            report.problems.join("\n  ")
        );
    }
    match &a.out {
        Some(path) => std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("cannot write '{path}'"))?,
        None => println!("{json}"),
    }
    Ok(0)
}

/// A card's bytes, its response when fetched, and the URL it came from.
fn load(
    source: &str,
    url: Option<&str>,
    reach: &Reach,
) -> Result<(Vec<u8>, Option<Document>, Option<String>)> {
    if source.starts_with("https://") || source.starts_with("http://") {
        if !source.starts_with("https://") {
            bail!("{source}: a card is fetched over https only (its client_id is an https URL)");
        }
        let doc = reach.fetch(source, "application/json")?;
        return Ok((doc.body.clone(), Some(doc), Some(source.to_owned())));
    }
    let bytes = std::fs::read(source).with_context(|| format!("cannot read '{source}'"))?;
    Ok((bytes, None, url.map(str::to_owned)))
}

fn check(a: CheckArgs) -> Result<u8> {
    let (body, doc, url) = load(&a.source, a.url.as_deref(), &a.reach)?;
    let now = a.at.map_or_else(UnixMillis::now, UnixMillis::from_secs);
    // Signed by keys at jwks_uri: fetch them to check the signature.
    let jwks_uri_keys = match serde_json::from_slice::<Card>(&body)
        .ok()
        .and_then(|c| c.jwks_uri)
    {
        Some(u) if doc.as_ref().is_some_and(signed) && u.starts_with("https://") => {
            let d = a.reach.fetch(&u, DIRECTORY_MEDIA_TYPE)?;
            serde_json::from_slice::<Jwks>(&d.body).ok().map(|j| j.keys)
        }
        _ => None,
    };
    let report = check_card(
        &body,
        &Fetched {
            url: url.as_deref(),
            response: doc.as_ref().map(|d| &d.response),
            jwks_uri_keys,
            now,
        },
    );
    let code = u8::from(!report.problems.is_empty());
    if a.json {
        let out = serde_json::json!({
            "valid": report.problems.is_empty(),
            "problems": report.problems,
            "notes": report.notes,
            "card": report.card,
        });
        println!("{out}");
        return Ok(code);
    }
    match report.problems.is_empty() {
        true => println!("valid: {}", a.source),
        false => println!("invalid: {}", a.source),
    }
    for p in &report.problems {
        println!("  problem: {}", crate::text::clean(p));
    }
    for n in &report.notes {
        println!("  ok: {}", crate::text::clean(n));
    }
    Ok(code)
}

fn signed(d: &Document) -> bool {
    d.response
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("signature-input"))
}

/// `mannerly verify --card`: the request held against the card (and the
/// site's robots.txt, when given): each check and whether it held.
pub fn cross_check(
    source: &str,
    robots: Option<&str>,
    msg: &Message,
) -> Result<Vec<(bool, String)>> {
    let (body, _, _) = load(
        source,
        None,
        &Reach {
            ca: None,
            resolve: Vec::new(),
        },
    )?;
    let card: Card = serde_json::from_slice(&body)
        .with_context(|| format!("'{source}' is not a Signature Agent Card"))?;
    let robots = robots
        .map(|path| std::fs::read(path).with_context(|| format!("cannot read '{path}'")))
        .transpose()?;
    Ok(
        mannerly_botauth::card_check::cross_check(&card, robots.as_deref(), msg)
            .iter()
            .map(|c| (c.holds(), c.to_string()))
            .collect(),
    )
}
