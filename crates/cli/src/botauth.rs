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
    sign_request, AgentForm, Jwk, KeyPair, Message, Outcome, SignConfig, StaticKeys, VerifyConfig,
};

fn now() -> UnixMillis {
    UnixMillis::now()
}

/// Reads a private key: PKCS#8 PEM or a JWK with `d`.
fn load_key(path: &str) -> Result<KeyPair> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read key file '{path}'"))?;
    let key = if text.trim_start().starts_with('{') {
        let jwk: Jwk =
            serde_json::from_str(&text).with_context(|| format!("'{path}' is not a JWK"))?;
        KeyPair::from_jwk(&jwk)
    } else {
        KeyPair::from_pkcs8_pem(&text)
    };
    key.with_context(|| format!("'{path}' holds no usable Ed25519 private key"))
}

#[derive(clap::Subcommand)]
pub enum KeysCommand {
    /// Make a new Ed25519 key: private.pem (readable by its owner only),
    /// public.jwk.json, and the keyid.
    Generate {
        #[arg(long, value_name = "DIR")]
        out: String,
    },
    /// Print the signed key directory response for
    /// /.well-known/http-message-signatures-directory.
    Directory {
        /// Private keys to publish (give several while rotating).
        #[arg(long = "key", value_name = "FILE", required = true)]
        keys: Vec<String>,
        /// The origin the directory is served from.
        #[arg(long, value_name = "URL")]
        origin: String,
        /// Seconds the signatures are valid (at most 86400).
        #[arg(long, default_value_t = 3600)]
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
    /// The origin serving the crawler's key directory.
    #[arg(long, value_name = "URL")]
    agent_origin: String,
    /// Use the legacy bare-string Signature-Agent form.
    #[arg(long)]
    legacy: bool,
    /// Also cover these components (@method, @path, @target-uri, ...).
    #[arg(long = "component", value_name = "NAME")]
    components: Vec<String>,
    #[arg(long, default_value = "GET")]
    method: String,
    /// Seconds until expiry (at most 86400).
    #[arg(long, default_value_t = 60)]
    validity: i64,
    /// The request URL.
    url: String,
}

pub fn sign(args: SignArgs) -> Result<u8> {
    let pair = load_key(&args.key)?;
    let agent = if args.legacy {
        AgentForm::Legacy {
            url: args.agent_origin.clone(),
        }
    } else {
        AgentForm::dictionary(&args.agent_origin)
    };
    let mut config = SignConfig::new(now(), agent);
    config.extra_components = args.components;
    config.validity = args.validity;
    for (k, v) in sign_request(&pair, &Message::new(&args.method, &args.url), &config)? {
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
    #[arg(long, default_value = "https")]
    scheme: String,
    /// Accept the RFC 9421 test keys (for experiments).
    #[arg(long)]
    allow_test_keys: bool,
    #[arg(long)]
    json: bool,
}

pub fn verify(args: VerifyArgs) -> Result<u8> {
    // A request is read up to 1 MiB (and one byte to know it went on):
    // never the whole of an endless input.
    const MAX_REQUEST: u64 = 1 << 20;
    let mut bytes = Vec::new();
    if args.request == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_REQUEST + 1)
            .read_to_end(&mut bytes)
            .context("cannot read the request from stdin")?;
    } else {
        std::fs::File::open(&args.request)
            .and_then(|f| f.take(MAX_REQUEST + 1).read_to_end(&mut bytes))
            .with_context(|| format!("cannot read '{}'", args.request))?;
    }
    if bytes.len() as u64 > MAX_REQUEST {
        bail!(
            "'{}' is longer than {MAX_REQUEST} bytes: not a request to verify",
            args.request
        );
    }
    let text = String::from_utf8(bytes)
        .with_context(|| format!("'{}' is not UTF-8 text", args.request))?;
    let msg = Message::parse_http(&text, &args.scheme)
        .with_context(|| format!("'{}' is not an HTTP request", args.request))?;
    let mut config = VerifyConfig::at(now());
    config.reject_test_keys = !args.allow_test_keys;
    let outcome = match &args.key {
        Some(path) => {
            let jwk: Jwk = serde_json::from_str(
                &std::fs::read_to_string(path).with_context(|| format!("cannot read '{path}'"))?,
            )
            .with_context(|| format!("'{path}' is not a JWK"))?;
            mannerly_botauth::verify_request(&msg, &StaticKeys::labelled(vec![jwk]), &config)
        }
        None => {
            let client = DirectoryClient::new(DirectoryConfig::default())?;
            let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
            match rt.block_on(client.verify_request(&msg, &config)) {
                Ok(outcome) => outcome,
                // The directory could not be used: reported as invalid,
                // with the directory's problem as the reason.
                Err(e) => {
                    return report(args.json, ("invalid", e.to_string(), 1));
                }
            }
        }
    };
    let (word, detail, code) = match &outcome {
        Outcome::Verified {
            agent,
            thumbprint,
            label,
            ..
        } => (
            "verified",
            // The thumbprint of the key that verified, not the keyid the
            // signature claims.
            format!(
                "key {thumbprint}, label {label}, agent {}",
                agent.as_deref().unwrap_or("-")
            ),
            0,
        ),
        Outcome::Invalid { reason } => ("invalid", reason.to_string(), 1),
        Outcome::Unsigned => (
            "unsigned",
            "no Signature-Input or Signature header".into(),
            1,
        ),
    };
    report(args.json, (word, detail, code))
}

/// Prints a verification's outcome word and detail; its exit code.
fn report(json: bool, (word, detail, code): (&str, String, u8)) -> Result<u8> {
    if json {
        println!(
            "{}",
            serde_json::json!({ "outcome": word, "detail": detail })
        );
    } else {
        println!("{word}: {}", crate::text::clean(&detail));
    }
    Ok(code)
}

#[derive(clap::Args)]
pub struct VerifyIpArgs {
    ip: String,
    /// Allowed domains (e.g. googlebot.com); the PTR name must be under one.
    #[arg(long = "domain", value_name = "DOMAIN", required = true)]
    domains: Vec<String>,
    /// Also accept IPs in this published ranges file (Google's JSON format).
    #[arg(long, value_name = "FILE")]
    ranges: Option<String>,
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
        let ranges = IpRanges::parse(&text).map_err(|e| anyhow::anyhow!("'{path}': {e}"))?;
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
