//! Clients with a browser's User-Agent that behave like crawlers: many
//! pages and no assets (a browser loads a page's styles, scripts and
//! images), a pace too regular for a person, robots.txt read, disallowed
//! paths asked for.

use std::net::IpAddr;

use crate::report::Suspect;

/// Pages a client must ask for before it is judged.
pub const MIN_PAGES: u64 = 20;

/// One browser client (an address with a User-Agent), taken in time order.
/// An audit of a busy site holds millions and reads one for every browser
/// request, mostly from memory rather than cache: counts are 32-bit
/// (saturating; no one client asks four billion times in a log) so a
/// record is 48 bytes, not 88.
#[derive(Debug, Clone, Default)]
pub(crate) struct Client {
    requests: u32,
    pages: u32,
    assets: u32,
    disallowed: u32,
    read_robots: bool,
    /// The time of the latest request, once there is one.
    last: i64,
    sum: f64,
    sum_sq: f64,
}

/// Whether a request's target is robots.txt (with any query).
pub(crate) fn is_robots_txt(target: &str) -> bool {
    target
        .strip_prefix("/robots.txt")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('?'))
}

/// Whether a path asks for a page's asset rather than a page: by the
/// extension of its last segment (before any query), without allocating.
pub(crate) fn is_asset(path: &str) -> bool {
    let path = path.as_bytes();
    let end = memchr::memchr2(b'?', b'#', path).unwrap_or(path.len());
    let path = &path[..end];
    let Some(dot) = path.iter().rposition(|&b| b == b'.' || b == b'/') else {
        return false;
    };
    let ext = &path[dot + 1..];
    if path[dot] != b'.' || ext.len() > 11 {
        return false;
    }
    let mut lower = [0u8; 11];
    for (l, b) in lower.iter_mut().zip(ext) {
        *l = b.to_ascii_lowercase();
    }
    matches!(
        &lower[..ext.len()],
        b"css"
            | b"js"
            | b"mjs"
            | b"png"
            | b"jpg"
            | b"jpeg"
            | b"gif"
            | b"svg"
            | b"ico"
            | b"webp"
            | b"avif"
            | b"woff"
            | b"woff2"
            | b"ttf"
            | b"otf"
            | b"map"
            | b"webmanifest"
    )
}

/// Requests taken for clients, at most, before they are counted in.
const STEPS: usize = 1024;

/// The browser clients' records, numbered in the order first seen, with
/// the requests taken for them and not yet counted in. A record is read
/// from memory rather than cache for nearly every request, and counting
/// each as it is taken waits on that read alone; counted in together, in
/// the order taken, a run of them has its reads under way at once. The
/// records are read only through [`settled`](Clients::settled).
#[derive(Debug, Default)]
pub(crate) struct Clients {
    records: Vec<Client>,
    steps: Vec<Step>,
}

/// A request taken for client `client`: see [`Client::take`].
#[derive(Debug, Clone, Copy)]
struct Step {
    client: u32,
    robots: bool,
    asset: bool,
    disallowed: bool,
    millis: i64,
}

impl Clients {
    /// How many clients there are.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// A new client, numbered [`len`](Clients::len) before it.
    pub(crate) fn add(&mut self) {
        self.records.push(Client::default());
    }

    /// Takes a request (in time order) for client `client`, as
    /// [`Client::take`] does; an unknown number is ignored.
    pub(crate) fn take(
        &mut self,
        client: u32,
        robots: bool,
        asset: bool,
        disallowed: bool,
        millis: i64,
    ) {
        self.steps.push(Step {
            client,
            robots,
            asset,
            disallowed,
            millis,
        });
        if self.steps.len() >= STEPS {
            self.settle();
        }
    }

    fn settle(&mut self) {
        for s in self.steps.drain(..) {
            if let Some(c) = self.records.get_mut(s.client as usize) {
                c.take(s.robots, s.asset, s.disallowed, s.millis);
            }
        }
    }

    /// The records, every request taken counted in.
    pub(crate) fn settled(&mut self) -> &[Client] {
        self.settle();
        &self.records
    }
}

