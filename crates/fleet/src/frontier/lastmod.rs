//! Sitemap lastmods every worker can read. The worker that reads a
//! sitemap tells the store what it said of each URL (a hash per partition,
//! `lastmod`, beside the URL's host); a worker that releases one of those
//! URLs asks. A recrawl then decides by lastmod whichever worker holds the
//! page, and keeps the lastmod with it for the next recrawl.

use std::collections::BTreeMap;

use super::*;

impl<C: FleetConnection> FleetFrontier<C> {
    /// The commands that write `entries` (URL, lastmod), one per partition.
    fn lastmod_writes(&self, entries: &[(String, String)]) -> Vec<(u32, redis::Cmd)> {
        let mut by_p: BTreeMap<u32, redis::Cmd> = BTreeMap::new();
        for (url, lastmod) in entries {
            let Ok(key) = self.keyer.key(url) else {
                continue;
            };
            let p = self.layout.partition_of(&key);
            by_p.entry(p)
                .or_insert_with(|| {
                    let mut c = redis::cmd("HSET");
                    c.arg(self.layout.key(p, "lastmod"));
                    c
                })
                .arg(url)
                .arg(lastmod);
        }
        by_p.into_iter().collect()
    }

    /// Tells the store what a sitemap said of these URLs, in front of
    /// the next call (the one that queues them).
    pub fn tell_lastmods(&mut self, entries: &[(String, String)]) {
        let mut cmds = self.lastmod_writes(entries);
        self.lastmods_out.append(&mut cmds);
    }

    /// What any worker's sitemaps said of these URLs, in order (`None`:
    /// nothing known), in one round trip.
    pub async fn ask_lastmods(
        &mut self,
        urls: &[&str],
    ) -> Result<Vec<Option<String>>, FrontierError> {
        let mut by_p: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, url) in urls.iter().enumerate() {
            if let Ok(key) = self.keyer.key(url) {
                by_p.entry(self.layout.partition_of(&key))
                    .or_default()
                    .push(i);
            }
        }
        let mut cmds = Vec::with_capacity(by_p.len());
        for (p, idx) in &by_p {
            let mut c = redis::cmd("HMGET");
            c.arg(self.layout.key(*p, "lastmod"));
            for i in idx {
                c.arg(urls[*i]);
            }
            cmds.push((*p, c));
        }
        let mut out = vec![None; urls.len()];
        if cmds.is_empty() {
            return Ok(out);
        }
        let replies = self.exec(cmds).await?;
        for ((_, idx), v) in by_p.iter().zip(replies) {
            let got: Vec<Option<String>> = redis::from_redis_value(v.clone())
                .map_err(|_| self.corrupt(format!("lastmod: {v:?}")))?;
            for (i, l) in idx.iter().zip(got) {
                out[*i] = l;
            }
        }
        Ok(out)
    }
}
