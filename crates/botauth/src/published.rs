//! An operator's published IP-range file (Google's, Bing's, OpenAI's JSON
//! lists), downloaded over https and kept in a cache directory: a copy
//! younger than [`FRESH`] is used without asking again, and offline any
//! cached copy is used, with its age said.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A downloaded range file younger than this is used without asking again.
pub const FRESH: Duration = Duration::from_secs(24 * 3600);
/// How long one download may take.
const TIMEOUT: Duration = Duration::from_secs(15);
/// A range file larger than this is refused (Google's is about 20 KiB).
const MAX_BYTES: usize = 4 << 20;

/// Why a range file could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishedError {
    /// Not in the cache, and no download allowed.
    #[error("not in the cache, and offline")]
    Offline,
    /// The download failed.
    #[error("download failed: {0}")]
    Download(#[from] reqwest::Error),
    /// The file was larger than the cap.
    #[error("larger than {MAX_BYTES} bytes")]
    TooLarge,
    /// The cached copy could not be read.
    #[error("cannot read the cached copy {path}: {source}")]
    Cache {
        /// The cached file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// A range file's text, and the age of the cached copy it came from
/// (`None`: downloaded now).
#[derive(Debug, Clone)]
pub struct RangeFile {
    /// The file as published.
    pub text: String,
    /// How old the cached copy was.
    pub age: Option<Duration>,
}

/// The file at `url`, from `cache` or the network (never the network when
/// `offline`). A fresh download is written back to the cache, best effort.
pub async fn range_file(
    url: &str,
    cache: &Path,
    offline: bool,
) -> Result<RangeFile, PublishedError> {
    let path = cache.join(file_name(url));
    let age = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    if let Some(age) = age.filter(|a| *a < FRESH || offline) {
        let text = std::fs::read_to_string(&path).map_err(|source| PublishedError::Cache {
            path: path.clone(),
            source,
        })?;
        return Ok(RangeFile {
            text,
            age: Some(age),
        });
    }
    if offline {
        return Err(PublishedError::Offline);
    }
    let client = reqwest::Client::builder().timeout(TIMEOUT).build()?;
    let mut resp = client.get(url).send().await?.error_for_status()?;
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BYTES {
            return Err(PublishedError::TooLarge);
        }
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if std::fs::create_dir_all(cache).is_ok() {
        let _ = std::fs::write(&path, &text);
    }
    Ok(RangeFile { text, age: None })
}

/// The cache's name for a URL: letters, digits and dots kept, the rest `_`.
pub(crate) fn file_name(url: &str) -> String {
    url.chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '.' {
            true => c,
            false => '_',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn offline_uses_any_cached_copy_and_never_the_network() {
        let dir = tempfile::tempdir().expect("tmp");
        let url = "https://example.invalid/ranges.json";
        let err = range_file(url, dir.path(), true).await;
        assert!(matches!(err, Err(PublishedError::Offline)), "{err:?}");
        std::fs::write(dir.path().join(file_name(url)), "{\"prefixes\": []}").expect("write");
        let got = range_file(url, dir.path(), true).await.expect("cached");
        assert_eq!(got.text, "{\"prefixes\": []}");
        assert!(got.age.is_some());
        assert_eq!(file_name(url), "https___example.invalid_ranges.json");
    }
}