impl Client {
    /// Takes a request at `millis` (in time order): for robots.txt, an
    /// asset, or a page (disallowed to every crawler or not). Every request
    /// after the first adds a gap, so there are `requests - 1` of them.
    pub(crate) fn take(&mut self, robots: bool, asset: bool, disallowed: bool, millis: i64) {
        if self.requests > 0 {
            let gap = (millis - self.last).max(0) as f64 / 1000.0;
            self.sum += gap;
            self.sum_sq += gap * gap;
        }
        self.last = millis;
        self.requests = self.requests.saturating_add(1);
        if robots {
            self.read_robots = true;
        } else if asset {
            self.assets = self.assets.saturating_add(1);
        } else {
            self.pages = self.pages.saturating_add(1);
        }
        self.disallowed = self.disallowed.saturating_add(u32::from(disallowed));
    }

    fn variation(&self) -> Option<f64> {
        let gaps = self.requests.saturating_sub(1);
        if gaps < 2 {
            return None;
        }
        let n = f64::from(gaps);
        let mean = self.sum / n;
        let var = (self.sum_sq / n - mean * mean).max(0.0);
        (mean > 0.0).then(|| var.sqrt() / mean)
    }

    /// The client as a suspect, when its behaviour says crawler.
    pub(crate) fn judge(&self, client: Option<IpAddr>, user_agent: &str) -> Option<Suspect> {
        if u64::from(self.pages) < MIN_PAGES || self.assets > 0 {
            return None;
        }
        let variation = self.variation();
        let mut evidence = vec![format!(
            "{} pages and not one style, script or image",
            self.pages
        )];
        if let Some(v) = variation.filter(|v| *v < 0.3) {
            evidence.push(format!(
                "a regular pace (gap variation {v:.2}; people vary near 1)"
            ));
        }
        if self.read_robots {
            evidence.push("read robots.txt, which browsers do not".into());
        }
        if self.disallowed > 0 {
            evidence.push(format!("{} requests to disallowed paths", self.disallowed));
        }
        if evidence.len() < 2 {
            return None;
        }
        Some(Suspect {
            // Written out only for a suspect: most clients are not.
            client: client.map_or_else(|| "-".to_owned(), |ip| ip.to_string()),
            user_agent: user_agent.to_owned(),
            requests: self.requests.into(),
            pages: self.pages.into(),
            assets: self.assets.into(),
            disallowed: self.disallowed.into(),
            read_robots: self.read_robots,
            gap_variation: variation,
            evidence,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{is_asset, Client, Clients, STEPS};

    /// Requests taken through the clients' table, past several
    /// settlements and an unknown number, count as taken one by one.
    #[test]
    fn requests_counted_in_together_count_as_taken_one_by_one() {
        let mut table = Clients::default();
        let mut alone = vec![Client::default(); 7];
        for _ in 0..7 {
            table.add();
        }
        for i in 0..(3 * STEPS as i64 + 5) {
            let (client, robots, asset) = ((i * 5 % 7) as u32, i % 13 == 0, i % 4 == 0);
            let millis = i * 1_000 + (i * 7919 % 600);
            table.take(client, robots, asset, i % 3 == 0, millis);
            alone[client as usize].take(robots, asset, i % 3 == 0, millis);
        }
        table.take(99, false, false, false, 0);
        assert_eq!(format!("{:?}", table.settled()), format!("{alone:?}"));
    }

    #[test]
    fn a_clients_counts_stop_at_their_bound_rather_than_wrap() {
        let mut c = Client {
            requests: u32::MAX,
            pages: u32::MAX,
            disallowed: u32::MAX,
            ..Client::default()
        };
        c.take(false, false, true, 0);
        assert_eq!(
            (c.requests, c.pages, c.disallowed),
            (u32::MAX, u32::MAX, u32::MAX)
        );
    }

    #[test]
    fn an_asset_is_known_by_its_last_segments_extension() {
        for asset in [
            "/a.css",
            "/s/A.CSS?v=3",
            "/f.woff2#x",
            "/site.webmanifest",
            "/x/y.min.js",
        ] {
            assert!(is_asset(asset), "{asset}");
        }
        for page in [
            "/",
            "/page",
            "/a.css/page",
            "/p?f=a.css",
            "/x.html",
            "/x.webmanifests",
            "/y.",
        ] {
            assert!(!is_asset(page), "{page}");
        }
    }
}
