//! `--metrics ADDR`, the same for every long-running command: the
//! registry served at http://ADDR/metrics, and where it listens said on
//! stderr.

use std::sync::Arc;

use anyhow::{Context, Result};
use mannerly_metrics::Registry;

/// Serves `registry` at `addr` on the current runtime; the serving task.
pub async fn listen(addr: &str, registry: Arc<Registry>) -> Result<tokio::task::JoinHandle<()>> {
    let (at, task) = mannerly_metrics::serve::bind(addr, registry)
        .await
        .with_context(|| format!("--metrics: cannot listen on {addr}"))?;
    eprintln!("metrics: http://{at}/metrics");
    Ok(task)
}
