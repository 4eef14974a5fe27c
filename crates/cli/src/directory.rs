//! `mannerly directory check`: a key directory fetched as verifiers will
//! fetch it, and every problem its operator should fix.

use anyhow::{bail, Result};
use mannerly_botauth::dircheck::{check_directory, Severity};
use mannerly_botauth::directory::DIRECTORY_MEDIA_TYPE;
use mannerly_botauth::UnixMillis;

use crate::card::Reach;

#[derive(clap::Subcommand)]
pub enum DirectoryCommand {
    /// Fetch a key directory as verifiers will and report every problem.
    /// Exit status: 0 none, 1 at least one, 2 on errors.
    Check(DirectoryArgs),
}

#[derive(clap::Args)]
pub struct DirectoryArgs {
    /// The directory's URL (usually https://HOST/.well-known/http-message-signatures-directory).
    url: String,
    #[command(flatten)]
    reach: Reach,
    /// Print one JSON document: every problem, and what held.
    #[arg(long)]
    json: bool,
}

pub fn directory(cmd: DirectoryCommand) -> Result<u8> {
    let DirectoryCommand::Check(a) = cmd;
    if !a.url.starts_with("https://") {
        // A bare host or an http URL: the https URL verifiers would fetch.
        let host = a.url.split("://").last().unwrap_or_default();
        let host = host.split('/').next().unwrap_or_default();
        bail!(
            "{}: key directories are served over https only (§5.5.1); the usual place is https://{host}/.well-known/http-message-signatures-directory",
            a.url
        );
    }
    let doc = a.reach.fetch(&a.url, DIRECTORY_MEDIA_TYPE)?;
    let findings = check_directory(&a.url, &doc.response, &doc.body, UnixMillis::now());
    let code = u8::from(!findings.is_empty());
    if a.json {
        let out = serde_json::json!({ "url": a.url, "status": doc.response.status, "problems": findings });
        println!("{out}");
        return Ok(code);
    }
    if findings.is_empty() {
        println!(
            "ok: {} is a directory verifiers can use, with nothing to fix",
            a.url
        );
    }
    for f in &findings {
        let level = match f.severity {
            Severity::Must => "MUST",
            Severity::Should => "SHOULD",
        };
        println!("{level} {}: {}", f.topic, crate::text::clean(&f.detail));
    }
    Ok(code)
}
