//! The audit's identity checks ([`Checks`]): what is needed is gathered
//! before each batch of log lines ([`Identify::prepare`]), and each line
//! is then named from what was gathered, without I/O.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use std::net::SocketAddr;

use mannerly_audit::{Catalogue, Checked, Identify, Identity, Known};
use mannerly_botauth::client::{DirectoryClient, DirectoryConfig};
use mannerly_botauth::fcrdns::{verify_ip, HickoryDns, IpRanges};
use mannerly_botauth::history::KeyHistory;
use mannerly_botauth::identity_check::{self, CheckOptions};
use mannerly_botauth::published;
use mannerly_botauth::{verify_request, Message, StaticKeys, UnixMillis, VerifyConfig};
use mannerly_logs::Entry;

use crate::{agent_url, signature_identity, IdentityError};

/// Reverse lookups in flight at once, at most.
const PARALLEL: usize = 32;
/// How long one address's check may take.
const DNS_TIMEOUT: Duration = Duration::from_secs(4);

/// How the checks are made.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ChecksConfig {
    /// No reverse DNS, no downloads: only what is given and cached.
    pub offline: bool,
    /// The DNS server to ask (the system's when `None`).
    pub dns: Option<SocketAddr>,
    /// Where range files and the key history are cached.
    pub cache: PathBuf,
    /// Ranges given per token (lower case), over the operators' own.
    pub given: HashMap<String, IpRanges>,
    /// Keys given for every signed request (else its directory's).
    pub keys: Option<StaticKeys>,
    /// How an unlisted crawler's page, and the ranges it links, are
    /// fetched (`None`: they are not; always so offline).
    pub pages: Option<CheckOptions>,
}

impl ChecksConfig {
    /// Online checks, cached under `cache`.
    pub fn new(cache: PathBuf) -> ChecksConfig {
        ChecksConfig {
            cache,
            ..ChecksConfig::default()
        }
    }
}

/// The audit's identity checks: an [`Identify`] that gathers signatures'
/// keys, operators' ranges and reverse DNS before each batch.
pub struct Checks {
    catalogue: &'static Catalogue,
    offline: bool,
    given: HashMap<String, IpRanges>,
    /// Ranges per catalogue entry (by address of the entry), once loaded.
    ranges: HashMap<usize, Option<IpRanges>>,
    /// What reverse DNS said of each address: confirmed, refuted, or
    /// nothing (`None`).
    rdns: HashMap<(usize, IpAddr), Option<bool>>,
    dns: Option<HickoryDns>,
    rt: OwnRuntime,
    cache: PathBuf,
    notes: Vec<String>,
    lookups: u64,
    /// Keys given with --wba-keys.
    wba_keys: Option<StaticKeys>,
    /// The directories signed requests named, checked in this audit.
    checked: std::collections::HashSet<String>,
    /// Every directory's keys with when they were seen, kept between
    /// audits: a request is verified with the keys served at its time.
    history: KeyHistory,
    directory_client: Option<DirectoryClient>,
    /// How unlisted crawlers' pages are fetched.
    page_options: Option<CheckOptions>,
    /// The ranges each unlisted crawler's page links, by (token, page)
    /// (`None`: it links none that could be read).
    page_ranges: HashMap<(String, String), Option<IpRanges>>,
}

/// The checks' own runtime, shut down without waiting when they are
/// dropped: a server keeps checks in its state and drops them inside its
/// own runtime, where waiting would panic.
struct OwnRuntime {
    handle: tokio::runtime::Handle,
    rt: Option<tokio::runtime::Runtime>,
}

impl OwnRuntime {
    fn new(rt: tokio::runtime::Runtime) -> OwnRuntime {
        OwnRuntime {
            handle: rt.handle().clone(),
            rt: Some(rt),
        }
    }

    fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }
}

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The most crawler pages one audit follows (each two fetches at most).
const MAX_PAGES: usize = 64;

fn key(k: &Known) -> usize {
    std::ptr::from_ref(k) as usize
}

impl Checks {
    /// Checks of the crawlers `catalogue` names, made as `config` says.
    pub fn new(
        config: ChecksConfig,
        catalogue: &'static Catalogue,
    ) -> Result<Checks, IdentityError> {
        let ChecksConfig {
            offline,
            dns,
            cache,
            given,
            keys,
            pages,
        } = config;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(IdentityError::Runtime)?;
        let dns = match (offline, dns) {
            (true, _) => None,
            (false, Some(addr)) => Some(HickoryDns::with_server(addr)),
            (false, None) => rt.block_on(async { HickoryDns::system().ok() }),
        };
        let directory_client = match offline {
            true => None,
            false => Some(DirectoryClient::new(DirectoryConfig::default())?),
        };
        let history = KeyHistory::load(&cache.join("key-history.json"));
        Ok(Checks {
            wba_keys: keys,
            checked: std::collections::HashSet::new(),
            history,
            directory_client,
            page_options: pages.filter(|_| !offline),
            page_ranges: HashMap::new(),
            catalogue,
            offline,
            given,
            ranges: HashMap::new(),
            rdns: HashMap::new(),
            dns,
            rt: OwnRuntime::new(rt),
            cache,
            notes: Vec::new(),
            lookups: 0,
        })
    }

