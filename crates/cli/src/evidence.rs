//! `mannerly evidence export` and `evidence verify`: one host's evidence
//! out of a crawl (or a fleet's worker directories), and its check.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use mannerly_evidence::{export, verify, Bundle, Files, PublicKey, Window};

#[derive(clap::Subcommand)]
pub enum EvidenceCommand {
    /// Write one host's evidence as a bundle a site owner can verify and
    /// audit against their log: its records, the checkpoints covering them
    /// and the proofs tying them together; other hosts only as hashes.
    #[command(after_help = "Examples:\n  \
        mannerly evidence export crawl/ --host example.com --out example.com.json\n  \
        mannerly evidence export w1/ w2/ w3/ --host example.com --since 2026-11-01T00:00:00Z --out b.json")]
    Export(ExportArgs),
    /// Check a bundle: every record there, unedited and in order, reaching
    /// checkpoints signed by the crawler's key. Exit status: 0 intact, 1
    /// refused (what and where is said), 2 on errors.
    Verify(VerifyArgs),
}

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Crawl directories (or their `evidence/`): one crawl, or every
    /// worker of a fleet.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// The host (without a port) whose records to export.
    #[arg(long, value_name = "HOST", value_parser = host_value)]
    host: String,
    /// Where to write the bundle (JSON).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Only requests sent at or after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only requests sent at or before this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The bundle.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The crawler's public key (a JWK, or a JWK Set whose first Ed25519
    /// key is used), as published at its Signature-Agent: every checkpoint
    /// must be signed by it. Without it, the bundle's own key is used.
    #[arg(long, value_name = "JWK")]
    key: Option<PathBuf>,
    /// Accept a bundle whose checkpoints are not signed (exit 0 when its
    /// chains are whole). Without it, an unsigned bundle exits 1: nothing
    /// ties it to a crawler.
    #[arg(long)]
    allow_unsigned: bool,
}

pub fn evidence(cmd: EvidenceCommand) -> Result<u8> {
    match cmd {
        EvidenceCommand::Export(args) => export_cmd(args),
        EvidenceCommand::Verify(args) => verify_cmd(args),
    }
}

/// `--host`: a host name or IP, neither a URL nor with a port (records
/// are kept by host).
fn host_value(s: &str) -> Result<String, String> {
    if let Ok(u) = url::Url::parse(s) {
        if let Some(h) = u.host_str().filter(|_| s.contains("://")) {
            return Err(format!("'{s}' is a URL: give its host, {h}"));
        }
    }
    let port = s.rsplit_once(':').filter(|(h, p)| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && (!h.contains(':') || h.ends_with(']'))
    });
    if let Some((h, _)) = port {
        return Err(format!(
            "'{s}' has a port: give the host alone, {h} (records are kept by host)"
        ));
    }
    if s.trim().is_empty() {
        return Err("give a host, like example.com".into());
    }
    Ok(s.to_owned())
}

/// The evidence directory of a crawl directory, or the directory itself.
pub(crate) fn evidence_dir(dir: &Path) -> Result<PathBuf> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        bail!("'{}': {what}; give a crawl directory", dir.display());
    }
    let inner = dir.join("evidence");
    if inner.join(Files::WRITER).exists() {
        return Ok(inner);
    }
    if dir.join(Files::WRITER).exists() {
        return Ok(dir.to_path_buf());
    }
    bail!(
        "'{}' holds no evidence (no evidence/{} in it): was it crawled with --no-evidence?",
        dir.display(),
        Files::WRITER
    )
}

fn instant(flag: &str, text: &Option<String>) -> Result<Option<u64>> {
    let Some(t) = text else { return Ok(None) };
    let stamp = mannerly_logs::parse_rfc3339(t).with_context(|| {
        format!("{flag} {t:?}: give an RFC 3339 time, like 2026-11-01T00:00:00Z")
    })?;
    u64::try_from(stamp.millis)
        .map(Some)
        .with_context(|| format!("{flag} {t:?} is before 1970"))
}

