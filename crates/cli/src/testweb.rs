//! `mannerly testweb`: the simulated web, for manual runs and demos.

use anyhow::{Context, Result};
use mannerly_testweb::{TestWeb, WebConfig};

#[derive(clap::Args)]
pub struct Args {
    /// TOML file describing the hosts (see examples/testweb.toml).
    #[arg(long, value_name = "FILE")]
    config: String,
    /// Listen on this port (overrides the file's ports).
    #[arg(long)]
    port: Option<u16>,
    /// Do not print a line per request.
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: Args) -> Result<u8> {
    let mut config = WebConfig::from_toml_file(&args.config)?;
    if let Some(p) = args.port {
        config.ports = vec![p];
    }
    config.log = !args.quiet;
    let mut hosts: Vec<String> = config.hosts.keys().cloned().collect();
    hosts.sort();
    let generated = config.generated.count;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let web = TestWeb::start(config).await?;
        let port = web.port();
        eprintln!("testweb: listening on 127.0.0.1, http ports {:?}, https ports {:?}", web.ports(), web.tls_ports());
        let mut named = hosts.clone();
        if generated > 0 {
            named.push(format!("{generated} generated"));
        }
        eprintln!("testweb: hosts {}", named.join(", "));
        if let Some(h) = hosts.first() {
            eprintln!("testweb: try  curl --resolve {h}:{port}:127.0.0.1 http://{h}:{port}/robots.txt");
            eprintln!("          or  mannerly fetch http://{h}:{port}/   (with {h} resolving to 127.0.0.1)");
        }
        crate::signals::stop_signal()
            .await
            .context("waiting for Ctrl-C or SIGTERM")?;
        drop(web);
        anyhow::Ok(0)
    })
}