    /// The CIDR ranges a token's requests were checked against (given, or
    /// its operator's as loaded), for `--rules`.
    pub fn ranges_of(&self, token: &str) -> Option<Vec<String>> {
        if let Some(r) = self.given.get(&token.to_ascii_lowercase()) {
            return Some(r.cidrs());
        }
        let known = (0..self.catalogue.len())
            .filter_map(|i| self.catalogue.get(i))
            .find(|k| k.token.eq_ignore_ascii_case(token))?;
        self.ranges.get(&key(known))?.as_ref().map(IpRanges::cidrs)
    }

    /// How identities were checked, for the report (the key history is
    /// saved then).
    pub fn notes(&mut self) -> Vec<String> {
        self.history.save();
        let mut notes = std::mem::take(&mut self.notes);
        let mut given: Vec<String> = self
            .given
            .iter()
            .map(|(token, r)| format!("{token}: {} IP ranges given (--ip-ranges)", r.len()))
            .collect();
        given.sort();
        notes.splice(0..0, given);
        notes.push(match (&self.dns, self.offline) {
            (_, true) => "offline: no reverse-DNS checks, no downloads".to_owned(),
            (None, false) => "no DNS resolver: no reverse-DNS checks".to_owned(),
            (Some(_), false) => format!(
                "{} addresses checked by forward-confirmed reverse DNS",
                self.lookups
            ),
        });
        notes
    }

    /// Whether an unlisted crawler's request came from the ranges its
    /// User-Agent's page links (`None`: no such ranges known).
    fn in_page_ranges(&self, entry: &Entry<'_>) -> Option<bool> {
        if self.page_ranges.is_empty() {
            return None;
        }
        let ip = entry.client?;
        let ua: &str = &entry.user_agent;
        let page = mannerly_robots::page_named(ua)?;
        let token = mannerly_robots::product_token(ua)?.to_ascii_lowercase();
        let ranges = self.page_ranges.get(&(token, page.to_owned()))?.as_ref()?;
        Some(ranges.contains(ip))
    }

    /// Loads a crawler's ranges: a given file, else its operator's files
    /// from the cache or the network.
    fn load_ranges(&mut self, k: &Known) -> Option<IpRanges> {
        if let Some(r) = self.given.get(&k.token.to_ascii_lowercase()) {
            return Some(r.clone());
        }
        let mut cidrs: Option<IpRanges> = None;
        for url in &k.ranges {
            match self.fetch_ranges(url) {
                Ok((text, age)) => match IpRanges::parse(&text) {
                    Ok(r) => {
                        self.notes.push(format!(
                            "{}: IP ranges from {url} ({} of them, {})",
                            k.token,
                            r.len(),
                            age.map_or("downloaded now".into(), |a| format!(
                                "cached {} h ago",
                                a.as_secs() / 3600
                            ))
                        ));
                        let merged = cidrs.take().map_or(r.clone(), |c| c.merge(&r));
                        cidrs = Some(merged);
                    }
                    Err(e) => self.notes.push(format!("{}: {url}: {e}", k.token)),
                },
                Err(e) => self
                    .notes
                    .push(format!("{}: no ranges from {url}: {e}", k.token)),
            }
        }
        cidrs
    }

    /// A range file from the cache (with its age) or the network.
    fn fetch_ranges(&self, url: &str) -> Result<(String, Option<Duration>), String> {
        let file = self
            .rt
            .block_on(published::range_file(url, &self.cache, self.offline))
            .map_err(|e| e.to_string())?;
        Ok((file.text, file.age))
    }

    fn resolve(&mut self, queue: Vec<(usize, IpAddr, Vec<String>)>) {
        let Some(dns) = &self.dns else { return };
        self.lookups += queue.len() as u64;
        let answers = self.rt.block_on(async {
            let limit = tokio::sync::Semaphore::new(PARALLEL);
            let checks = queue.into_iter().map(|(k, ip, domains)| {
                let limit = &limit;
                async move {
                    let _permit = limit.acquire().await;
                    let verdict =
                        tokio::time::timeout(DNS_TIMEOUT, verify_ip(ip, &domains, dns)).await;
                    let answer = verdict.ok().and_then(|v| v.confirmed());
                    ((k, ip), answer)
                }
            });
            futures_util::future::join_all(checks).await
        });
        self.rdns.extend(answers);
    }
}

/// The request as Web Bot Auth signed it (a log records no scheme: https,
/// which Web Bot Auth requires).
fn message(entry: &Entry<'_>) -> Option<Message> {
    let sig = entry.signature.as_ref()?;
    let host = entry.host.as_deref()?;
    let mut m = Message::new(&entry.method, &format!("https://{host}{}", entry.target))
        .header("Host", host)
        .header("Signature", &sig.signature)
        .header("Signature-Input", &sig.input);
    if let Some(agent) = &sig.agent {
        m = m.header("Signature-Agent", agent);
    }
    Some(m)
}

