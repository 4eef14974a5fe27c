//! Connecting to the fleet's server, the crawl-wide values every worker
//! reads (settings), and the robots.txt states shared by the fleet.

use mannerly_fetch::policy::StoredState;
use mannerly_fetch::{Origin, Store, StoreError, StoreFuture};
use mannerly_polite::frontier::FrontierError;
use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{Pipeline, RedisResult, Value};

use crate::layout::Layout;

/// A connection that reconnects by itself after a server restarts (and on
/// a Cluster follows its slots from node to node), and retries a call that
/// failed because the connection did (see [`Retrying`]).
pub type Connection = Retrying<Link>;

/// A connection to a standalone server or to a Redis Cluster, chosen by
/// [`connect`] from what the server says it is.
#[derive(Clone)]
pub enum Link {
    /// One server (or a primary with replicas behind it).
    Single(ConnectionManager),
    /// A Cluster: each command goes to the node serving its key's slot.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> redis::RedisFuture<'a, Value> {
        match self {
            Link::Single(c) => c.req_packed_command(cmd),
            Link::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Link::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Single(c) => c.get_db(),
            Link::Cluster(c) => c.get_db(),
        }
    }
}

/// A connection the fleet can run on: one that says whether a pipeline may
/// mix keys of different slots (a standalone server takes any pipeline; a
/// Cluster connection sends a pipeline to one node, so the fleet's reads
/// that span partitions go as one pipeline per partition there).
pub trait FleetConnection: ConnectionLike + Clone + Send + Sync + 'static {
    /// Whether every pipeline must keep to one slot.
    fn one_slot_per_pipeline(&self) -> bool {
        false
    }

    /// A number that changes whenever this connection may have reached a
    /// new incarnation of its server (a restart, a failover) since it was
    /// last read, and so a server that may have lost writes it had
    /// acknowledged; `None` when that cannot be seen from here. A worker
    /// keeps its memory of seen URLs only while this stays the same (see
    /// the crate's `seen` module).
    fn incarnation(&self) -> Option<u64> {
        None
    }
}

/// A multiplexed connection never reconnects: once its server is gone,
/// every call fails. So it always reaches the same incarnation.
impl FleetConnection for MultiplexedConnection {
    fn incarnation(&self) -> Option<u64> {
        Some(0)
    }
}
/// A connection manager and a Cluster connection reconnect by themselves
/// (a manager on RESP3 even without a failed call; a Cluster connection
/// follows a failover to the new primary): they cannot tell.
impl FleetConnection for ConnectionManager {}
impl FleetConnection for ClusterConnection {
    fn one_slot_per_pipeline(&self) -> bool {
        true
    }
}
impl FleetConnection for Link {
    fn one_slot_per_pipeline(&self) -> bool {
        matches!(self, Link::Cluster(_))
    }
}
impl<C: FleetConnection> FleetConnection for Retrying<C> {
    fn one_slot_per_pipeline(&self) -> bool {
        self.inner.one_slot_per_pipeline()
    }

