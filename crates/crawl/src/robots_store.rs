//! robots.txt state on disk for a crawl (`out/robots/`), so a resumed
//! crawl neither fetches robots.txt again nor forgets a failure run: one
//! JSON file per origin, written to a temporary file and renamed, so a
//! kill leaves the old state or the new one, never half of either.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use mannerly_fetch::policy::StoredState;
use mannerly_fetch::{Origin, Store, StoreError, StoreFuture};
use sha1::{Digest, Sha1};

/// A [`Store`] of one JSON file per origin in a directory.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store in `dir` (created when missing).
    pub fn open(dir: &Path) -> std::io::Result<FileStore> {
        std::fs::create_dir_all(dir)?;
        Ok(FileStore {
            dir: dir.to_owned(),
        })
    }

    fn path(&self, origin: &Origin) -> PathBuf {
        let digest = Sha1::digest(origin.to_string().as_bytes());
        let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }
}

fn failed(
    op: &'static str,
    origin: &Origin,
    e: impl std::error::Error + Send + Sync + 'static,
) -> StoreError {
    StoreError {
        op,
        origin: origin.to_string(),
        source: Box::new(e),
    }
}

impl Store for FileStore {
    fn load<'a>(&'a self, origin: &'a Origin) -> StoreFuture<'a, Option<StoredState>> {
        Box::pin(async move {
            let bytes = match std::fs::read(self.path(origin)) {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(failed("load", origin, e)),
            };
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| failed("load", origin, e))
        })
    }

    fn save<'a>(&'a self, state: &'a StoredState) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let origin = &state.origin;
            let json = serde_json::to_vec(state).map_err(|e| failed("save", origin, e))?;
            let path = self.path(origin);
            let tmp = path.with_extension("json.tmp");
            std::fs::write(&tmp, json).map_err(|e| failed("save", origin, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| failed("save", origin, e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mannerly_fetch::OriginState;

    #[tokio::test]
    async fn states_survive_a_new_store_on_the_same_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let origin = Origin::of("https://a.example/").expect("origin");
        let store = FileStore::open(dir.path()).expect("open");
        assert_eq!(store.load(&origin).await.expect("load"), None);
        let state = OriginState::new(origin.clone()).to_stored();
        store.save(&state).await.expect("save");
        let again = FileStore::open(dir.path()).expect("reopen");
        assert_eq!(again.load(&origin).await.expect("load"), Some(state));
        // A torn file is reported, not taken for "nothing stored".
        std::fs::write(again.path(&origin), b"{\"origin\":").expect("tear");
        assert!(again.load(&origin).await.is_err());
    }
}
