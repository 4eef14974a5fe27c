//! The fleet's store: per-partition Lua scripts over a Redis-protocol
//! server, each touching one partition (one Cluster slot), atomically.
//!
//! Per partition `{crawl:p}`:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `:q:<host>` | sorted set | the host's queued URLs (`tag url`), by priority then arrival |
//! | `:seen` | set | 128-bit fingerprints of every URL ever queued here |
//! | `:due` | sorted set | hosts with URLs and no owner → when they may go next |
//! | `:lease` | sorted set | owned hosts → when the lease expires |
//! | `:own` | hash | owned hosts → fencing token |
//! | `:tok`, `:seq` | counters | fencing tokens, arrival order |
//! | `:state` | hash | host → politeness state (opaque to the store) |
//! | `:nb` | hash | host → not before: the floor every claim respects |
//! | `:delay` | hash | host → its current delay, for the floor a claim sets |
//! | `:meta` | hash | `queued`, `reissued` counts |

use std::time::Duration;

use mannerly_time::UnixMillis;
use redis::aio::ConnectionLike;
use redis::Script;

use crate::layout::Layout;

/// Whose clock the store's times are read against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    /// The server's (`TIME`), so every worker agrees whatever its own
    /// clock says: the fleet's choice.
    Server,
    /// The `now` each call passes: deterministic, for tests and for one
    /// process on a fake clock.
    Caller,
}

/// A store call that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The server could not be reached or answered with an error.
    #[error("fleet store {url}: {source}")]
    Redis {
        /// The server (or cluster seed) the store talks to.
        url: String,
        /// The client's error.
        #[source]
        source: redis::RedisError,
    },
    /// The crawl exists with another partition count: joining it with a
    /// different P would put a host in two partitions.
    #[error("crawl {crawl} was created with {stored} partitions, not {wanted}: join it with --partitions {stored}")]
    Partitions {
        /// The crawl.
        crawl: String,
        /// What the store says.
        stored: u32,
        /// What this worker asked for.
        wanted: u32,
    },
    /// A reply this code cannot have produced.
    #[error("fleet store {url}: unexpected reply to {what}: {reply}")]
    Reply {
        /// The server.
        url: String,
        /// Which call.
        what: &'static str,
        /// The reply, for people.
        reply: String,
    },
}

/// What became of an enqueued URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued.
    Queued,
    /// Seen before in this crawl.
    Duplicate,
    /// The host already has `max_per_key` URLs queued: try later.
    Full,
}

/// A host claimed: its owner may fetch `url` while the lease lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The host's partition.
    pub partition: u32,
    /// The host (politeness key).
    pub key: String,
    /// The fencing token: a commit with an older one is refused.
    pub token: u64,
    /// The URL at the head of the host's queue (it stays queued until the
    /// commit takes it out, so a worker that dies loses nothing).
    pub url: String,
    /// The tag it was queued with.
    pub tag: u32,
    /// Its priority.
    pub priority: u8,
    /// The host's politeness state as last committed (None: never).
    pub state: Option<String>,
    /// When the claim was made, on the store's clock.
    pub now: UnixMillis,
    /// When the lease expires, on the store's clock.
    pub lease_until: UnixMillis,
    member: String,
    score: u64,
}

/// What a partition answered to a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Claimed {
    /// A host is yours.
    Host(Claim),
    /// No host may go before `until` (on the store's clock).
    Wait {
        /// The earliest due time or lease expiry.
        until: UnixMillis,
    },
    /// Nothing queued and nothing owned in this partition.
    Empty,
}

/// How a claim ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settle {
    /// The URL was fetched (or dropped): it leaves the queue.
    Done,
    /// It will be tried again: back at its place with a new tag.
    Retry {
        /// The new tag.
        tag: u32,
    },
    /// No request was made: it stays queued as it was.
    Cancel,
}

/// What a commit writes besides settling the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit<'a> {
    /// How the claimed URL ends.
    pub settle: Settle,
    /// The host's politeness state now (opaque to the store).
    pub state: &'a str,
    /// The host's current delay, for the floor the next claim sets.
    pub delay: Duration,
    /// When the host may go next (on the store's clock); the store never
    /// moves it earlier than the floor its last claim set.
    pub due: UnixMillis,
}

