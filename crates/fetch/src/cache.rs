//! [`RobotsCache`]: what crawlers call with a URL.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use mannerly_robots::MatchedRule;

use mannerly_time::Clock;
use mannerly_time::UnixMillis;

use crate::http::{Fetcher, Validators};
use crate::policy::{Access, AccessKind, Decision, OriginState, PolicyConfig, StoredState};
use crate::{FetchError, Origin, StoreError};

mod lru;
use lru::Lru;

/// A boxed future returned by [`Store`] calls.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where origin states are persisted between runs (and, for a fleet,
/// shared between processes).
///
/// Calls are async and fallible, so a store may sit behind a network (a
/// server shared by many crawlers) without blocking a runtime. The futures
/// are boxed so a cache can hold any store as `Arc<dyn Store>`; the cache
/// calls a store once per fetch, not per URL, so that allocation does not
/// show.
///
/// What [`RobotsCache`] does when a call fails:
/// - a failed **load** is treated as "nothing stored": the origin's
///   robots.txt is fetched again before any of its URLs is answered. That
///   is never more permissive than the stored state: if the fetch fails,
///   a new failure run starts in its first phase, which disallows
///   everything.
/// - a failed **save** keeps the new decision in memory and serves it; the
///   error is counted and kept ([`RobotsCache::store_errors`],
///   [`RobotsCache::last_store_error`]) so the caller can report it, and the
///   next save of that origin writes the newer state again.
pub trait Store: Send + Sync {
    /// The stored state of an origin, if any.
    fn load<'a>(&'a self, origin: &'a Origin) -> StoreFuture<'a, Option<StoredState>>;
    /// Stores an origin's state, replacing what was there.
    fn save<'a>(&'a self, state: &'a StoredState) -> StoreFuture<'a, ()>;
}

/// Persists nothing.
#[derive(Debug, Default)]
pub struct NoStore;

impl Store for NoStore {
    fn load<'a>(&'a self, _: &'a Origin) -> StoreFuture<'a, Option<StoredState>> {
        Box::pin(async { Ok(None) })
    }
    fn save<'a>(&'a self, _: &'a StoredState) -> StoreFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
}

/// Keeps states in memory (for tests, and as a model for real stores).
#[derive(Debug, Default)]
pub struct MemoryStore(Mutex<HashMap<Origin, StoredState>>);

impl MemoryStore {
    /// Origins stored.
    pub fn len(&self) -> usize {
        self.0.lock().len()
    }
    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A copy of one origin's stored state, without going through a future.
    pub fn get(&self, origin: &Origin) -> Option<StoredState> {
        self.0.lock().get(origin).cloned()
    }
}

impl Store for MemoryStore {
    fn load<'a>(&'a self, origin: &'a Origin) -> StoreFuture<'a, Option<StoredState>> {
        let found = self.0.lock().get(origin).cloned();
        Box::pin(async move { Ok(found) })
    }
    fn save<'a>(&'a self, state: &'a StoredState) -> StoreFuture<'a, ()> {
        self.0.lock().insert(state.origin.clone(), state.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Limits of the cache.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// Origins kept in memory (10,000); the least recently used go first.
    pub max_entries: usize,
    /// Approximate bytes of robots.txt bodies and parsed rules kept (256 MiB).
    pub max_bytes: usize,
    /// How fetch outcomes become decisions.
    pub policy: PolicyConfig,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            max_entries: 10_000,
            max_bytes: 256 << 20,
            policy: PolicyConfig::default(),
        }
    }
}

/// The answer for one URL.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckResult {
    /// The URL asked about.
    pub url: String,
    /// Its origin (`https://example.com`).
    pub origin: String,
    /// Whether the agent may fetch it.
    pub allowed: bool,
    /// What decided: the rules, allow-all, disallow-all (robots.txt
    /// unavailable), or robots.txt itself.
    pub access: AccessKind,
    /// The deciding rule, when the rules decided.
    pub rule: Option<MatchedRule>,
    /// Why the origin is in this state.
    pub reason: String,
    /// When the origin's decision expires (`None` for robots.txt itself).
    pub expires_at: Option<UnixMillis>,
}

struct Slot {
    /// `None` until the stored state was loaded (under this lock, so one
    /// load per origin even with many callers).
    state: tokio::sync::Mutex<Option<OriginState>>,
}

/// A bounded, single-flight robots.txt cache over a [`Fetcher`].
pub struct RobotsCache<F> {
    fetcher: F,
    clock: Arc<dyn Clock>,
    store: Arc<dyn Store>,
    config: CacheConfig,
    lru: Mutex<Lru<Origin, Arc<Slot>>>,
    store_errors: AtomicU64,
    last_store_error: Mutex<Option<String>>,
}