    /// The calls that failed or were refused so far, when every
    /// reconnection of the connection inside follows one of them
    /// ([`Retrying::seeing_reconnects`]), or on top of what it tells.
    fn incarnation(&self) -> Option<u64> {
        let base = if self.reconnects_seen {
            Some(0)
        } else {
            self.inner.incarnation()
        };
        base.map(|b| b + self.failures.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// How many per-partition pipelines a Cluster connection has in flight at
/// once for a read that spans partitions.
const SPREAD: usize = 64;

/// Runs the commands `add` puts in a pipeline for each partition of
/// `parts` (each partition's keys in one slot, and the same number of
/// replies for each, none ignored) and returns each partition's replies,
/// in the order of `parts`. On a standalone server that is one pipeline
/// per 512 partitions; on a Cluster, one pipeline per partition, [`SPREAD`]
/// at a time, each to the node serving that partition's slot.
pub(crate) async fn across<C: FleetConnection>(
    con: &mut C,
    parts: &[u32],
    add: impl Fn(&mut Pipeline, u32),
) -> RedisResult<Vec<Vec<Value>>> {
    use futures_util::stream::{self, StreamExt, TryStreamExt};
    if con.one_slot_per_pipeline() {
        let pipes: Vec<Pipeline> = parts
            .iter()
            .map(|&p| {
                let mut pipe = redis::pipe();
                add(&mut pipe, p);
                pipe
            })
            .collect();
        let con = &*con;
        return stream::iter(pipes)
            .map(|pipe| {
                let mut con = con.clone();
                async move { pipe.query_async::<Vec<Value>>(&mut con).await }
            })
            .buffered(SPREAD)
            .try_collect()
            .await;
    }
    let mut out = Vec::with_capacity(parts.len());
    for chunk in parts.chunks(512) {
        let mut pipe = redis::pipe();
        let mut counts = Vec::with_capacity(chunk.len());
        for &p in chunk {
            let before = pipe.len();
            add(&mut pipe, p);
            counts.push(pipe.len() - before);
        }
        let mut replies = pipe.query_async::<Vec<Value>>(con).await?.into_iter();
        for n in counts {
            out.push(replies.by_ref().take(n).collect());
        }
    }
    Ok(out)
}

/// Runs `cmds`, each on the partition beside it, and returns their
/// replies in order. On a standalone server that is one pipeline (one
/// round trip) in the given order; on a Cluster, one pipeline per
/// partition, [`SPREAD`] at a time, each in the given order (commands on
/// different partitions touch different keys, so only the order within a
/// partition matters).
pub(crate) async fn run_on<C: FleetConnection>(
    con: &mut C,
    cmds: &[(u32, redis::Cmd)],
) -> RedisResult<Vec<Value>> {
    use futures_util::stream::{self, StreamExt, TryStreamExt};
    if cmds.is_empty() {
        return Ok(Vec::new());
    }
    if !con.one_slot_per_pipeline() {
        let mut pipe = redis::pipe();
        for (_, c) in cmds {
            pipe.add_command(c.clone());
        }
        return pipe.query_async::<Vec<Value>>(con).await;
    }
    // Group by partition, keeping each command's place.
    let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
    for (i, (p, _)) in cmds.iter().enumerate() {
        match groups.iter_mut().find(|(q, _)| q == p) {
            Some((_, v)) => v.push(i),
            None => groups.push((*p, vec![i])),
        }
    }
    let pipes: Vec<(Vec<usize>, Pipeline)> = groups
        .into_iter()
        .map(|(_, idx)| {
            let mut pipe = redis::pipe();
            for &i in &idx {
                pipe.add_command(cmds[i].1.clone());
            }
            (idx, pipe)
        })
        .collect();
    let con = &*con;
    let answers: Vec<(Vec<usize>, Vec<Value>)> = stream::iter(pipes)
        .map(|(idx, pipe)| {
            let mut con = con.clone();
            async move {
                Ok::<_, redis::RedisError>((idx, pipe.query_async::<Vec<Value>>(&mut con).await?))
            }
        })
        .buffered(SPREAD)
        .try_collect()
        .await?;
    let mut out = vec![Value::Nil; cmds.len()];
    for (idx, replies) in answers {
        for (i, v) in idx.into_iter().zip(replies) {
            out[i] = v;
        }
    }
    Ok(out)
}

/// Retries calls that failed for want of a server (connection refused,
/// dropped or timed out, or the server still loading its data after a
/// restart) for up to about 30 s, backing off from 50 ms to 2 s; other
/// errors are returned at once.
///
/// A retried step may already have run once (the answer was lost, not the
/// call): every step is safe to repeat. An enqueue is then a duplicate, a
/// completion is stale, and a release run twice leaves one flight that no
/// worker holds, which its lease gives back: at worst a URL is fetched
/// twice, never lost.
#[derive(Clone)]
pub struct Retrying<C> {
    inner: C,
    /// Calls that failed or were refused, by any clone: each may mean the
    /// connection inside reached a new incarnation of its server.
    failures: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Whether the connection inside reconnects only after a call failed.
    reconnects_seen: bool,
}

impl<C> Retrying<C> {
    /// Wraps a connection.
    pub fn new(inner: C) -> Retrying<C> {
        Retrying {
            inner,
            failures: Default::default(),
            reconnects_seen: false,
        }
    }

    /// Wraps a connection that reconnects only after a call failed (a
    /// connection manager on RESP2, which learns of a lost connection from
    /// a failed call alone), so every new incarnation of the server it
    /// reaches is seen here ([`FleetConnection::incarnation`]).
    pub fn seeing_reconnects(inner: C) -> Retrying<C> {
        Retrying {
            reconnects_seen: true,
            ..Retrying::new(inner)
        }
    }

    /// Whether to try a call again after `r` (`refused`: whether a reply
    /// is a refusal to retry). Counts every failure and refusal, since
    /// each may mean the connection inside reached a new incarnation.
    fn again<T>(&self, r: &RedisResult<T>, refused: impl Fn(&T) -> bool) -> bool {
        let (failed, again) = match r {
            Ok(v) => (refused(v), refused(v)),
            Err(e) => (true, transient(e)),
        };
        if failed {
            self.failures
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        again
    }
}

/// Whether an error says the server could not be reached (worth a retry).
fn transient(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || matches!(e.kind(), redis::ErrorKind::Server(k) if transient_kind(k))
}

/// Server errors that mean "not now": a server loading its data after a
/// restart, a Cluster reconfiguring.
fn transient_kind(k: redis::ServerErrorKind) -> bool {
    matches!(
        k,
        redis::ServerErrorKind::BusyLoading
            | redis::ServerErrorKind::TryAgain
            | redis::ServerErrorKind::ClusterDown
            | redis::ServerErrorKind::MasterDown
    )
}

/// Whether a reply is such an error. A connection hands a command's or a
/// pipeline's error replies back as values (the caller turns them into an
/// error later), so they are looked for here: a pipeline sent while a
/// restarted server loads its data is refused command by command.
fn refused(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if e.kind().is_some_and(transient_kind))
}

const RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(30);

/// The pauses between tries of one call: from 50 ms, doubling up to 2 s,
/// for at most [`RETRY_FOR`].
struct Backoff {
    start: std::time::Instant,
    pause: std::time::Duration,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            start: std::time::Instant::now(),
            pause: std::time::Duration::from_millis(50),
        }
    }

    /// Waits before the next try; false when the call has had its time.
    async fn wait(&mut self) -> bool {
        if self.start.elapsed() >= RETRY_FOR {
            return false;
        }
        tokio::time::sleep(self.pause).await;
        self.pause = (self.pause * 2).min(std::time::Duration::from_secs(2));
        true
    }
}

impl<C: redis::aio::ConnectionLike + Send> redis::aio::ConnectionLike for Retrying<C> {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        Box::pin(async move {
            let mut backoff = Backoff::new();
            loop {
                let r = self.inner.req_packed_command(cmd).await;
                if !(self.again(&r, refused) && backoff.wait().await) {
                    return r;
                }
            }
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        Box::pin(async move {
            let mut backoff = Backoff::new();
            loop {
                let r = self
                    .inner
                    .req_packed_commands(pipeline, offset, count)
                    .await;
                // A pipeline is sent again whole: every step is safe to
                // repeat (as after a reply lost with its connection).
                let again = self.again(&r, |v: &Vec<Value>| v.iter().any(refused));
                if !(again && backoff.wait().await) {
                    return r;
                }
            }
        })
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}

/// A store error, named after the server.
pub(crate) fn store_err(url: &str, e: redis::RedisError) -> FrontierError {
    FrontierError::Store {
        store: url.to_owned(),
        source: Box::new(e),
    }
}

/// Connects to `url`: `redis://HOST:PORT/` (or `rediss://...`) names one
/// server; several, comma-separated, name nodes of a Redis Cluster (any one
/// that answers is enough to find the others). A single URL whose server
/// says it is a Cluster node (`cluster_enabled:1`) is used as a Cluster
/// too, so one node's address is all a worker needs.
pub async fn connect(url: &str) -> Result<Connection, FrontierError> {
    let urls: Vec<&str> = url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    let first = *urls.first().ok_or_else(|| FrontierError::Corrupt {
        store: url.to_owned(),
        what: "no server named: --frontier takes redis://HOST:PORT/ (or several, comma-separated, for a Cluster)".into(),
    })?;
    let cluster = if urls.len() > 1 {
        true
    } else {
        let client = redis::Client::open(first).map_err(|e| store_err(url, e))?;
        let mut probe = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| store_err(url, e))?;
        let info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut probe)
            .await
            .map_err(|e| store_err(url, e))?;
        info.lines().any(|l| l.trim() == "cluster_enabled:1")
    };
    if cluster {
        // Without a response timeout the Cluster client waits for ever on
        // a reply a killed node will never send (seen once: a worker
        // stopped across a node's restart hung on resuming); a timeout is
        // an error `Retrying` retries on a fresh route.
        let client = redis::cluster::ClusterClientBuilder::new(urls)
            .connection_timeout(std::time::Duration::from_secs(2))
            .response_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| store_err(url, e))?;
        let con = client
            .get_async_connection()
            .await
            .map_err(|e| store_err(url, e))?;
        return Ok(Retrying::new(Link::Cluster(con)));
    }
    let client = redis::Client::open(first).map_err(|e| store_err(url, e))?;
    // On RESP2 (the default) a connection manager reconnects only after a
    // call failed, which `Retrying` sees; on RESP3 it also reconnects on
    // its own when told the connection closed.
    let resp2 =
        client.get_connection_info().redis_settings().protocol() == redis::ProtocolVersion::RESP2;
    let manager = ConnectionManager::new(client)
        .await
        .map_err(|e| store_err(url, e))?;
    let link = Link::Single(manager);
    Ok(if resp2 {
        Retrying::seeing_reconnects(link)
    } else {
        Retrying::new(link)
    })
}

