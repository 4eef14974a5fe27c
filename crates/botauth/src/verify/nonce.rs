//! Replay protection: the nonces seen, per key, until their signatures expire.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use crate::UnixMillis;

/// What the nonce cache holds: (key, nonce) to expiry, the same in
/// expiry order, and nonces held per key.
#[derive(Debug, Default)]
struct Nonces {
    by_nonce: HashMap<(String, String), UnixMillis>,
    by_time: BTreeSet<(UnixMillis, String, String)>,
    per_key: HashMap<String, usize>,
}

/// Nonces seen, per key, each kept until its signature expires (then a
/// replay is refused as expired anyway).
///
/// # Policy
///
/// - A nonce is remembered per signing key (its thumbprint): one key's
///   nonces never collide with, or push out, another's.
/// - A live nonce is never forgotten. When the cache holds `capacity` live
///   nonces, or a key holds its share (`per_key`), a new signature is
///   refused ([`NonceCheck::Full`], [`Rejection::ReplayCacheFull`](crate::Rejection::ReplayCacheFull)) until
///   some expire: an attacker with a valid key of their own can fill only
///   their own share, never evict a victim's nonce to replay it.
/// - A signature without a nonce cannot be replay-checked: with replay
///   protection on it is refused ([`Rejection::NoNonce`](crate::Rejection::NoNonce)) unless
///   [`VerifyConfig::allow_nonceless`](crate::VerifyConfig::allow_nonceless) is set, in which case it may be
///   replayed until it expires (60 s for signatures this crate makes).
#[derive(Debug)]
pub struct NonceCache {
    inner: Mutex<Nonces>,
    capacity: usize,
    per_key: usize,
}

/// The answer of [`NonceCache::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceCheck {
    /// Not seen before: remembered until it expires.
    Fresh,
    /// Seen before, for the same key, and not expired: a replay.
    Replayed,
    /// No room without forgetting a live nonce: refuse the signature.
    Full,
}

impl NonceCache {
    /// A cache of at most `capacity` live nonces (at least 1), each key
    /// holding at most an eighth of them (at least 1).
    pub fn new(capacity: usize) -> NonceCache {
        let capacity = capacity.max(1);
        NonceCache::with_per_key(capacity, capacity / 8)
    }

    /// A cache of at most `capacity` live nonces, at most `per_key` of them
    /// for any one key.
    pub fn with_per_key(capacity: usize, per_key: usize) -> NonceCache {
        NonceCache {
            inner: Mutex::new(Nonces::default()),
            capacity: capacity.max(1),
            per_key: per_key.max(1),
        }
    }

    /// Records `key`'s nonce, valid until `expires`: whether it is fresh,
    /// a replay, or refused for want of room (see the policy above).
    pub fn insert(
        &self,
        key: &str,
        nonce: &str,
        expires: UnixMillis,
        now: UnixMillis,
    ) -> NonceCheck {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let n = &mut *g;
        // Only expired nonces go.
        while let Some((t, k, v)) = n.by_time.first().cloned() {
            if t >= now {
                break;
            }
            n.by_time.remove(&(t, k.clone(), v.clone()));
            n.by_nonce.remove(&(k.clone(), v));
            if let Some(c) = n.per_key.get_mut(&k) {
                *c -= 1;
                if *c == 0 {
                    n.per_key.remove(&k);
                }
            }
        }
        let id = (key.to_owned(), nonce.to_owned());
        if n.by_nonce.contains_key(&id) {
            return NonceCheck::Replayed;
        }
        let held = n.per_key.get(key).copied().unwrap_or(0);
        if n.by_nonce.len() >= self.capacity || held >= self.per_key {
            return NonceCheck::Full;
        }
        n.by_time.insert((expires, id.0.clone(), id.1.clone()));
        n.by_nonce.insert(id, expires);
        *n.per_key.entry(key.to_owned()).or_default() += 1;
        NonceCheck::Fresh
    }

    /// Nonces held.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .by_nonce
            .len()
    }

    /// Whether no nonce is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
