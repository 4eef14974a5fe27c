//! Why the simulated web cannot start, or its configuration be read.

use std::io;

/// Errors starting the simulated web or reading its configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestWebError {
    /// A port could not be bound.
    #[error("cannot bind 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port.
        port: u16,
        /// The operating system's error.
        source: io::Error,
    },
    /// The config file could not be read.
    #[error("cannot read config {path}: {source}")]
    ReadConfig {
        /// The file.
        path: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The config file is not valid TOML for a [`WebConfig`](crate::WebConfig).
    #[error("config {path} is not valid: {message}")]
    BadConfig {
        /// The file.
        path: String,
        /// What the TOML reader said.
        message: String,
    },
    /// The test CA could not be made.
    #[error("cannot make the test TLS certificate authority: {0}")]
    Tls(String),
}