/// A crawl-wide value (such as the crawl's settings), if set.
pub async fn crawl_value(
    con: &mut Connection,
    url: &str,
    layout: &Layout,
    field: &str,
) -> Result<Option<String>, FrontierError> {
    redis::cmd("HGET")
        .arg(layout.meta_key())
        .arg(field)
        .query_async(con)
        .await
        .map_err(|e| store_err(url, e))
}

/// Sets a crawl-wide value.
pub async fn set_crawl_value(
    con: &mut Connection,
    url: &str,
    layout: &Layout,
    field: &str,
    value: &str,
) -> Result<(), FrontierError> {
    redis::cmd("HSET")
        .arg(layout.meta_key())
        .arg(field)
        .arg(value)
        .query_async::<()>(con)
        .await
        .map_err(|e| store_err(url, e))
}

/// robots.txt states saved by a worker and not sent yet: they go to the
/// server in front of its frontier's next call, in the same round trip
/// (see [`RobotsStore::behind`]). A state is saved before the robots.txt
/// flight that fetched it is settled, and settles go behind what waits
/// here, so the fleet never sees the one without the other; a worker
/// killed with states still here had not settled those flights, whose
/// leases lapse and whose robots.txt is fetched again.
#[derive(Clone, Default)]
pub struct Outbox {
    waiting: std::sync::Arc<std::sync::Mutex<Vec<Saved>>>,
}