const ENQUEUE: &str = r#"
local T, h, fp, prio, member, now, maxq = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
if now < 0 then local t = redis.call('TIME'); now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end
if redis.call('SISMEMBER', T .. ':seen', fp) == 1 then return 'duplicate' end
local q = T .. ':q:' .. h
if redis.call('ZCARD', q) >= maxq then return 'full' end
redis.call('SADD', T .. ':seen', fp)
local seq = redis.call('INCR', T .. ':seq')
redis.call('ZADD', q, (255 - prio) * 1099511627776 + seq, member)
redis.call('HINCRBY', T .. ':meta', 'queued', 1)
if redis.call('HEXISTS', T .. ':own', h) == 0 then
  local floor = tonumber(redis.call('HGET', T .. ':nb', h) or '0')
  redis.call('ZADD', T .. ':due', 'NX', math.max(floor, now), h)
end
return 'queued'
"#;

/// Expired leases go back to `due` (no sooner than the host's floor); the
/// earliest due host is taken, a fencing token issued, the lease recorded,
/// and the host's floor raised to now + its delay, so a host re-issued
/// after a lease expires still waits its delay after the lost request.
const CLAIM: &str = r#"
local T, now, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if now < 0 then local t = redis.call('TIME'); now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end
local due, leases, own, nb = T .. ':due', T .. ':lease', T .. ':own', T .. ':nb'
for _, h in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
  redis.call('ZREM', leases, h)
  redis.call('HDEL', own, h)
  redis.call('HINCRBY', T .. ':meta', 'reissued', 1)
  if redis.call('ZCARD', T .. ':q:' .. h) > 0 then
    local floor = tonumber(redis.call('HGET', nb, h) or '0')
    redis.call('ZADD', due, math.max(floor, now), h)
  end
end
while true do
  local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
  if #first == 0 then
    local l = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
    if #l == 0 then return {'empty', now} end
    return {'wait', now, l[2]}
  end
  if tonumber(first[2]) > now then
    local l = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
    local w = tonumber(first[2])
    if #l > 0 and tonumber(l[2]) < w then w = tonumber(l[2]) end
    return {'wait', now, tostring(w)}
  end
  local h = first[1]
  redis.call('ZREM', due, h)
  local head = redis.call('ZRANGE', T .. ':q:' .. h, 0, 0, 'WITHSCORES')
  if #head > 0 then
    local tok = redis.call('INCR', T .. ':tok')
    redis.call('HSET', own, h, tok)
    redis.call('ZADD', leases, now + lease, h)
    local d = tonumber(redis.call('HGET', T .. ':delay', h) or '0')
    local floor = tonumber(redis.call('HGET', nb, h) or '0')
    redis.call('HSET', nb, h, math.max(floor, now + d))
    return {'claim', now, h, tok, head[1], head[2], redis.call('HGET', T .. ':state', h) or ''}
  end
end
"#;

const RENEW: &str = r#"
local T, h, tok, now, lease = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
if now < 0 then local t = redis.call('TIME'); now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end
if redis.call('HGET', T .. ':own', h) ~= tok then return 0 end
if (redis.call('ZSCORE', T .. ':lease', h) or 0) + 0 <= now then return 0 end
redis.call('ZADD', T .. ':lease', now + lease, h)
return 1
"#;

/// Refused (0) when the token is not the owner's: a worker that was
/// paused or cut off past its lease cannot write over the new owner.
const COMMIT: &str = r#"
local T, h, tok, member, back, score, state, delay, due = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9])
if redis.call('HGET', T .. ':own', h) ~= tok then return 0 end
redis.call('HDEL', T .. ':own', h)
redis.call('ZREM', T .. ':lease', h)
local q = T .. ':q:' .. h
if member ~= '' and redis.call('ZREM', q, member) == 1 then
  redis.call('HINCRBY', T .. ':meta', 'queued', -1)
end
if back ~= '' and redis.call('ZADD', q, score, back) == 1 then
  redis.call('HINCRBY', T .. ':meta', 'queued', 1)
end
redis.call('HSET', T .. ':state', h, state)
redis.call('HSET', T .. ':delay', h, delay)
local floor = tonumber(redis.call('HGET', T .. ':nb', h) or '0')
if due < floor then due = floor end
redis.call('HSET', T .. ':nb', h, due)
if redis.call('ZCARD', q) > 0 then redis.call('ZADD', T .. ':due', due, h) end
return 1
"#;

