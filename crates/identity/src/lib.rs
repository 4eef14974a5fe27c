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

use mannerly_audit::{Catalogue, Identity};
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::Outcome;

/// Why the identity checks could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// An `--ip-ranges` value is not `TOKEN=FILE`.
    #[error(
        "--ip-ranges '{0}': expected NAME=FILE or NAME=https://URL (an operator such as Google, or a product token)"
    )]
    RangeSpec(String),
    /// An `--ip-ranges` name is neither an operator nor a crawler the
    /// catalogue knows.
    #[error("--ip-ranges {name}=...: no operator or crawler is called '{name}' (operators with published ranges: {known})")]
    RangeName {
        /// The name given.
        name: String,
        /// The operators that can be named, comma-separated.
        known: String,
    },
    /// A range file could not be read.
    #[error("--ip-ranges: cannot read '{file}': {source}")]
    RangeFile {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// A range file could not be downloaded.
    #[error("--ip-ranges: cannot download '{url}': {why}")]
    RangeDownload {
        /// The URL.
        url: String,
        /// Why.
        why: String,
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

/// `--ip-ranges NAME=FILE` values read, by token in lower case. NAME is
/// an operator (`Google`: the file verifies every token the catalogue
/// lists for it, each by the prefixes a JAFAR file's `services` give it)
/// or one product token; a name that is neither is refused, listing the
/// operators that can be named.
pub fn read_given_ranges(
    specs: &[String],
    catalogue: &Catalogue,
) -> Result<HashMap<String, IpRanges>, IdentityError> {
    let mut given = HashMap::new();
    for spec in specs {
        let (name, file) = spec
            .split_once('=')
            .ok_or_else(|| IdentityError::RangeSpec(spec.clone()))?;
        let tokens = tokens_named(name, catalogue)?;
        let text = range_text(file)?;
        let mut read = 0;
        let mut last_error = None;
        for token in &tokens {
            // An operator's file need not name every token it has (an
            // ipverse file names a few); a token's file must read.
            match IpRanges::parse_for(&text, token) {
                Ok(r) => {
                    given.insert(token.to_ascii_lowercase(), r);
                    read += 1;
                }
                Err(e) => last_error = Some(e.to_string()),
            }
        }
        if read == 0 {
            return Err(IdentityError::Ranges {
                file: file.to_owned(),
                token: name.to_owned(),
                why: last_error.unwrap_or_else(|| "no prefixes for it".into()),
            });
        }
    }
    Ok(given)
}

/// An `--ip-ranges` file's text: read, or for an https URL downloaded
/// (kept in [`default_cache`] for 24 h). The download runs on a thread of
/// its own, so this may be called inside an async runtime.
fn range_text(file: &str) -> Result<String, IdentityError> {
    if file.starts_with("http://") {
        // Ranges decide who is believed: never taken over plain http.
        return Err(IdentityError::RangeDownload {
            url: file.to_owned(),
            why: "ranges are downloaded over https only".into(),
        });
    }
    if !file.starts_with("https://") {
        return std::fs::read_to_string(file).map_err(|source| IdentityError::RangeFile {
            file: file.to_owned(),
            source,
        });
    }
    let url = file.to_owned();
    let cache = default_cache();
    let fetched = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(mannerly_botauth::published::range_file(&url, &cache, false))
            .map(|f| f.text)
            .map_err(|e| e.to_string())
    })
    .join()
    .unwrap_or_else(|_| Err("the download thread failed".into()));
    fetched.map_err(|why| IdentityError::RangeDownload {
        url: file.to_owned(),
        why,
    })
}

/// The product tokens an `--ip-ranges` name stands for: the catalogue's
/// crawler of that token, else every crawler of that operator.
fn tokens_named(name: &str, catalogue: &Catalogue) -> Result<Vec<String>, IdentityError> {
    let entries = || (0..catalogue.len()).filter_map(|i| catalogue.get(i));
    if entries().any(|k| k.token.eq_ignore_ascii_case(name)) {
        return Ok(vec![name.to_owned()]);
    }
    let of_operator: Vec<String> = entries()
        .filter(|k| {
            k.operator
                .as_deref()
                .is_some_and(|o| o.eq_ignore_ascii_case(name))
        })
        .map(|k| k.token.clone())
        .collect();
    if !of_operator.is_empty() {
        return Ok(of_operator);
    }
    let mut known: Vec<&str> = entries()
        .filter(|k| k.verifiable())
        .filter_map(|k| k.operator.as_deref())
        .collect();
    known.sort_unstable_by_key(|o| o.to_ascii_lowercase());
    known.dedup_by_key(|o| o.to_ascii_lowercase());
    Err(IdentityError::RangeName {
        name: name.to_owned(),
        known: known.join(", "),
    })
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

/// Where crawlers' published identities (their pages, the JAFAR files
/// those link) are kept between checks: beside [`default_cache`].
pub fn identity_cache() -> PathBuf {
    default_cache().with_file_name("identity")
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
        let c = Catalogue::builtin();
        let e = read_given_ranges(&["GoogleBot".into()], c).expect_err("no =");
        assert!(
            matches!(e, IdentityError::RangeSpec(ref s) if s == "GoogleBot"),
            "{e}"
        );
        let e = read_given_ranges(&["Googlebot=/nonexistent/ranges.json".into()], c)
            .expect_err("no file");
        assert!(matches!(e, IdentityError::RangeFile { .. }), "{e}");
        // A URL that cannot be had is said so, with the URL.
        let e = read_given_ranges(&["Googlebot=https://127.0.0.1:1/ranges.json".into()], c)
            .expect_err("nothing listens there");
        assert!(
            matches!(e, IdentityError::RangeDownload { ref url, .. } if url.ends_with(":1/ranges.json")),
            "{e}"
        );
        // Plain http is refused as such, not looked for as a file.
        let e = read_given_ranges(&["Googlebot=http://example.com/r.json".into()], c)
            .expect_err("http");
        assert!(e.to_string().ends_with("https only"), "{e}");
        let e = read_given_ranges(&["Foo=/nonexistent/ranges.json".into()], c)
            .expect_err("no such name");
        let text = e.to_string();
        assert!(text.contains("'Foo'") && text.contains("Google"), "{text}");
    }

    #[test]
    fn an_operators_file_verifies_every_token_of_the_operator() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("google.json");
        std::fs::write(&file, r#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/19"}]}"#).expect("write");
        let spec = format!("Google={}", file.display());
        let given = read_given_ranges(&[spec], Catalogue::builtin()).expect("reads");
        let ip = "66.249.66.1".parse().expect("ip");
        for token in [
            "googlebot",
            "googlebot-image",
            "googlebot-mobile",
            "storebot-google",
        ] {
            assert!(given.get(token).is_some_and(|r| r.contains(ip)), "{token}");
        }
    }
}