/// One state waiting in an [`Outbox`].
struct Saved {
    partition: u32,
    key: String,
    origin: String,
    json: String,
}

/// Past this many states waiting, a save sends them all itself.
const OUTBOX_MAX: usize = 256;

impl Outbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Saved>> {
        // A panic elsewhere while holding the lock leaves a list that is
        // still whole (every change is one push or one assignment).
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `json` as `origin`'s state (a newer save of an origin still
    /// waiting replaces the older); returns how many wait.
    fn put(&self, partition: u32, key: String, origin: String, json: String) -> usize {
        let mut waiting = self.lock();
        match waiting.iter_mut().find(|s| s.origin == origin) {
            Some(s) => s.json = json,
            None => waiting.push(Saved {
                partition,
                key,
                origin,
                json,
            }),
        }
        waiting.len()
    }

    /// The state of `origin` waiting here, if any.
    fn get(&self, origin: &str) -> Option<String> {
        self.lock()
            .iter()
            .find(|s| s.origin == origin)
            .map(|s| s.json.clone())
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Takes what waits, as commands on their partitions.
    pub(crate) fn take(&self) -> Vec<(u32, redis::Cmd)> {
        std::mem::take(&mut *self.lock())
            .into_iter()
            .map(|s| {
                let mut c = redis::cmd("HSET");
                c.arg(s.key).arg(s.origin).arg(s.json);
                (s.partition, c)
            })
            .collect()
    }
}

/// robots.txt states shared by every worker of a crawl: the worker that
/// fetched an origin's robots.txt saves its state here, and the others
/// load it instead of fetching it again. An origin's state lives in the
/// partition of its host.
pub struct RobotsStore {
    con: Connection,
    layout: Layout,
    outbox: Option<Outbox>,
}

impl RobotsStore {
    /// The store of the crawl `layout` names, over `con`: each save is a
    /// round trip of its own.
    pub fn new(con: Connection, layout: Layout) -> RobotsStore {
        RobotsStore {
            con,
            layout,
            outbox: None,
        }
    }

