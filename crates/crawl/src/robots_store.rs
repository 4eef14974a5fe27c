//! robots.txt state on disk for a crawl (`out/robots/`), so a resumed
//! crawl neither fetches robots.txt again nor forgets a failure run.
//!
//! One fjall keyspace, origin → the state as JSON. A write is one journal
//! append (committed writes survive the process being killed), where a
//! file per origin cost an inode and a rename per write: on 2,000 origins
//! that was most of the crawl's CPU.

use std::path::Path;

use mannerly_fetch::policy::StoredState;
use mannerly_fetch::{Origin, Store, StoreError, StoreFuture};

/// A [`Store`] on fjall.
pub struct FjallStore {
    _db: fjall::Database,
    states: fjall::Keyspace,
}

impl FjallStore {
    /// A store in `dir` (created when missing).
    pub fn open(dir: &Path) -> Result<FjallStore, fjall::Error> {
        // One background worker and a small block cache, as the
        // frontier's store has (see `mannerly_polite::store`): the rules
        // of the hosts in progress are in the robots.txt cache above it.
        let db = fjall::Database::builder(dir)
            .cache_size(2 << 20)
            .worker_threads(1)
            .open()?;
        // fjall's default memtable (64 MiB) would hold every origin's
        // robots.txt in memory until it fills.
        let states = db.keyspace("robots", || {
            fjall::KeyspaceCreateOptions::default().max_memtable_size(1 << 20)
        })?;
        Ok(FjallStore { _db: db, states })
    }
}

impl Store for FjallStore {
    fn load<'a>(&'a self, origin: &'a Origin) -> StoreFuture<'a, Option<StoredState>> {
        Box::pin(async move {
            let key = origin.to_string();
            let Some(bytes) = self
                .states
                .get(key.as_bytes())
                .map_err(|e| StoreError::new("load", origin, e))?
            else {
                return Ok(None);
            };
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::new("load", origin, e))
        })
    }

    fn save<'a>(&'a self, state: &'a StoredState) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let origin = &state.origin;
            let json = serde_json::to_vec(state).map_err(|e| StoreError::new("save", origin, e))?;
            self.states
                .insert(origin.to_string().as_bytes(), json)
                .map_err(|e| StoreError::new("save", origin, e))
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
        let state = OriginState::new(origin.clone()).to_stored();
        {
            let store = FjallStore::open(dir.path()).expect("open");
            assert_eq!(store.load(&origin).await.expect("load"), None);
            store.save(&state).await.expect("save");
        }
        let again = FjallStore::open(dir.path()).expect("reopen");
        assert_eq!(again.load(&origin).await.expect("load"), Some(state));
        // A value that is not a state is reported, not taken for "nothing
        // stored".
        again
            .states
            .insert(origin.to_string().as_bytes(), b"{\"origin\":".to_vec())
            .expect("tear");
        assert!(again.load(&origin).await.is_err());
    }
}
