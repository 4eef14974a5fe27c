//! Web Bot Auth keys for the gate: the keys given (`--keys`), and the key
//! directories signed requests name, fetched through `mannerly-botauth`'s
//! [`DirectoryClient`] (https only, no private addresses, capped in bytes,
//! keys and time).
//!
//! A directory is on a request's critical path at most once: the first
//! request naming it waits for its fetch, and every request naming it
//! meanwhile waits for that same fetch (single flight). Afterwards its
//! keys are served from memory, and refreshed in the background when they
//! are older than [`REFRESH`]. A directory that hangs or answers too much
//! is cut off by the client's timeout and size cap; only the requests
//! naming it wait, and its failure is remembered, so the next ones do not.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_botauth::client::DirectoryClient;
use mannerly_botauth::{
    named_agents, summarise, verify_each, Jwk, KeyLookup, Message, Outcome, ReadyKey, StaticKeys,
    VerifyConfig,
};

use crate::recent::Recent;

/// Keys older than this are refreshed in the background.
pub const REFRESH: Duration = Duration::from_secs(3600);
/// Directories remembered at most.
const MAX_DIRECTORIES: usize = 10_000;
/// Distinct directories one request may name and have fetched.
const MAX_PER_REQUEST: usize = 4;

/// One directory's keys as the gate holds them.
#[derive(Default)]
struct Slot {
    /// The keys and when they were had; `None` until the first fetch
    /// ends, or when it failed.
    keys: tokio::sync::Mutex<Option<(Arc<StaticKeys>, Instant)>>,
    refreshing: AtomicBool,
}

/// Where the gate's verifying keys come from.
pub struct Keys {
    fixed: Option<StaticKeys>,
    client: Option<Arc<DirectoryClient>>,
    slots: Mutex<Recent<String, Arc<Slot>>>,
}

impl Keys {
    /// `fixed` keys (given), and a directory client (`None` offline).
    pub fn new(fixed: Option<StaticKeys>, client: Option<DirectoryClient>) -> Arc<Keys> {
        Arc::new(Keys {
            fixed,
            client: client.map(Arc::new),
            slots: Mutex::new(Recent::new(MAX_DIRECTORIES)),
        })
    }

    /// Verifies a signed request: with the given keys when there are any,
    /// else with the keys of the directories its signatures name.
    pub async fn verify(self: &Arc<Self>, msg: &Message, config: &VerifyConfig) -> Outcome {
        if let Some(fixed) = &self.fixed {
            return summarise(verify_each(msg, None, fixed, config));
        }
        let (_, agents) = named_agents(msg, config);
        let mut sets = ByAgent::default();
        for agent in agents.into_iter().take(MAX_PER_REQUEST) {
            if let Some(keys) = self.directory(&agent).await {
                sets.0.insert(agent, keys);
            }
        }
        summarise(verify_each(msg, None, &sets, config))
    }

    /// A directory's keys: from memory, or fetched once for everyone
    /// waiting; stale keys are served while a refresh runs.
    async fn directory(self: &Arc<Self>, agent: &str) -> Option<Arc<StaticKeys>> {
        let client = self.client.as_ref()?;
        let url = DirectoryClient::directory_url(agent).ok()?.to_string();
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            slots
                .entry(url.clone(), || Arc::new(Slot::default()))
                .clone()
        };
        let mut held = slot.keys.lock().await;
        if let Some((keys, at)) = held.as_ref() {
            if at.elapsed() > REFRESH && !slot.refreshing.swap(true, Ordering::AcqRel) {
                let (client, slot, url) = (client.clone(), slot.clone(), url.clone());
                tokio::spawn(async move {
                    if let Ok(k) = client.keys(&url).await {
                        *slot.keys.lock().await = Some((
                            Arc::new(StaticKeys::from_directory(&url, k)),
                            Instant::now(),
                        ));
                    }
                    slot.refreshing.store(false, Ordering::Release);
                });
            }
            return Some(keys.clone());
        }
        // The client remembers a failure for a minute: asking again
        // meanwhile answers at once.
        let keys = client.keys(&url).await.ok()?;
        let keys = Arc::new(StaticKeys::from_directory(&url, keys));
        *held = Some((keys.clone(), Instant::now()));
        Some(keys)
    }
}

/// Keys by the agent that named their directory.
#[derive(Default)]
struct ByAgent(HashMap<String, Arc<StaticKeys>>);

impl KeyLookup for ByAgent {
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk> {
        self.resolve(keyid, agent).map(|k| k.jwk.clone())
    }

    fn resolve(&self, keyid: &str, agent: Option<&str>) -> Option<Arc<ReadyKey>> {
        self.0.get(agent?)?.resolve(keyid, agent)
    }

    fn needs_agent(&self) -> bool {
        true
    }
}