/// The store of one crawl, over one connection (standalone or Cluster).
pub struct FleetStore<C> {
    con: C,
    url: String,
    layout: Layout,
    lease: Duration,
    time: TimeSource,
    max_per_key: u64,
    enqueue: Script,
    claim: Script,
    renew: Script,
    commit: Script,
    cursor: u32,
}

impl<C: ConnectionLike + Send> FleetStore<C> {
    /// Joins (or creates) the crawl `layout` names, over `con` (`url` names
    /// the server in errors). Leases last `lease`: make it longer than the
    /// fetch timeout plus a margin.
    pub async fn open(
        mut con: C,
        url: &str,
        layout: Layout,
        lease: Duration,
        time: TimeSource,
    ) -> Result<FleetStore<C>, FleetError> {
        let err = |source| FleetError::Redis {
            url: url.to_owned(),
            source,
        };
        let meta = layout.meta_key();
        let _: bool = redis::cmd("HSETNX")
            .arg(&meta)
            .arg("partitions")
            .arg(layout.partitions())
            .query_async(&mut con)
            .await
            .map_err(err)?;
        let stored: u32 = redis::cmd("HGET")
            .arg(&meta)
            .arg("partitions")
            .query_async(&mut con)
            .await
            .map_err(err)?;
        if stored != layout.partitions() {
            return Err(FleetError::Partitions {
                crawl: layout.crawl().to_owned(),
                stored,
                wanted: layout.partitions(),
            });
        }
        Ok(FleetStore {
            con,
            url: url.to_owned(),
            layout,
            lease,
            time,
            max_per_key: 100_000,
            enqueue: Script::new(ENQUEUE),
            claim: Script::new(CLAIM),
            renew: Script::new(RENEW),
            commit: Script::new(COMMIT),
            cursor: 0,
        })
    }

    /// URLs per host before [`Enqueued::Full`] (100,000).
    pub fn set_max_per_key(&mut self, n: u64) {
        self.max_per_key = n;
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn now_arg(&self, now: UnixMillis) -> i64 {
        match self.time {
            TimeSource::Server => -1,
            TimeSource::Caller => i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        }
    }

    fn err(&self, source: redis::RedisError) -> FleetError {
        FleetError::Redis {
            url: self.url.clone(),
            source,
        }
    }

    fn reply(&self, what: &'static str, reply: impl std::fmt::Debug) -> FleetError {
        FleetError::Reply {
            url: self.url.clone(),
            what,
            reply: format!("{reply:?}"),
        }
    }

    /// Queues `url` (already normalised) for host `key`, once per crawl.
    pub async fn enqueue(
        &mut self,
        key: &str,
        url: &str,
        priority: u8,
        tag: u32,
        now: UnixMillis,
    ) -> Result<Enqueued, FleetError> {
        let p = self.layout.partition_of(key);
        let fp = xxhash_rust::xxh3::xxh3_128(url.as_bytes()).to_be_bytes();
        let answer: String = self
            .enqueue
            .key(self.layout.key(p, "seen"))
            .arg(self.layout.tag(p))
            .arg(key)
            .arg(&fp[..])
            .arg(priority)
            .arg(format!("{tag} {url}"))
            .arg(self.now_arg(now))
            .arg(self.max_per_key)
            .invoke_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        match answer.as_str() {
            "queued" => Ok(Enqueued::Queued),
            "duplicate" => Ok(Enqueued::Duplicate),
            "full" => Ok(Enqueued::Full),
            _ => Err(self.reply("enqueue", answer)),
        }
    }

    /// Claims the earliest due host of partition `p`.
    pub async fn claim_in(&mut self, p: u32, now: UnixMillis) -> Result<Claimed, FleetError> {
        let v: redis::Value = self
            .claim
            .key(self.layout.key(p, "due"))
            .arg(self.layout.tag(p))
            .arg(self.now_arg(now))
            .arg(u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX))
            .invoke_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        let parts: Vec<redis::Value> =
            redis::from_redis_value(v.clone()).map_err(|_| self.reply("claim", &v))?;
        let text =
            |i: usize| -> Option<String> { redis::from_redis_value(parts.get(i)?.clone()).ok() };
        let num = |i: usize| -> Option<u64> {
            text(i)
                .and_then(|s| s.parse::<f64>().ok())
                .map(|f| f as u64)
        };
        let at = num(1)
            .map(UnixMillis)
            .ok_or_else(|| self.reply("claim", &v))?;
        match text(0).as_deref() {
            Some("empty") => Ok(Claimed::Empty),
            Some("wait") => Ok(Claimed::Wait {
                until: num(2)
                    .map(UnixMillis)
                    .ok_or_else(|| self.reply("claim", &v))?,
            }),
            Some("claim") => {
                let (Some(key), Some(token), Some(member), Some(score)) =
                    (text(2), num(3), text(4), num(5))
                else {
                    return Err(self.reply("claim", &v));
                };
                let (tag, url) = member
                    .split_once(' ')
                    .and_then(|(t, u)| Some((t.parse().ok()?, u.to_owned())))
                    .ok_or_else(|| self.reply("claim", &v))?;
                let state = text(6).filter(|s| !s.is_empty());
                Ok(Claimed::Host(Claim {
                    partition: p,
                    key,
                    token,
                    url,
                    tag,
                    priority: 255 - u8::try_from(score >> 40).unwrap_or(255),
                    state,
                    now: at,
                    lease_until: at.add_millis(u64::try_from(self.lease.as_millis()).unwrap_or(0)),
                    member,
                    score,
                }))
            }
            _ => Err(self.reply("claim", &v)),
        }
    }

