//! Where verifying keys come from, and what a key was vouched for by.

use std::sync::Arc;

use ed25519_dalek::VerifyingKey;

use crate::keys::Jwk;

/// Where verifying keys come from.
pub trait KeyLookup {
    /// The key with this `keyid`, from the directory at `agent` if given.
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk>;

    /// The key ready to verify with: its curve point decoded and its
    /// thumbprint computed. The default does that work on every call from
    /// [`lookup`](Self::lookup); a lookup that keeps keys (such as
    /// [`StaticKeys`]) does it once and hands out the result.
    fn resolve(&self, keyid: &str, agent: Option<&str>) -> Option<Arc<ReadyKey>> {
        self.lookup(keyid, agent)
            .map(|jwk| Arc::new(ReadyKey::new(jwk)))
    }

    /// Whether keys are found only through the agent's URL (a directory
    /// fetcher): then a signature naming no agent is unverified for want
    /// of one, not for an unknown key.
    fn needs_agent(&self) -> bool {
        false
    }
}

/// A key with the work verification needs done once: the Ed25519 point
/// decoded (and checked) and the RFC 7638 thumbprint computed.
#[derive(Debug, Clone)]
pub struct ReadyKey {
    /// The key as published.
    pub jwk: Jwk,
    /// The verifying key, or why the JWK is not a usable Ed25519 key.
    pub key: Result<VerifyingKey, crate::Error>,
    /// The RFC 7638 thumbprint.
    pub thumbprint: String,
    /// The identifier ([`agent_identifier`](crate::agent_identifier)) of
    /// the URL this key was fetched from, when it was: only then is a
    /// request it verifies attributed to that URL (§4.4).
    pub source: Option<String>,
}

impl ReadyKey {
    /// Decodes the key and computes its thumbprint.
    pub fn new(jwk: Jwk) -> ReadyKey {
        ReadyKey {
            key: jwk.verifying_key(),
            thumbprint: jwk.thumbprint(),
            jwk,
            source: None,
        }
    }
}

/// A fixed set of keys, found by thumbprint (decoded and hashed once, when
/// the set is made).
#[derive(Debug, Clone, Default)]
pub struct StaticKeys {
    keys: Vec<Arc<ReadyKey>>,
    by_label: bool,
}

impl StaticKeys {
    /// Keys to verify with, found by their RFC 7638 thumbprint only, which
    /// is computed from the key itself. A key's `kid` is only its
    /// publisher's claim: a directory could label its own key with another
    /// crawler's thumbprint, so `kid` is never used to find a key here.
    pub fn new(keys: Vec<Jwk>) -> StaticKeys {
        StaticKeys {
            keys: keys
                .into_iter()
                .map(|k| Arc::new(ReadyKey::new(k)))
                .collect(),
            by_label: false,
        }
    }

    /// Keys fetched from the JWK Set at `url`: a request they verify is
    /// attributed to `url`'s identifier when it names that URL.
    pub fn from_directory(url: &str, keys: Vec<Jwk>) -> StaticKeys {
        let source = crate::agent_identifier(url);
        StaticKeys {
            keys: keys
                .into_iter()
                .map(|k| {
                    Arc::new(ReadyKey {
                        source: source.clone(),
                        ..ReadyKey::new(k)
                    })
                })
                .collect(),
            by_label: false,
        }
    }

    /// Keys the verifier labelled itself (RFC 9421's `test-key-ed25519`):
    /// found by thumbprint, or by their `kid`. Never for keys that came
    /// from someone else, such as a key directory.
    pub fn labelled(keys: Vec<Jwk>) -> StaticKeys {
        StaticKeys {
            by_label: true,
            ..StaticKeys::new(keys)
        }
    }
}

impl StaticKeys {
    /// The keys, as given.
    pub fn jwks(&self) -> impl Iterator<Item = &Jwk> {
        self.keys.iter().map(|k| &k.jwk)
    }
}

impl KeyLookup for StaticKeys {
    fn lookup(&self, keyid: &str, agent: Option<&str>) -> Option<Jwk> {
        self.resolve(keyid, agent).map(|k| k.jwk.clone())
    }

    fn resolve(&self, keyid: &str, _agent: Option<&str>) -> Option<Arc<ReadyKey>> {
        self.keys
            .iter()
            .find(|k| k.thumbprint == keyid)
            .or_else(|| {
                self.keys
                    .iter()
                    .find(|k| self.by_label && k.jwk.kid.as_deref() == Some(keyid))
            })
            .cloned()
    }
}