impl Checks {
    /// A signed request's identity: verified by its signature, spoofed
    /// when the signature fails, unverified when no key can be had.
    fn signed(&self, entry: &Entry<'_>) -> Option<Identity> {
        let msg = message(entry)?;
        let at = UnixMillis(u64::try_from(entry.stamp.millis).ok()?);
        let mut config = VerifyConfig::at(at);
        // The log's time is as precise as the log: allow for its rounding.
        config.max_skew = i64::from(entry.stamp.precision_ms.div_ceil(1000));
        let agent = entry.signature.as_ref()?.agent.as_deref();
        let served;
        let keys = match &self.wba_keys {
            Some(k) => k,
            None => {
                // The keys its directory served at the request's time.
                let url = agent_url(agent?);
                if !self.history.knows(url) {
                    return None;
                }
                served = StaticKeys::from_directory(url, self.history.keys_at(url, at.0));
                &served
            }
        };
        signature_identity(&verify_request(&msg, keys, &config))
    }

    /// Fetches the key directories signed requests named.
    fn fetch_directories(&mut self, agents: &[String]) {
        let Some(client) = &self.directory_client else {
            return;
        };
        for agent in agents {
            let url = agent_url(agent).to_owned();
            if !self.checked.insert(url.clone()) || !url.starts_with("https://") {
                continue;
            }
            match self.rt.block_on(client.keys(&url)) {
                Ok(keys) => self.history.observe(&url, &keys, UnixMillis::now().0),
                Err(e) => self
                    .notes
                    .push(format!("Web Bot Auth directory {url}: {e}")),
            }
        }
    }
}

impl Identify for Checks {
    fn identify(&self, bot: Option<&Known>, entry: &Entry<'_>) -> Identity {
        let signature = self.signed(entry);
        let (Some(bot), Some(ip)) = (bot, entry.client) else {
            return Checked {
                signature,
                in_ranges: self.in_page_ranges(entry),
                ..Checked::default()
            }
            .identity();
        };
        let k = key(bot);
        Checked {
            signature,
            in_ranges: self
                .ranges
                .get(&k)
                .and_then(|r| r.as_ref())
                .map(|r| r.contains(ip)),
            rdns: self.rdns.get(&(k, ip)).copied().flatten(),
        }
        .identity()
    }

    fn prepare_pages(&mut self, pages: &[(String, String)]) {
        let Some(o) = self.page_options.clone() else {
            return;
        };
        let mut new: Vec<&(String, String)> = Vec::new();
        for p in pages {
            let k = (p.0.to_ascii_lowercase(), p.1.clone());
            let room = self.page_ranges.len() + new.len() < MAX_PAGES;
            if room && !self.page_ranges.contains_key(&k) && !new.contains(&p) {
                new.push(p);
            }
        }
        // All at once, each bounded by the options' timeout.
        let fetches = new
            .iter()
            .map(|(token, page)| identity_check::page_ranges(page, token, &o));
        let got = self.rt.block_on(futures_util::future::join_all(fetches));
        for ((token, page), got) in new.into_iter().zip(got) {
            let note = match &got {
                Ok(r) => format!("{token}: {} IP ranges linked from {page}", r.len()),
                Err(e) => format!("{token}: no ranges from its page: {e}"),
            };
            self.notes.push(note);
            let k = (token.to_ascii_lowercase(), page.clone());
            self.page_ranges
                .insert(k, got.ok().filter(|r| !r.is_empty()));
        }
    }

    fn pages_answer(&mut self, pages: &[String]) -> Vec<Option<Result<u16, String>>> {
        let Some(o) = self.page_options.clone() else {
            return vec![None; pages.len()];
        };
        // A User-Agent's page may be http (Googlebot's is): asking whether
        // it answers needs no more trust than reading it.
        let o = CheckOptions {
            allow_http: true,
            ..o
        };
        let asked = &pages[..pages.len().min(MAX_PAGES)];
        let fetches = asked
            .iter()
            .map(|page| identity_check::page_answers(page, &o));
        let mut got: Vec<Option<Result<u16, String>>> = self
            .rt
            .block_on(futures_util::future::join_all(fetches))
            .into_iter()
            .map(Some)
            .collect();
        got.resize(pages.len(), None);
        got
    }

    fn prepare(&mut self, wanted: &[(usize, IpAddr)], agents: &[String]) {
        self.fetch_directories(agents);
        let mut queue = Vec::new();
        for &(index, ip) in wanted {
            let Some(known) = self.catalogue.get(index) else {
                continue;
            };
            let k = key(known);
            if !self.ranges.contains_key(&k) {
                let r = self.load_ranges(known);
                self.ranges.insert(k, r);
            }
            let in_ranges = self
                .ranges
                .get(&k)
                .and_then(|r| r.as_ref())
                .is_some_and(|r| r.contains(ip));
            if in_ranges
                || known.rdns.is_empty()
                || self.dns.is_none()
                || self.rdns.contains_key(&(k, ip))
            {
                continue;
            }
            self.rdns.insert((k, ip), None);
            queue.push((k, ip, known.rdns.clone()));
        }
        if !queue.is_empty() {
            self.resolve(queue);
        }
    }
}
