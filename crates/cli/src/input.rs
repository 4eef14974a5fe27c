//! Reading the robots.txt argument: a file path, or `-` for stdin.

use std::io::Read;

use anyhow::{Context, Result};

/// The bytes of a robots.txt given on the command line, and a name for
/// messages.
pub struct Source {
    pub name: String,
    pub body: Vec<u8>,
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
    if arg.starts_with("http://") || arg.starts_with("https://") {
        anyhow::bail!(
            "'{arg}' is a URL; fetching robots.txt over HTTP is not built yet, so save it to a file first (e.g. `curl -s {arg} > robots.txt`)"
        );
    }
    let body =
        std::fs::read(arg).with_context(|| format!("cannot read robots.txt file '{arg}'"))?;
    Ok(Source {
        name: arg.to_owned(),
        body,
    })
}
