//! The flags that say how identities are checked, shared by `mannerly
//! audit` and `mannerly serve` (its what-if answers).

use anyhow::Result;
use mannerly_audit::Catalogue;
use mannerly_identity::ChecksConfig;

#[derive(clap::Args)]
pub struct IdentityArgs {
    /// IP ranges from a file or an https URL instead of the operator's
    /// site: NAME=FILE|URL, where NAME is an operator (Google: every
    /// crawler the catalogue lists for it) or a product token, and the
    /// file is JAFAR (Google's `prefixes` format; a prefix's `services`
    /// name its tokens, the most specific prefix wins) or ipverse's
    /// crawlers.json. A URL's file is kept a day in the cache.
    #[arg(long, value_name = "NAME=FILE|URL")]
    pub ip_ranges: Vec<String>,
    /// Web Bot Auth keys to verify signed requests with (a JWKS or one
    /// JWK), instead of or before the directories requests name.
    #[arg(long, value_name = "FILE")]
    pub wba_keys: Option<String>,
    /// No network: no DNS, no downloads (given files and the cache only).
    #[arg(long)]
    pub offline: bool,
    /// The DNS server for reverse-DNS checks (default: the system's).
    #[arg(long, value_name = "ADDR:PORT")]
    pub dns: Option<std::net::SocketAddr>,
    /// Where downloaded IP ranges are kept.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<String>,
}

impl IdentityArgs {
    /// The identity checks as the flags ask for them.
    pub fn config(&self) -> Result<ChecksConfig> {
        let mut config = ChecksConfig::new(
            self.cache
                .as_ref()
                .map_or_else(mannerly_identity::default_cache, std::path::PathBuf::from),
        );
        config.offline = self.offline;
        config.dns = self.dns;
        config.given = mannerly_identity::read_given_ranges(&self.ip_ranges, Catalogue::builtin())?;
        // An unlisted crawler whose User-Agent names its page is checked
        // against the ranges that page links (fetched as JAFAR asks: https,
        // public addresses, at most hourly).
        config.pages = Some(mannerly_botauth::identity_check::CheckOptions {
            cache: Some(mannerly_identity::identity_cache()),
            timeout: std::time::Duration::from_secs(5),
            ..Default::default()
        });
        config.keys = self
            .wba_keys
            .as_deref()
            .map(|p| crate::input::key_file("--wba-keys", p))
            .transpose()?;
        Ok(config)
    }
}
