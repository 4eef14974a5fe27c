//! Reading the robots.txt argument: a file path, or `-` for stdin.

use std::io::Read;

use anyhow::{bail, Context, Result};
use mannerly_robots::{Mode, ParseOptions, DEFAULT_MAX_BYTES};

/// Where robots.txt comes from and how to read it; shared by `check` and
/// `lint`.
#[derive(clap::Args)]
pub struct RobotsArgs {
    /// robots.txt file to read, `-` for standard input, or an http(s) URL
    /// on the origin to fetch it from (e.g. `https://example.com/robots.txt`).
    #[arg(value_name = "ROBOTS")]
    pub robots: String,
    /// Print JSON lines instead of text.
    #[arg(long)]
    pub json: bool,
    /// Strict RFC 9309 mode: percent-normalise URLs, no Google leniencies
    /// (and, when fetching, RFC 9309's handling of unreachable servers).
    #[arg(long)]
    pub rfc: bool,
    /// Bytes of robots.txt to read (at least 512000, the RFC 9309 minimum).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    pub max_bytes: usize,
}

impl RobotsArgs {
    /// The parse options, or an error naming the bad flag.
    pub fn options(&self) -> Result<ParseOptions> {
        if self.max_bytes < DEFAULT_MAX_BYTES {
            bail!(
                "--max-bytes {} is below the RFC 9309 minimum of {DEFAULT_MAX_BYTES} bytes",
                self.max_bytes
            );
        }
        Ok(ParseOptions {
            mode: if self.rfc {
                Mode::Rfc9309
            } else {
                Mode::Google
            },
            max_bytes: self.max_bytes,
        })
    }
}

/// The bytes of a robots.txt given on the command line, and a name for
/// messages.
pub struct Source {
    pub name: String,
    pub body: Vec<u8>,
}

/// Whether the ROBOTS argument is an http(s) URL to fetch.
pub fn is_url(arg: &str) -> bool {
    let lower = arg.get(..8).unwrap_or(arg).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Reads the ROBOTS argument: at most `max_bytes` and one more (so the
/// parser and the linter see that the file went on), never the whole of
/// an endless input such as `/dev/zero` or `yes |`. A cut is said on
/// stderr.
pub fn read_robots(arg: &str, max_bytes: usize) -> Result<Source> {
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let (name, read) = if arg == "-" {
        let mut body = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut body)
            .map(|_| body)
            .context("cannot read robots.txt from standard input");
        ("<stdin>".to_owned(), read)
    } else {
        let read = std::fs::File::open(arg)
            .and_then(|f| {
                let mut body = Vec::new();
                f.take(limit).read_to_end(&mut body).map(|_| body)
            })
            .with_context(|| format!("cannot read robots.txt file '{arg}'"));
        (arg.to_owned(), read)
    };
    let body = read?;
    if body.len() > max_bytes {
        eprintln!(
            "mannerly: {name}: longer than {max_bytes} bytes; only those are read and parsed, as a crawler would"
        );
    }
    Ok(Source { name, body })
}

/// The keys of a JWK Set or JWK file given with `flag`.
pub(crate) fn key_file(flag: &str, path: &str) -> anyhow::Result<mannerly_botauth::StaticKeys> {
    let keys = mannerly_botauth::read_jwk_file(std::path::Path::new(path))
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    Ok(mannerly_botauth::StaticKeys::new(keys))
}