    /// Claims a host from the partitions in turn, starting after the last
    /// one asked, looking at up to `tries` of them: the first claimed, or
    /// the earliest wait among those asked (`None`: all empty).
    pub async fn claim(
        &mut self,
        now: UnixMillis,
        tries: u32,
    ) -> Result<Option<Claimed>, FleetError> {
        let mut wait: Option<UnixMillis> = None;
        for _ in 0..tries.clamp(1, self.layout.partitions()) {
            let p = self.cursor;
            self.cursor = (self.cursor + 1) % self.layout.partitions();
            match self.claim_in(p, now).await? {
                Claimed::Host(c) => return Ok(Some(Claimed::Host(c))),
                Claimed::Wait { until } => wait = Some(wait.map_or(until, |w| w.min(until))),
                Claimed::Empty => {}
            }
        }
        Ok(wait.map(|until| Claimed::Wait { until }))
    }

    /// Extends a claim's lease; `false` when it is no longer this worker's
    /// (expired, or claimed by another since). Call it just before sending.
    pub async fn renew(&mut self, claim: &mut Claim, now: UnixMillis) -> Result<bool, FleetError> {
        let p = claim.partition;
        let ok: i64 = self
            .renew
            .key(self.layout.key(p, "own"))
            .arg(self.layout.tag(p))
            .arg(&claim.key)
            .arg(claim.token)
            .arg(self.now_arg(now))
            .arg(u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX))
            .invoke_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        Ok(ok == 1)
    }

    /// Ends a claim; `false` (and nothing written) when its token is stale.
    pub async fn commit(&mut self, claim: &Claim, c: Commit<'_>) -> Result<bool, FleetError> {
        let p = claim.partition;
        let (done, back) = match c.settle {
            Settle::Done => (claim.member.clone(), String::new()),
            Settle::Retry { tag } => (claim.member.clone(), format!("{tag} {}", claim.url)),
            Settle::Cancel => (String::new(), String::new()),
        };
        let ok: i64 = self
            .commit
            .key(self.layout.key(p, "own"))
            .arg(self.layout.tag(p))
            .arg(&claim.key)
            .arg(claim.token)
            .arg(done)
            .arg(back)
            .arg(claim.score)
            .arg(c.state)
            .arg(u64::try_from(c.delay.as_millis()).unwrap_or(u64::MAX))
            .arg(c.due.as_millis())
            .invoke_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        Ok(ok == 1)
    }

    /// URLs queued across every partition.
    pub async fn queued(&mut self) -> Result<u64, FleetError> {
        let mut pipe = redis::pipe();
        for p in 0..self.layout.partitions() {
            pipe.cmd("HGET")
                .arg(self.layout.key(p, "meta"))
                .arg("queued");
        }
        let counts: Vec<Option<i64>> = pipe
            .query_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        Ok(counts.into_iter().flatten().map(|n| n.max(0) as u64).sum())
    }

    /// Hosts owned now (leases not yet expired on the server's clock are
    /// counted; an expired one is counted until a claim sweeps it).
    pub async fn owned(&mut self) -> Result<u64, FleetError> {
        let mut pipe = redis::pipe();
        for p in 0..self.layout.partitions() {
            pipe.cmd("HLEN").arg(self.layout.key(p, "own"));
        }
        let counts: Vec<u64> = pipe
            .query_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        Ok(counts.into_iter().sum())
    }
}