    /// The same store, whose saves wait in `outbox` (a frontier's, see
    /// [`FleetFrontier::outbox`](crate::FleetFrontier::outbox)) to go in
    /// front of the frontier's next call: a crawl saves an origin's state
    /// after its robots.txt fetch and again when its host first answers,
    /// and a round trip for each was most of the server's work per host.
    /// This worker's loads see what waits. A state that keeps its origin
    /// waiting (robots.txt failing, a Retry-After) does not wait: it goes
    /// at once, with everything before it.
    pub fn behind(con: Connection, layout: Layout, outbox: Outbox) -> RobotsStore {
        RobotsStore {
            con,
            layout,
            outbox: Some(outbox),
        }
    }

    fn partition(&self, origin: &Origin) -> u32 {
        let s = origin.to_string();
        let host = s.split("://").nth(1).unwrap_or(&s);
        let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
        self.layout.partition_of(host)
    }

    fn key(&self, origin: &Origin) -> String {
        self.layout.key(self.partition(origin), "robots")
    }
}

impl Store for RobotsStore {
    fn load<'a>(&'a self, origin: &'a Origin) -> StoreFuture<'a, Option<StoredState>> {
        Box::pin(async move {
            let waiting = self
                .outbox
                .as_ref()
                .and_then(|o| o.get(&origin.to_string()));
            let json: Option<String> = match waiting {
                Some(j) => Some(j),
                None => {
                    let mut con = self.con.clone();
                    redis::cmd("HGET")
                        .arg(self.key(origin))
                        .arg(origin.to_string())
                        .query_async(&mut con)
                        .await
                        .map_err(|e| StoreError::new("load", origin, e))?
                }
            };
            match json {
                Some(j) => serde_json::from_str(&j)
                    .map(Some)
                    .map_err(|e| StoreError::new("load", origin, e)),
                None => Ok(None),
            }
        })
    }

    fn save<'a>(&'a self, state: &'a StoredState) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let origin = &state.origin;
            let json =
                serde_json::to_string(state).map_err(|e| StoreError::new("save", origin, e))?;
            let mut con = self.con.clone();
            if let Some(outbox) = &self.outbox {
                let p = self.partition(origin);
                let waiting = outbox.put(p, self.key(origin), origin.to_string(), json);
                if waiting < OUTBOX_MAX && !holds_back(state) {
                    return Ok(());
                }
                // Nothing called the frontier for a while, or the state
                // holds the origin back (robots.txt failing, a
                // Retry-After): they go now. A worker killed before its
                // next call would take such a state along, and the next
                // would fetch robots.txt again inside the wait.
                return run_on(&mut con, &outbox.take())
                    .await
                    .map(drop)
                    .map_err(|e| StoreError::new("save", origin, e));
            }
            redis::cmd("HSET")
                .arg(self.key(origin))
                .arg(origin.to_string())
                .arg(json)
                .query_async::<()>(&mut con)
                .await
                .map_err(|e| StoreError::new("save", origin, e))
        })
    }
}