impl<F: Fetcher> RobotsCache<F> {
    /// A cache over `fetcher`, with time from `clock`, persisting through `store`.
    pub fn new(
        fetcher: F,
        clock: Arc<dyn Clock>,
        store: Arc<dyn Store>,
        config: CacheConfig,
    ) -> Self {
        RobotsCache {
            fetcher,
            clock,
            store,
            config,
            lru: Mutex::new(Lru::default()),
            store_errors: AtomicU64::new(0),
            last_store_error: Mutex::new(None),
        }
    }

    /// Origins in memory.
    pub fn len(&self) -> usize {
        self.lru.lock().len()
    }

    /// Whether no origin is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Approximate bytes held.
    pub fn bytes(&self) -> usize {
        self.lru.lock().bytes()
    }

    fn slot(&self, origin: &Origin) -> Arc<Slot> {
        let mut lru = self.lru.lock();
        if let Some(s) = lru.touch(origin) {
            return s;
        }
        let slot = Arc::new(Slot {
            state: tokio::sync::Mutex::new(None),
        });
        lru.insert(origin.clone(), slot.clone());
        self.evict(&mut lru, origin);
        slot
    }

    fn evict(&self, lru: &mut Lru<Origin, Arc<Slot>>, keep: &Origin) {
        let (max_entries, max_bytes) = (self.config.max_entries.max(1), self.config.max_bytes);
        lru.evict(keep, |n, bytes| {
            n > max_entries || (bytes > max_bytes && n > 1)
        });
    }

    fn account(&self, origin: &Origin, state: &OriginState) {
        let bytes = 512 + state.good.as_ref().map_or(0, |g| g.body.len() * 3);
        let mut lru = self.lru.lock();
        lru.set_bytes(origin, bytes);
        self.evict(&mut lru, origin);
    }

    /// Store failures since the cache was made (see [`Store`] for what
    /// the cache does on each).
    pub fn store_errors(&self) -> u64 {
        self.store_errors.load(Ordering::Relaxed)
    }

    /// The most recent store failure, as text.
    pub fn last_store_error(&self) -> Option<String> {
        self.last_store_error.lock().clone()
    }

    fn store_failed(&self, e: StoreError) {
        self.store_errors.fetch_add(1, Ordering::Relaxed);
        *self.last_store_error.lock() = Some(e.to_string());
    }

