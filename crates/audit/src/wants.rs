//! What identity checks need gathered before a batch of requests is fed
//! ([`Wants`]): the known bots' addresses, the key directories signed
//! requests name, and the pages unlisted bots' User-Agents name, so the
//! lookups are made together.

use std::net::IpAddr;

use mannerly_logs::Entry;

use crate::engine::{Auditor, Classified, Identify};

/// What a batch's identity checks need.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Wants {
    /// Which known bot (catalogue index) came from which address, each
    /// pair once, in the order first seen.
    pub addresses: Vec<(usize, IpAddr)>,
    /// The key directories signed requests name, each once.
    pub agents: Vec<String>,
    /// `(token, page)` of each unlisted bot whose User-Agent names its
    /// page, each once.
    pub pages: Vec<(String, String)>,
}

impl Wants {
    /// What `entries` need, as `auditor` classifies them.
    pub fn of<'a, 'b: 'a>(
        auditor: &mut Auditor<'_>,
        entries: impl IntoIterator<Item = &'a Entry<'b>>,
    ) -> Wants {
        Wants::gather(auditor, entries, |_| {})
    }

    /// What `entries` need, and each one's User-Agent classified, in
    /// order, to be fed with (`Auditor::feed_classified`).
    pub(crate) fn classified<'a, 'b: 'a>(
        auditor: &mut Auditor<'_>,
        entries: impl IntoIterator<Item = &'a Entry<'b>>,
    ) -> (Wants, Vec<Classified>) {
        let mut kinds = Vec::new();
        let wants = Wants::gather(auditor, entries, |k| kinds.push(k));
        (wants, kinds)
    }

    fn gather<'a, 'b: 'a>(
        auditor: &mut Auditor<'_>,
        entries: impl IntoIterator<Item = &'a Entry<'b>>,
        mut keep: impl FnMut(Classified),
    ) -> Wants {
        let mut w = Wants::default();
        for e in entries {
            let kind = auditor.classify(&e.user_agent);
            keep(kind);
            let (address, page) = auditor.wants(e, kind);
            w.addresses.extend(address);
            if let Some(p) = page {
                if !w.pages.contains(&p) {
                    w.pages.push(p);
                }
            }
            if let Some(a) = e.signature.as_ref().and_then(|s| s.agent.as_deref()) {
                if !w.agents.iter().any(|x| x == a) {
                    w.agents.push(a.to_owned());
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        w.addresses.retain(|a| seen.insert(*a));
        w
    }

    /// Has `identify` gather them.
    pub fn prepare(&self, identify: &mut dyn Identify) {
        identify.prepare(&self.addresses, &self.agents);
        identify.prepare_pages(&self.pages);
    }
}
