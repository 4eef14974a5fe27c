//! Reading the robots.txt argument: a file path, or `-` for stdin.

use std::io::Read;

use anyhow::{Context, Result};

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

pub fn read_robots(arg: &str) -> Result<Source> {
    if arg == "-" {
        let mut body = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut body)
            .context("cannot read robots.txt from standard input")?;
        return Ok(Source {
            name: "<stdin>".into(),
            body,
        });
    }
    let body =
        std::fs::read(arg).with_context(|| format!("cannot read robots.txt file '{arg}'"))?;
    Ok(Source {
        name: arg.to_owned(),
        body,
    })
}