fn export_cmd(args: ExportArgs) -> Result<u8> {
    let dirs = args
        .dirs
        .iter()
        .map(|d| evidence_dir(d))
        .collect::<Result<Vec<_>>>()?;
    let window = Window {
        since: instant("--since", &args.since)?,
        until: instant("--until", &args.until)?,
    };
    if let (Some(since), Some(until)) = (window.since, window.until) {
        if since > until {
            bail!("--since is after --until: the window holds no time");
        }
    }
    let bundle = export(&dirs, &args.host, window)?;
    let body = serde_json::to_vec_pretty(&bundle)?;
    std::fs::write(&args.out, body)
        .with_context(|| format!("cannot write '{}'", args.out.display()))?;
    let signed = bundle.writers.iter().all(|w| w.key.is_some());
    println!(
        "{} record(s) of {} from {} writer(s), {} checkpoint(s), {}: {}",
        bundle.records.len(),
        bundle.host,
        bundle.writers.len(),
        bundle.checkpoints.len(),
        if signed {
            "signed"
        } else {
            "UNSIGNED (crawled without --sign-key)"
        },
        args.out.display()
    );
    if let Err(why) = verify(&bundle, None) {
        eprintln!("mannerly: the bundle does not verify: {why}");
        return Ok(1);
    }
    Ok(0)
}

/// A public key from a JWK or a JWK Set file.
fn read_key(path: &Path) -> Result<PublicKey> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--key: cannot read '{}'", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--key '{}' is not JSON", path.display()))?;
    let jwk = match v.get("keys").and_then(|k| k.as_array()) {
        Some(keys) => keys
            .iter()
            .find(|k| k["crv"] == "Ed25519")
            .cloned()
            .with_context(|| {
                format!("--key '{}': the JWK Set has no Ed25519 key", path.display())
            })?,
        None => v,
    };
    serde_json::from_value(jwk)
        .with_context(|| format!("--key '{}' is not a JWK (kty, crv, x)", path.display()))
}

/// Reads a bundle file.
pub(crate) fn read_bundle(path: &Path) -> Result<Bundle> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    serde_json::from_slice(&bytes)
        .with_context(|| format!("'{}' is not an evidence bundle", path.display()))
}

fn verify_cmd(args: VerifyArgs) -> Result<u8> {
    let bundle = read_bundle(&args.file)?;
    let key = args.key.as_deref().map(read_key).transpose()?;
    match verify(&bundle, key.as_ref()) {
        Ok(v) => {
            let how = match (&v.keyid, &key) {
                (Some(k), Some(_)) => format!("checkpoints signed by the key given ({k})"),
                (Some(k), None) => format!(
                    "checkpoints signed by the bundle's own key {k}: check it is the crawler's (--key, from its Signature-Agent{})",
                    signature_agents(&bundle)
                ),
                (None, _) => {
                    println!(
                        "intact, unsigned: nothing ties it to a crawler ({} of {} from {}){}",
                        plural(v.records, "record", "records"),
                        v.host,
                        plural(v.chains, "chain", "chains"),
                        if args.allow_unsigned {
                            ""
                        } else {
                            "; --allow-unsigned accepts it"
                        }
                    );
                    return Ok(u8::from(!args.allow_unsigned));
                }
            };
            println!(
                "intact: {} of {} from {}; {how}",
                plural(v.records, "record", "records"),
                v.host,
                plural(v.chains, "chain", "chains")
            );
            Ok(0)
        }
        Err(why) => {
            println!("refused: {why}");
            Ok(1)
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    mannerly_audit::render::plural(n as u64, one, many)
}

fn signature_agents(bundle: &Bundle) -> String {
    let agents: Vec<&str> = bundle
        .writers
        .iter()
        .filter_map(|w| w.signature_agent.as_deref())
        .collect();
    match agents.first() {
        Some(a) => format!(" {a}"),
        None => String::new(),
    }
}
