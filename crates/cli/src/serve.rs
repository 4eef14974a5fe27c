//! `mannerly serve`: the tester page and the decision API.

use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_audit::Catalogue;
use mannerly_identity::Checks;
use mannerly_metrics::Registry;
use mannerly_serve::whatif::SharedIdentify;
use mannerly_serve::ServeConfig;

#[derive(clap::Args)]
pub struct Args {
    /// Address and port to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    listen: String,
    /// Also fetch robots.txt from loopback, private and link-local
    /// addresses (off: a public server must not reach into its own network).
    #[arg(long)]
    allow_private: bool,
    /// Requests per second each client IP may make (burst: twice this).
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = crate::counts::at_least_one::<u32>)]
    rate_limit: u32,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = 2 << 20, value_name = "BYTES", value_parser = crate::counts::at_least_one::<usize>)]
    max_body: usize,
    /// Deadline of each request, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// Serve Prometheus metrics (requests and latency per endpoint, the
    /// process) at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<String>,
    /// Check no identity in what-if answers: every client unverified.
    #[arg(long)]
    no_identity: bool,
    /// How the what-if answers check each client's identity, as `mannerly
    /// audit` does (at most 256 addresses by reverse DNS a request).
    #[command(flatten)]
    identity: crate::identity_args::IdentityArgs,
}

pub fn run(args: Args) -> Result<u8> {
    let registry = Registry::new(true);
    let identify = match args.no_identity {
        true => None,
        false => {
            let checks = Checks::new(args.identity.config()?, Catalogue::builtin())?;
            Some(SharedIdentify::new(Box::new(checks)))
        }
    };
    let config = ServeConfig {
        identify,
        metrics: args
            .metrics
            .as_ref()
            .map(|_| mannerly_serve::metrics::ServeMetrics::new(&registry)),
        allow_private: args.allow_private,
        rate_limit: args.rate_limit,
        max_body: args.max_body,
        timeout: Duration::from_secs(args.timeout),
        ..ServeConfig::default()
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr().context("reading the bound address")?;
        if let Some(m) = &args.metrics {
            crate::metrics::listen(m, registry.clone()).await?;
        }
        eprintln!("mannerly serve: the tester at http://{addr}/, the API described at http://{addr}/api/openapi.json");
        tokio::select! {
            r = mannerly_serve::serve(listener, config) => r.context("serving")?,
            r = crate::signals::stop_signal() => drop(r.context("waiting for Ctrl-C or SIGTERM")?),
        }
        anyhow::Ok(0)
    })
}
