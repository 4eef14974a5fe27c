//! Whether a request that claims a crawler is its operator's: a Web Bot
//! Auth signature when one was recorded (verified as of the request's
//! time, with keys given or the ones its directory served then), the IP
//! ranges the operator publishes (given as files, or downloaded over https
//! and cached with their age) and forward-confirmed reverse DNS (parallel,
//! bounded, cached per address, with a timeout).
//!
//! The audit of access logs uses [`Checks`] as its
//! [`Identify`](mannerly_audit::Identify); `mannerly gate` uses
//! [`signature_identity`], [`read_given_ranges`] and [`default_cache`], so
//! a request judged at the door and the same request read from a log
//! tomorrow are named alike.
//!
//! Bounds: one address's reverse-DNS check takes at most 4 s, and at most
//! 32 run at once; each address is checked once per audit.

#![deny(missing_docs)]

mod checks;

pub use checks::{Checks, ChecksConfig};

use std::collections::HashMap;
use std::path::PathBuf;

use mannerly_audit::Identity;
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::Outcome;

/// Why the identity checks could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// An `--ip-ranges` value is not `TOKEN=FILE`.
    #[error("--ip-ranges '{0}': expected TOKEN=FILE")]
    RangeSpec(String),
    /// A range file could not be read.
    #[error("--ip-ranges: cannot read '{file}': {source}")]
    RangeFile {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// A range file holds no ranges for its token.
    #[error("--ip-ranges '{file}' for {token}: {why}")]
    Ranges {
        /// The file.
        file: String,
        /// The token it was given for.
        token: String,
        /// What is wrong.
        why: String,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The key directory client could not be built.
    #[error("{0}")]
    Directory(#[from] mannerly_botauth::DirectoryError),
}

/// The identity a signature's outcome gives: verified, spoofed (invalid),
/// or unverified (no key could be had); `None` when it says nothing (no
/// signature, one not for this request). The one mapping the audit and
/// the gate share.
pub fn signature_identity(outcome: &Outcome) -> Option<Identity> {
    match outcome {
        Outcome::Verified { .. } => Some(Identity::Verified),
        Outcome::Invalid { .. } => Some(Identity::Spoofed),
        Outcome::Unverified { .. } => Some(Identity::Unverified),
        _ => None,
    }
}

/// `--ip-ranges TOKEN=FILE` values read, by token in lower case.
pub fn read_given_ranges(specs: &[String]) -> Result<HashMap<String, IpRanges>, IdentityError> {
    let mut given = HashMap::new();
    for spec in specs {
        let (token, file) = spec
            .split_once('=')
            .ok_or_else(|| IdentityError::RangeSpec(spec.clone()))?;
        let text = std::fs::read_to_string(file).map_err(|source| IdentityError::RangeFile {
            file: file.to_owned(),
            source,
        })?;
        let ranges = IpRanges::parse_for(&text, token).map_err(|e| IdentityError::Ranges {
            file: file.to_owned(),
            token: token.to_owned(),
            why: e.to_string(),
        })?;
        given.insert(token.to_ascii_lowercase(), ranges);
    }
    Ok(given)
}

/// Where downloaded range files and the key history are kept:
/// `$XDG_CACHE_HOME/mannerly/ip-ranges`, else `~/.cache/...`.
pub fn default_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("mannerly/ip-ranges")
}

/// The directory URL in a `Signature-Agent` value: the first quoted
/// string (`agent1="https://..."` or `"https://..."`), or the bare value.
pub fn agent_url(value: &str) -> &str {
    let v = value.trim();
    match v.split_once('"') {
        Some((_, rest)) => rest.split('"').next().unwrap_or(rest),
        None => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_agent_names_its_directory_however_it_is_written() {
        assert_eq!(
            agent_url(r#"agent1="https://a.example/.well-known/k""#),
            "https://a.example/.well-known/k"
        );
        assert_eq!(agent_url(r#""https://b.example/""#), "https://b.example/");
        assert_eq!(agent_url(" https://c.example/ "), "https://c.example/");
    }

    #[test]
    fn a_bad_range_spec_names_what_was_wrong() {
        let e = read_given_ranges(&["GoogleBot".into()]).expect_err("no =");
        assert!(
            matches!(e, IdentityError::RangeSpec(ref s) if s == "GoogleBot"),
            "{e}"
        );
        let e = read_given_ranges(&["X=/nonexistent/ranges.json".into()]).expect_err("no file");
        assert!(matches!(e, IdentityError::RangeFile { .. }), "{e}");
    }
}
