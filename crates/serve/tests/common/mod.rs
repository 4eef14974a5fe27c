//! What the serve tests share.

use std::path::Path;

use mannerly_serve::whatif::SharedIdentify;

/// The audit's identity checks, offline, with Google's ranges given as the
/// one IPv4 prefix `cidr` (a file and a cache under `dir`).
pub fn google_checks(dir: &Path, cidr: &str) -> SharedIdentify {
    let ranges = dir.join("google.json");
    std::fs::write(
        &ranges,
        format!(r#"{{"prefixes": [{{"ipv4Prefix": "{cidr}"}}]}}"#),
    )
    .expect("ranges");
    let catalogue = mannerly_audit::Catalogue::builtin();
    let mut config = mannerly_identity::ChecksConfig::new(dir.join("cache"));
    config.offline = true;
    config.given =
        mannerly_identity::read_given_ranges(&[format!("Google={}", ranges.display())], catalogue)
            .expect("given ranges");
    let checks = mannerly_identity::Checks::new(config, catalogue).expect("checks");
    SharedIdentify::new(Box::new(checks))
}