/// Whether a robots.txt state keeps its origin waiting: a failure run
/// (5xx, 429, unreachable) or a time before which robots.txt is not to be
/// fetched again.
fn holds_back(state: &StoredState) -> bool {
    state.failure.is_some() || state.retry_at.is_some()
}

/// What `mannerly crawl --status --frontier URL` shows of a fleet's crawl.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FleetStatus {
    /// Partitions the crawl was created with.
    pub partitions: u32,
    /// Workers that reported in the last 10 seconds.
    pub workers: Vec<String>,
    /// URLs queued.
    pub queued: u64,
    /// Hosts with URLs queued.
    pub hosts: u64,
    /// Releases in flight.
    pub in_flight: u64,
    /// Hosts with a request in flight.
    pub hosts_owned: u64,
    /// URLs dropped with a skipped host.
    pub skipped: u64,
    /// URLs given back after a worker's lease lapsed.
    pub reissued: u64,
}

/// The state of crawl `crawl` on `url` (its partition count is read from
/// the store; `partitions` is only a fallback for an empty crawl).
pub async fn fleet_status(
    url: &str,
    crawl: &str,
    partitions: u32,
) -> Result<FleetStatus, FrontierError> {
    let probe = Layout::new(crawl, partitions.max(1)).map_err(|e| FrontierError::Corrupt {
        store: url.to_owned(),
        what: e.to_string(),
    })?;
    let mut con = connect(url).await?;
    let stored = crawl_value(&mut con, url, &probe, "partitions").await?;
    let Some(p) = stored.and_then(|p| p.parse::<u32>().ok()) else {
        return Err(FrontierError::Corrupt {
            store: url.to_owned(),
            what: format!("there is no crawl {crawl} here"),
        });
    };
    let layout = Layout::new(crawl, p).map_err(|e| FrontierError::Corrupt {
        store: url.to_owned(),
        what: e.to_string(),
    })?;
    let parts: Vec<u32> = (0..p).collect();
    let replies = across(&mut con, &parts, |pipe, i| {
        pipe.cmd("HMGET")
            .arg(layout.key(i, "meta"))
            .arg("queued")
            .arg("skipped")
            .arg("reissued");
        pipe.cmd("HLEN").arg(layout.key(i, "fl"));
        pipe.cmd("ZCARD").arg(layout.key(i, "cnt"));
        pipe.cmd("HLEN").arg(layout.key(i, "inf"));
    })
    .await
    .map_err(|e| store_err(url, e))?;
    type Row = (Vec<Option<i64>>, u64, u64, u64);
    let rows = replies
        .into_iter()
        .map(|r| redis::from_redis_value::<Row>(Value::Array(r)))
        .collect::<Result<Vec<Row>, _>>()
        .map_err(|e| FrontierError::Corrupt {
            store: url.to_owned(),
            what: format!("status: {e}"),
        })?;
    let mut s = FleetStatus {
        partitions: p,
        workers: Vec::new(),
        queued: 0,
        hosts: 0,
        in_flight: 0,
        hosts_owned: 0,
        skipped: 0,
        reissued: 0,
    };
    for (meta, fl, cnt, inf) in rows {
        let get = |i: usize| meta.get(i).copied().flatten().unwrap_or(0).max(0) as u64;
        s.queued += get(0);
        s.skipped += get(1);
        s.reissued += get(2);
        s.in_flight += fl;
        s.hosts += cnt;
        s.hosts_owned += inf;
    }
    let seen: Vec<(String, u64)> = redis::cmd("HGETALL")
        .arg(layout.workers_key())
        .query_async(&mut con)
        .await
        .map_err(|e| store_err(url, e))?;
    let now = mannerly_time::UnixMillis::now().as_millis();
    s.workers = seen
        .into_iter()
        .filter(|(_, at)| now.saturating_sub(*at) <= 10_000)
        .map(|(w, _)| w)
        .collect();
    s.workers.sort();
    Ok(s)
}