    /// The slot's state, loaded from the store on first use.
    async fn loaded<'s>(
        &self,
        slot: &'s Slot,
        origin: &Origin,
    ) -> tokio::sync::MappedMutexGuard<'s, OriginState> {
        let mut guard = slot.state.lock().await;
        if guard.is_none() {
            let state = match self.store.load(origin).await {
                Ok(Some(stored)) => OriginState::restore(stored, &self.config.policy),
                Ok(None) => OriginState::new(origin.clone()),
                Err(e) => {
                    self.store_failed(e);
                    OriginState::new(origin.clone())
                }
            };
            *guard = Some(state);
        }
        tokio::sync::MutexGuard::map(guard, |s| {
            s.get_or_insert_with(|| OriginState::new(origin.clone()))
        })
    }

    async fn save(&self, state: &mut OriginState) {
        match self.store.save(&state.to_stored()).await {
            Ok(()) => state.saved(),
            Err(e) => self.store_failed(e),
        }
    }

    /// The origin's current decision, fetching robots.txt if there is none
    /// or it expired. Concurrent callers for one origin wait for a single
    /// fetch.
    pub async fn decision(&self, origin: &Origin) -> Decision {
        let slot = self.slot(origin);
        let mut state = self.loaded(&slot, origin).await;
        let now = self.clock.now();
        if let Some(d) = state.decision(now) {
            return d.clone();
        }
        if let Some(d) = state.reevaluate(now, &self.config.policy) {
            return d.clone();
        }
        let validators = state
            .validators()
            .map(|(etag, lm)| Validators {
                etag: etag.map(str::to_owned),
                last_modified: lm.map(str::to_owned),
            })
            .unwrap_or_default();
        let outcome = self.fetcher.fetch(origin, &validators).await;
        let now = self.clock.now();
        let decision = state.apply(&outcome, now, &self.config.policy).clone();
        self.save(&mut state).await;
        self.account(origin, &state);
        decision
    }

    /// Whether [`decision`](RobotsCache::decision) would answer without
    /// fetching robots.txt: a valid decision is in memory or in the store.
    /// A crawler whose robots.txt fetches are paced as requests asks this
    /// before letting a page's check fetch one on the page's turn.
    pub async fn decided(&self, origin: &Origin) -> bool {
        self.known(origin).await.is_some()
    }

    /// The valid decision in memory or in the store, without fetching.
    async fn known(&self, origin: &Origin) -> Option<Decision> {
        let slot = self.slot(origin);
        let mut state = self.loaded(&slot, origin).await;
        let now = self.clock.now();
        if let Some(d) = state.decision(now) {
            return Some(d.clone());
        }
        state.reevaluate(now, &self.config.policy).cloned()
    }

    /// A copy of the origin's state (history included), without fetching.
    pub async fn state(&self, origin: &Origin) -> OriginState {
        let slot = self.slot(origin);
        let state = self.loaded(&slot, origin).await;
        state.clone()
    }

    /// Tells the cache the site answered another request (see
    /// [`OriginState::note_host_answered`]).
    ///
    /// A crawler calls this for every page; the store is written for it
    /// only while robots.txt is failing, at most once a minute per origin
    /// ([`OriginState::answer_worth_saving`]). Each save writes the whole
    /// state, body included: it had been one write per origin crawled, for
    /// a time nothing reads while robots.txt answers; and while it failed,
    /// with pages closer than a minute apart, none after the first (the
    /// minute was counted from the last answer, not the last write), so
    /// the stored time was only as fresh as the last robots.txt retry.
    pub async fn note_host_answered(&self, origin: &Origin) {
        let slot = self.slot(origin);
        let mut state = self.loaded(&slot, origin).await;
        let now = self.clock.now();
        state.note_host_answered(now);
        if state.answer_worth_saving(now) {
            self.save(&mut state).await;
        }
    }

    /// May `user_agent` fetch `url`? Fetches the origin's robots.txt when
    /// needed. `/robots.txt` itself is always allowed.
    pub async fn check(&self, url: &str, user_agent: &str) -> Result<CheckResult, FetchError> {
        let (parsed, origin) = parse_origin(url)?;
        if parsed.path() == "/robots.txt" {
            return Ok(robots_txt_itself(url, &origin));
        }
        let decision = self.decision(&origin).await;
        Ok(answer(url, &origin, user_agent, &decision))
    }

    /// [`check`](Self::check) without fetching: `None` when
    /// [`decided`](Self::decided) would say no (so also for `/robots.txt`
    /// itself). One lookup answers both questions, and the decision comes
    /// with the answer, for what else the caller reads from the rules (a
    /// crawler pacing robots.txt as a request of its own asks this before
    /// each page).
    pub async fn check_decided(
        &self,
        url: &str,
        user_agent: &str,
    ) -> Result<Option<(CheckResult, Decision)>, FetchError> {
        let (parsed, origin) = parse_origin(url)?;
        self.decided_answer(url, &parsed, origin, user_agent).await
    }

    /// [`check_decided`](Self::check_decided) of a URL the caller holds
    /// parsed (a crawler's released page, parsed once for every use).
    pub async fn check_decided_url(
        &self,
        parsed: &url::Url,
        user_agent: &str,
    ) -> Result<Option<(CheckResult, Decision)>, FetchError> {
        let origin = Origin::of_url(parsed)?;
        self.decided_answer(parsed.as_str(), parsed, origin, user_agent)
            .await
    }

    /// What is decided of `url` (as given, and parsed).
    async fn decided_answer(
        &self,
        url: &str,
        parsed: &url::Url,
        origin: Origin,
        user_agent: &str,
    ) -> Result<Option<(CheckResult, Decision)>, FetchError> {
        let Some(decision) = self.known(&origin).await else {
            return Ok(None);
        };
        let check = if parsed.path() == "/robots.txt" {
            robots_txt_itself(url, &origin)
        } else {
            answer(url, &origin, user_agent, &decision)
        };
        Ok(Some((check, decision)))
    }
}

fn parse_origin(url: &str) -> Result<(url::Url, Origin), FetchError> {
    let parsed = url::Url::parse(url).map_err(|source| FetchError::UnparsableUrl {
        url: url.to_owned(),
        source,
    })?;
    let origin = Origin::of_url(&parsed)?;
    Ok((parsed, origin))
}

fn robots_txt_itself(url: &str, origin: &Origin) -> CheckResult {
    CheckResult {
        url: url.to_owned(),
        origin: origin.ascii_serialization(),
        allowed: true,
        access: AccessKind::RobotsTxt,
        rule: None,
        reason: "robots.txt itself is always allowed".into(),
        expires_at: None,
    }
}

/// What `decision` says of `url` for `user_agent`.
fn answer(url: &str, origin: &Origin, user_agent: &str, decision: &Decision) -> CheckResult {
    let (allowed, rule) = match &decision.access {
        Access::Rules(robots) => {
            let v = robots.explain(user_agent, url);
            (v.allowed, v.rule)
        }
        Access::AllowAll => (true, None),
        Access::DisallowAll => (false, None),
    };
    CheckResult {
        url: url.to_owned(),
        origin: origin.ascii_serialization(),
        allowed,
        access: decision.access.kind(),
        rule,
        reason: decision.reason.clone(),
        expires_at: Some(decision.expires_at),
    }
}
