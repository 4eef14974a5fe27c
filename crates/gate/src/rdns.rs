//! Forward-confirmed reverse DNS for the gate, never on a request's path:
//! a request is judged with what the cache knows, and an address not yet
//! known is queued for a background check whose answer serves the
//! requests after it. The queue, the lookups in flight and the cache are
//! all bounded; a full queue drops the check (the next request asks
//! again).

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_botauth::fcrdns::{verify_ip, Dns};
use tokio::sync::{mpsc, Semaphore};

use crate::recent::Recent;

/// Addresses remembered at most.
pub const MAX_CACHED: usize = 200_000;
/// Checks waiting at most.
const QUEUE: usize = 4096;
/// Lookups in flight at once.
const PARALLEL: usize = 32;
/// One check's time limit.
const TIMEOUT: Duration = Duration::from_secs(4);
/// How long an answer is kept.
const ANSWER_TTL: Duration = Duration::from_secs(6 * 3600);
/// How long "could not tell" is kept before asking again.
const UNKNOWN_TTL: Duration = Duration::from_secs(60);

/// What a check found: confirmed, refuted, or not known (yet).
type Answer = (Option<bool>, Instant);

/// A cache of forward-confirmed reverse DNS, filled in the background.
pub struct ReverseDns {
    cache: Arc<Mutex<Recent<(usize, IpAddr), Answer>>>,
    queue: mpsc::Sender<(usize, IpAddr, Vec<String>)>,
}

impl ReverseDns {
    /// Starts the background checker on the current tokio runtime.
    pub fn start<D: Dns + 'static>(dns: D) -> ReverseDns {
        let cache = Arc::new(Mutex::new(Recent::new(MAX_CACHED)));
        let (queue, mut rx) = mpsc::channel::<(usize, IpAddr, Vec<String>)>(QUEUE);
        let dns = Arc::new(dns);
        let filled = cache.clone();
        tokio::spawn(async move {
            let limit = Arc::new(Semaphore::new(PARALLEL));
            while let Some((bot, ip, domains)) = rx.recv().await {
                let Ok(permit) = limit.clone().acquire_owned().await else {
                    break;
                };
                let (dns, cache) = (dns.clone(), filled.clone());
                tokio::spawn(async move {
                    let verdict =
                        tokio::time::timeout(TIMEOUT, verify_ip(ip, &domains, &*dns)).await;
                    let answer = verdict.ok().and_then(|v| v.confirmed());
                    lock(&cache).insert((bot, ip), (answer, Instant::now()));
                    drop(permit);
                });
            }
        });
        ReverseDns { cache, queue }
    }

    /// What is known of `ip` for the bot at catalogue index `bot` (whose
    /// operator names its hosts under `domains`); when nothing is, a check
    /// is queued and `None` answers now.
    pub fn known(&self, bot: usize, ip: IpAddr, domains: &[String]) -> Option<bool> {
        let mut cache = lock(&self.cache);
        if let Some((answer, at)) = cache.get_mut(&(bot, ip)) {
            let ttl = if answer.is_some() {
                ANSWER_TTL
            } else {
                UNKNOWN_TTL
            };
            if at.elapsed() < ttl {
                return *answer;
            }
        }
        // Asked once: until the answer comes, later requests do not queue it again.
        cache.insert((bot, ip), (None, Instant::now()));
        drop(cache);
        let _ = self.queue.try_send((bot, ip, domains.to_vec()));
        None
    }
}

impl ReverseDns {
    /// Addresses remembered now (at most [`MAX_CACHED`]).
    pub fn cached(&self) -> usize {
        lock(&self.cache).len()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
