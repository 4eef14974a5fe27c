//! The frontier's scripts. Each runs on one partition (`ARGV[1]` is its
//! hash-tagged prefix, `KEYS[1]` one of its keys so Cluster routes it) and
//! mirrors one step of `LocalFrontier`, so one worker on one partition
//! answers exactly as the embedded frontier does. `ENQUEUE`, `NEXT` and
//! `SETTLE` take several partitions' work in one call on a standalone
//! server, where every key is on the one node (a call's fixed
//! cost is most of a small one's); each part's answers are those a call of
//! its own would give. On a Cluster a call holds one partition's.
//!
//! Per partition `{crawl:p}`:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `:q:<host>` | sorted set | queued URLs `tag\torigin\turl`, scored (255 − priority)·2⁴⁰ + arrival |
//! | `:seen` | set | 128-bit fingerprints of every URL ever queued |
//! | `:time` | sorted set | hosts waiting → when they may be tried |
//! | `:ready` | sorted set | hosts that may be tried, best head priority, then earliest |
//! | `:cnt` | sorted set | hosts → −(URLs queued), for `busiest` |
//! | `:chk` | hash | host → `skip paused retry next delay window` (ms): what `check` reads |
//! | `:why` | hash | host → why it is skipped |
//! | `:state` | hash | host → its politeness state (JSON, the controller's) |
//! | `:inf` | hash | host → requests in flight |
//! | `:fl`, `:lease` | hash, sorted set | flight → record; flight → lease expiry |
//! | `:rb`, `:ua` | hashes | origin → robots.txt gate; gate waiting for a fetch to settle |
//! | `:sk` | list | URLs dropped with a skipped host |
//! | `:hold` | hash | host → fencing token of the claim that holds it (a claim's flight only; none while the host is skipped) |
//! | `:fx:<token>` | hash | URLs a claim gathered after it was released (member → score): its worker's own new links to the host |
//! | `:meta` | hash | `queued`, `skipped`, `reissued` counts |
//! | `:seq`, `:tok` | counters | arrival order and flight ids; fencing tokens |
//!
//! Numbers are formatted with `%d` before they are joined into strings or
//! handed to `redis.call` (Redis 7.0 formats a number argument with
//! `%.17g`, twice the cost):
//! Lua's own conversion keeps 14 digits, and times have 13, scores 15.
//! (Lua 5.1 formats `%d` from a C `long`: 64 bits here, and every number
//! formatted is a whole one below 2⁵³.)

/// Helpers every script starts with.
const LIB: &str = r#"
local T = ARGV[1]
local function K(s) return T .. ':' .. s end
local P40 = 1099511627776
local P44 = 17592186044416
-- '%d' formats the integer part without the multi-precision printf that
-- '%.0f' runs (half the cost); every number formatted here is whole.
local function num(x) return string.format('%d', x) end
-- `num(n)` for a time that recurs (a call's `now`): formatted once.
local now_n, now_s
local function num_now(n)
  if n ~= now_n then now_n, now_s = n, num(n) end
  return now_s
end
local server_now
-- `v`, or the server's time when `v` is negative (read once per call:
-- a script runs as one step).
local function clock(v)
  local n = tonumber(v)
  if n < 0 then
    if not server_now then
      local t = redis.call('TIME')
      server_now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    n = server_now
  end
  return n
end
local function head(key)
  local h = redis.call('ZRANGE', K('q:' .. key), '0', '0', 'WITHSCORES')
  if #h == 0 then return nil, nil end
  return h[1], tonumber(h[2])
end
local function prio_of(score) return 255 - math.floor(score / P40) end
local function schedule(key, at)
  if redis.call('ZCARD', K('q:' .. key)) == 0 then return end
  if redis.call('ZSCORE', K('ready'), key) then return end
  redis.call('ZADD', K('time'), 'LT', num(at), key)
end
local function parse_chk(c)
  local s, p, r, n, d, w = string.match(c, '^(%d) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  return s, tonumber(p), tonumber(r), tonumber(n), tonumber(d), tonumber(w)
end
-- A `chk` record from its fields, as `parse_chk` reads it.
local function chk_of(s, p, r, n, d, w)
  return s .. ' ' .. num(p) .. ' ' .. num(r) .. ' ' .. num(n) .. ' ' .. num(d) .. ' ' .. num(w)
end
-- `check` from a `chk` record already read (false: none) and, when known,
-- the requests in flight (else read when needed).
local function judge(key, c, now, maxin, inf)
  if not c then return 'ok' end
  local s, p, r, n = parse_chk(c)
  if s == '1' then return 'skip' end
  if now < p then return 'wait', p, false end
  if now < r then return 'wait', r, false end
  if inf == nil then inf = tonumber(redis.call('HGET', K('inf'), key) or '0') end
  if inf >= maxin then return 'wait', now + 1, true end
  if now < n then return 'wait', n, false end
  return 'ok'
end
local function check(key, now, maxin)
  return judge(key, redis.call('HGET', K('chk'), key), now, maxin)
end
-- A request starts: `c` is the host's `chk` record as read (false: none).
-- Returns the record written and the requests now in flight.
local function start(key, now, min_delay, c)
  local inf = redis.call('HINCRBY', K('inf'), key, '1')
  c = c or ('0 0 0 0 ' .. num(min_delay) .. ' 0')
  local s, p, r, n, d, w = parse_chk(c)
  local nx = now + d
  if w > 0 then
    local k = math.floor(now / w)
    if (k + 1) * w > nx then nx = (k + 1) * w end
  end
  if nx > n then n = nx end
  c = chk_of(s, p, r, n, d, w)
  -- (Not skipped: a request starts only on a host `judge` let go.)
  redis.call('HSET', K('chk'), key, c)
  return c, inf
end
-- Writes a host's `chk` record. A skipped host is held by no claim, so a
-- hold says its host is not skipped (`ENQUEUE` reads no `chk` for a
-- claim's links).
local function set_chk(key, c)
  redis.call('HSET', K('chk'), key, c)
  if string.sub(c, 1, 1) == '1' then redis.call('HDEL', K('hold'), key) end
end
local function split(m)
  return string.match(m, '^([^\t]*)\t([^\t]*)\t(.*)$')
end
-- A host in the ready set takes its head's priority when that is higher;
-- false when it is not in the set.
local function raise(key)
  local rs = redis.call('ZSCORE', K('ready'), key)
  if not rs then return false end
  local _, hs = head(key)
  local hp = prio_of(hs)
  if hp > math.floor(tonumber(rs) / P44) then
    redis.call('ZADD', K('ready'), num(hp * P44 + (P44 - 1)), key)
  end
  return true
end
local function insert(key, score, member)
  local q = K('q:' .. key)
  if redis.call('ZADD', q, num(score), member) == 1 then
    redis.call('HINCRBY', K('meta'), 'queued', '1')
    redis.call('ZINCRBY', K('cnt'), '-1', key)
  end
  raise(key)
end
-- Takes the first `n` URLs of a host's queue (its head, and a claim's
-- others); `all`: they are all it holds (the caller asked for more).
local function take_n(key, n, all)
  if all then redis.call('DEL', K('q:' .. key))
  else redis.call('ZREMRANGEBYRANK', K('q:' .. key), '0', num(n - 1)) end
  redis.call('HINCRBY', K('meta'), 'queued', num(-n))
  if all then redis.call('ZREM', K('cnt'), key)
  elseif tonumber(redis.call('ZINCRBY', K('cnt'), num(n), key)) >= 0 then
    redis.call('ZREM', K('cnt'), key)
  end
end
local function drain(key)
  local reason = redis.call('HGET', K('why'), key) or 'host skipped'
  local q = K('q:' .. key)
  local all = redis.call('ZRANGE', q, '0', '-1')
  for _, m in ipairs(all) do
    local _, _, url = split(m)
    redis.call('RPUSH', K('sk'), cjson.encode({url, reason}))
  end
  redis.call('DEL', q)
  redis.call('HINCRBY', K('meta'), 'queued', num(-#all))
  redis.call('HINCRBY', K('meta'), 'skipped', num(#all))
  redis.call('ZREM', K('cnt'), key)
  redis.call('ZREM', K('time'), key)
  redis.call('ZREM', K('ready'), key)
end
-- Puts a host with queued URLs back in the time set when it may next be
-- tried (unless it is in the ready set, or only its requests in flight
-- hold it back); drains a skipped one. `c` (its `chk` record, false for
-- none) and `inf` may be passed when known; `popped`: it is not in the
-- ready set (it was just taken from it).
local function reschedule(key, now, maxin, c, inf, popped)
  if redis.call('ZCARD', K('q:' .. key)) == 0 then return end
  if c == nil then c = redis.call('HGET', K('chk'), key) or false end
  local v, at, limited = judge(key, c, now, maxin, inf)
  if v == 'ok' then at = now
  elseif v == 'wait' then
    if limited then return end
  else
    drain(key)
    return
  end
  if not popped and redis.call('ZSCORE', K('ready'), key) then return end
  redis.call('ZADD', K('time'), 'LT', num(at), key)
end
-- An origin's robots.txt is known until `valid` (`LocalFrontier::robots_known`):
-- its gate says so, after the fetch under way (if any) settles.
local function known(origin, valid)
  local g = redis.call('HGET', K('rb'), origin)
  if g and string.sub(g, 1, 1) == 'F' then redis.call('HSET', K('rb'), origin, 'F' .. valid)
  else redis.call('HSET', K('rb'), origin, 'K' .. valid) end
end
local function settle_robots(origin)
  local ua = redis.call('HGET', K('ua'), origin)
  if ua then
    redis.call('HDEL', K('ua'), origin)
    redis.call('HSET', K('rb'), origin, ua)
    return
  end
  local g = redis.call('HGET', K('rb'), origin)
  if g and string.sub(g, 1, 1) == 'F' then
    if g == 'F' then redis.call('HDEL', K('rb'), origin)
    else redis.call('HSET', K('rb'), origin, 'K' .. string.sub(g, 2)) end
  end
end
-- A robots.txt flight settles with its origin's robots.txt known until
-- `valid`: as `known` then `settle_robots` would leave the gate (the
-- flight's own fetch is the one under way), in fewer steps.
local function settle_known(origin, valid)
  local ua = redis.call('HGET', K('ua'), origin)
  if ua then
    redis.call('HDEL', K('ua'), origin)
    redis.call('HSET', K('rb'), origin, ua)
  else
    redis.call('HSET', K('rb'), origin, 'K' .. valid)
  end
end
-- What `NEXT` answers when nothing may be released now (`t`: the head of
-- the time set): wait for that head, or busy/empty (with the number of
-- flights, so a worker can tell whether any are another's).
local function idle(now, t)
  if #t > 0 then return {'wait', num_now(now), t[2]} end
  if tonumber(redis.call('HGET', K('meta'), 'queued') or '0') <= 0 then
    return {'empty', num_now(now), redis.call('HLEN', K('fl'))}
  end
  return {'busy', num_now(now)}
end
-- A request ended; returns the requests still in flight.
local function dec_inf(key)
  local n = redis.call('HINCRBY', K('inf'), key, '-1')
  if n <= 0 then
    redis.call('HDEL', K('inf'), key)
    return 0
  end
  return n
end
-- A claim's flight ended (settled, or its lease lapsed): what it gathered
-- and did not report done (nor in `gone`, a set of members: done with
-- this settle) goes back to the queue, and the host is no longer held by
-- it.
local function unhold(key, tok, gone)
  local fx = K('fx:' .. tok)
  local g = redis.call('HGETALL', fx)
  for j = 1, #g, 2 do
    if not (gone and gone[g[j]]) then insert(key, tonumber(g[j + 1]), g[j]) end
  end
  if #g > 0 then redis.call('DEL', fx) end
  if redis.call('HGET', K('hold'), key) == tok then redis.call('HDEL', K('hold'), key) end
end
"#;

/// ARGV: T, now, max per key, max total, max keys, then groups of URLs,
/// each a partition's: its prefix, how many URLs, then five per URL: key,
/// fingerprint, priority, the member its queue would hold
/// (`tag\torigin\turl`), and the fencing token of the offering worker's
/// claim on the host ('' for none). One answer per URL,
/// in order: `queued`, `duplicate`, `total`, `key`, `keys` (bounds), `skip`
/// and the reason after a tab, or `claimed` and the URL's score after a
/// tab: the host is held by that claim still, and a new URL joins it (kept
/// in the claim's `fx` record, which its lapse gives back) instead of the
/// queue, so the worker releases it with no further step here. A host's
/// skip comes first, then the seen-set (a duplicate is one step), then the
/// bounds (a URL they turn away leaves the seen-set again), as in
/// `LocalFrontier::enqueue`. A host its claim still holds is not skipped
/// (a skip clears the hold: `set_chk`), so a claim's links read no `chk`. On a
/// standalone server one call carries every partition's URLs (a call's
/// fixed cost is most of a small one's); on a Cluster, where a call
/// touches one slot, one group.
const ENQUEUE: &str = r#"
local now = clock(ARGV[2])
local maxk, maxt, maxkeys = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local out = {}
-- One partition's URLs, ARGV[first..last]. What every URL reads is read
-- once per group and kept up to date here (the script runs alone);
-- counters and each host's schedule are written once at the end. The
-- answers are those of one call per URL.
local function group(first, last)
  -- The queued count is read when first needed (a claim's own links do
  -- not need it). URLs are judged first, then those taken get their
  -- arrival numbers, in order, from one step.
  local queued
  local added, nkeys = 0, nil
  local chk, qn, grew, order, held, fresh = {}, {}, {}, {}, {}, {}
  local taken = {}
  for i = first, last - 4, 5 do
    local key, fp, prio, member, tok = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    local h = false
    if tok ~= '' then
      h = held[key]
      if h == nil then
        h = redis.call('HGET', K('hold'), key) == tok
        held[key] = h
      end
    end
    -- Held: not skipped (see `set_chk`).
    local c = false
    if not h then
      c = chk[key]
      if c == nil then
        c = redis.call('HGET', K('chk'), key) or false
        chk[key] = c
      end
    end
    local a
    if c and string.sub(c, 1, 1) == '1' then
      a = 'skip\t' .. (redis.call('HGET', K('why'), key) or 'host skipped')
    elseif redis.call('SADD', K('seen'), fp) == 0 then
      -- A URL queued once is a duplicate whatever the bounds say now.
      a = 'duplicate'
    elseif h then
      taken[#taken + 1] = {#out + 1, key, prio, member, tok}
      a = 'claimed'
    else
      -- The bounds, checked after the seen-set (one step for a
      -- duplicate); a URL they turn away is not remembered as seen.
      if queued == nil then queued = tonumber(redis.call('HGET', K('meta'), 'queued') or '0') end
      local n = qn[key]
      if n == nil and queued < maxt then
        n = redis.call('ZCARD', K('q:' .. key))
        qn[key] = n
      end
      if queued >= maxt then a = 'total'
      elseif n >= maxk then a = 'key'
      else
        if n == 0 and nkeys == nil then nkeys = redis.call('ZCARD', K('cnt')) end
        if n == 0 and nkeys >= maxkeys then a = 'keys'
        else
          taken[#taken + 1] = {#out + 1, key, prio, member, false}
          queued = queued + 1
          added = added + 1
          if n == 0 then nkeys = nkeys + 1 end
          qn[key] = n + 1
          if not grew[key] then
            grew[key] = 0
            order[#order + 1] = key
            fresh[key] = n == 0
          end
          grew[key] = grew[key] + 1
          a = 'queued'
        end
      end
      if a ~= 'queued' then redis.call('SREM', K('seen'), fp) end
    end
    out[#out + 1] = a
  end
  if #taken > 0 then
    local seq = tonumber(redis.call('INCRBY', K('seq'), num(#taken))) - #taken
    for j, t in ipairs(taken) do
      local score = num((255 - tonumber(t[3])) * P40 + seq + j)
      if t[5] then
        redis.call('HSET', K('fx:' .. t[5]), t[4], score)
        out[t[1]] = 'claimed\t' .. score
      else redis.call('ZADD', K('q:' .. t[2]), score, t[4]) end
    end
  end
  if added > 0 then redis.call('HINCRBY', K('meta'), 'queued', num(added)) end
  -- Each host that gained URLs: its count, then as `insert` and `schedule`
  -- would leave it: a host in the ready set has its priority raised to its
  -- new head's; any other is due now at the latest.
  -- (A host whose queue was empty is not in the ready set, which holds
  -- only hosts with a head: no need to ask.)
  for _, key in ipairs(order) do
    redis.call('ZINCRBY', K('cnt'), num(-grew[key]), key)
    if fresh[key] or not raise(key) then redis.call('ZADD', K('time'), 'LT', num_now(now), key) end
  end
end
local i = 6
while i < #ARGV do
  T = ARGV[i]
  local last = i + 1 + 5 * tonumber(ARGV[i + 1])
  group(i + 2, last)
  i = last + 1
end
return out
"#;

/// ARGV: the first partition's prefix, now, max in flight, lease ms, min
/// delay ms, robots gate (0/1), claim size, then pairs: a partition's
/// prefix and how many to release there (all one partition's on a
/// Cluster, where a call touches one slot; any on a standalone server).
/// For each pair, in its partition: leases that expired give their URLs
/// back; then as that many calls of `LocalFrontier::next`, until one finds
/// nothing. One answer per pair, `{kind, now, third, releases}`: kind
/// `more` when it released as many as asked, else the idle answer (`wait`
/// and when, `busy`, `empty` and the number of flights) a further call
/// would give; each release is `{id, R|P, key, priority, url, tag, state,
/// token, extra}`. With a claim size above 1, a page's release also takes
/// the next URLs of its host's queue, up to that many in all, into the
/// same flight (`extra`: member, score, member, score...): the host is the
/// worker's until it settles them, and a lapsed lease gives them all back.
/// A robots.txt release is then a claim too: it takes the first URLs of the
/// host's queue (its head included), which its worker releases once the
/// robots.txt is known; its settle then says so.
const NEXT: &str = r#"
local now = clock(ARGV[2])
local maxin, lease, mind, gate = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'
local claim = tonumber(ARGV[7])
-- A lapsed flight's last request may have left as late as its lease let
-- it, and a claim's requests after its release were paced by its worker
-- alone: the host waits its delay from the lapse.
local function wait_out(key)
  local c = redis.call('HGET', K('chk'), key)
  if not c then return end
  local s, p, r, n, d, w = parse_chk(c)
  if not s or now + d <= n then return end
  redis.call('HSET', K('chk'), key, chk_of(s, p, r, now + d, d, w))
end
-- Flights whose lease expired give their URLs back.
local function lapse()
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K('lease'), '-inf', num_now(now))) do
    local f = cjson.decode(redis.call('HGET', K('fl'), id))
    redis.call('HDEL', K('fl'), id)
    redis.call('ZREM', K('lease'), id)
    dec_inf(f[2])
    if f[1] == 'R' then settle_robots(f[3])
    elseif f[5] ~= '' then insert(f[2], tonumber(f[4]), f[5]) end
    local extra = f[7] or {}
    for j = 1, #extra, 2 do insert(f[2], tonumber(extra[j + 1]), extra[j]) end
    if f[8] then unhold(f[2], f[6]) end
    redis.call('HINCRBY', K('meta'), 'reissued', '1')
    wait_out(f[2])
    reschedule(f[2], now, maxin)
  end
end
-- Heads read by `promote`, for the pop that follows (each used once:
-- nothing else in this script changes a queue between the two).
local heads = {}
local function promote()
  local due = redis.call('ZRANGEBYSCORE', K('time'), '-inf', num_now(now), 'WITHSCORES')
  if #due == 0 then return end
  redis.call('ZREMRANGEBYSCORE', K('time'), '-inf', num_now(now))
  local add = {}
  for i = 1, #due, 2 do
    local key, at = due[i], tonumber(due[i + 1])
    local hm, hs = head(key)
    if hs then
      heads[key] = {hm, hs}
      add[#add + 1] = num(prio_of(hs) * P44 + (P44 - 1 - at))
      add[#add + 1] = key
      -- In steps of 500 hosts: `unpack` fails past some 8,000 values.
      if #add >= 1000 then
        redis.call('ZADD', K('ready'), unpack(add))
        add = {}
      end
    end
  end
  if #add > 0 then redis.call('ZADD', K('ready'), unpack(add)) end
end
local function release(key, hm, hs, c)
  local tag, origin, url = split(hm)
  local prio = prio_of(hs)
  if gate then
    local g = redis.call('HGET', K('rb'), origin)
    local fetch = true
    if g then
      local kind = string.sub(g, 1, 1)
      if kind == 'F' then return nil end
      if kind == 'K' then fetch = tonumber(string.sub(g, 2)) <= now
      else
        local u = tonumber(string.match(g, '^U(%d+)'))
        if now < u then
          schedule(key, u)
          return nil
        end
      end
    end
    if fetch then
      redis.call('HSET', K('rb'), origin, 'F')
      local id = redis.call('INCR', K('seq'))
      local tok = redis.call('INCR', K('tok'))
      local nc, inf = start(key, now, mind, c)
      local rec = {'R', key, origin, '', '', num(tok)}
      local extra = {}
      local empty = false
      if claim > 1 then
        -- A claim from the start: the host's first URLs go with its
        -- robots.txt, for its worker to release once that is known.
        extra = redis.call('ZRANGE', K('q:' .. key), '0', num(claim - 1), 'WITHSCORES')
        empty = #extra / 2 < claim
        take_n(key, #extra / 2, empty)
        rec[7] = extra
        rec[8] = 1
        redis.call('HSET', K('hold'), key, num(tok))
      end
      redis.call('HSET', K('fl'), num(id), cjson.encode(rec))
      redis.call('ZADD', K('lease'), num(now + lease), num(id))
      return {id, 'R', key, prio, origin .. '/robots.txt', '0',
              redis.call('HGET', K('state'), key) or '', tok, extra}, nc, inf, empty
    end
  end
  local extra = {}
  local empty = false
  if claim > 1 then
    extra = redis.call('ZRANGE', K('q:' .. key), '1', num(claim - 1), 'WITHSCORES')
    empty = 1 + #extra / 2 < claim
  end
  take_n(key, 1 + #extra / 2, empty)
  local id = hs % P40
  local tok = redis.call('INCR', K('tok'))
  local nc, inf = start(key, now, mind, c)
  local rec = {'P', key, origin, num(hs), hm, num(tok)}
  if claim > 1 then
    -- A claim: the host's new URLs its worker finds may join it.
    rec[7] = extra
    rec[8] = 1
    redis.call('HSET', K('hold'), key, num(tok))
  elseif #extra > 0 then rec[7] = extra end
  redis.call('HSET', K('fl'), num(id), cjson.encode(rec))
  redis.call('ZADD', K('lease'), num(now + lease), num(id))
  return {id, 'P', key, prio, url, tag, redis.call('HGET', K('state'), key) or '', tok, extra}, nc, inf, empty
end
local function one()
  promote()
  while true do
    local top = redis.call('ZPOPMAX', K('ready'))
    if #top == 0 then return nil end
    local key = top[1]
    local hm, hs
    local h = heads[key]
    if h then
      heads[key] = nil
      hm, hs = h[1], h[2]
    else hm, hs = head(key) end
    if hm then
      local c = redis.call('HGET', K('chk'), key) or false
      local v, at, limited = judge(key, c, now, maxin)
      if v == 'ok' then
        local r, nc, inf, empty = release(key, hm, hs, c)
        if r then
          -- A claim that took the whole queue leaves nothing to schedule.
          if not empty then reschedule(key, now, maxin, nc, inf, true) end
          return r
        end
      elseif v == 'wait' then
        if not limited then schedule(key, at) end
      else
        drain(key)
      end
    end
  end
end
local function ask(want)
  heads = {}
  lapse()
  local got = {}
  while #got < want do
    local r = one()
    if not r then break end
    got[#got + 1] = r
  end
  if #got >= want then return {'more', num_now(now), '', got} end
  local i = idle(now, redis.call('ZRANGE', K('time'), '0', '0', 'WITHSCORES'))
  return {i[1], i[2], i[3] or '', got}
end
local out = {}
for j = 8, #ARGV - 1, 2 do
  T = ARGV[j]
  out[#out + 1] = ask(tonumber(ARGV[j + 1]))
end
return out
"#;

/// ARGV: T, now, lease ms, then a flight id and its fencing token per
/// flight. One answer per flight, in order: 1 and the lease extended if
/// the flight is still that release and its lease has not lapsed; else 0.
/// A worker's heartbeat renews every flight it holds on a partition in
/// one call, and a confirmation renews one.
const RENEW: &str = r#"
local now, lease = clock(ARGV[2]), tonumber(ARGV[3])
local out = {}
for j = 4, #ARGV - 1, 2 do
  local id, ok = ARGV[j], 0
  local raw = redis.call('HGET', K('fl'), id)
  if raw and tostring(cjson.decode(raw)[6]) == ARGV[j + 1] then
    local exp = redis.call('ZSCORE', K('lease'), id)
    if exp and tonumber(exp) > now then
      redis.call('ZADD', K('lease'), num(now + lease), id)
      ok = 1
    end
  end
  out[#out + 1] = ok
end
return out
"#;

/// Completions, in order, each on its partition (all one partition's on a
/// Cluster, where a call touches one slot; any on a standalone server).
/// ARGV: the first's prefix, then per completion: its partition's prefix,
/// now, max in flight, flight id, how (done, retry, cancel, drop), new
/// tag, state, chk, why, fencing token, how many URLs of a claim go back to
/// the queue, then the score and member of each. One answer each: `stale`
/// when the flight is not this release any more (its lease expired and the
/// URL went back, perhaps to another worker under the same id), else `ok`.
/// A member given with an empty score is a URL the claim gathered that is
/// done, or goes back with this settle: it leaves the claim's record
/// (before what is left there goes back to the queue).
/// How `ack`: the members given are URLs a claim gathered that are done
/// or go back with the claim's next settle: they leave the claim's record,
/// so a lapse does not give them back; with a state (not ''), the host's
/// state, chk and why are written too. Nothing else changes, and a late
/// one finds nothing (a token is never reused). A robots.txt flight's
/// tag, when not 0, is until when its origin's robots.txt is known, as a
/// `known` entry would say just before it. How `known`: an origin's
/// robots.txt is known (`LocalFrontier::robots_known`), in the places of
/// id, tag and token: the origin, until when, and its host's key ('' for
/// none), with the host's state, chk and why; always `ok`.
const SETTLE: &str = r#"
-- The members of ARGV[first..last] (score, member pairs) given with an
-- empty score leave the claim's gathered record, in one step.
local function forget(token, first, last)
  local gone = {}
  for j = first, last - 1, 2 do
    if ARGV[j] == '' then gone[#gone + 1] = ARGV[j + 1] end
  end
  if #gone > 0 then redis.call('HDEL', K('fx:' .. token), unpack(gone)) end
end
-- The members of ARGV[first..last] leave flight `id`'s own record too
-- (its first URLs; '' stands for the one it was released for), so its
-- lapse gives back only what is not done: a killed worker's pages are
-- fetched again only if their requests were out.
local function drop_done(id, token, first, last, state, chk, why)
  local raw = redis.call('HGET', K('fl'), id)
  if not raw then return end
  local f = cjson.decode(raw)
  if tostring(f[6]) ~= token then return end
  -- The holder's state of the host as its claim goes on (after its
  -- robots.txt, with the pacing that set): a lapse then leaves that.
  if state ~= '' then
    redis.call('HSET', K('state'), f[2], state)
    set_chk(f[2], chk)
    if why ~= '' then redis.call('HSET', K('why'), f[2], why) end
  end
  if last < first then return end
  local done = {}
  for j = first, last - 1, 2 do done[ARGV[j + 1]] = true end
  if done[''] and f[1] == 'P' then f[5] = '' end
  local extra, keep = f[7] or {}, {}
  for j = 1, #extra, 2 do
    if not done[extra[j]] then
      keep[#keep + 1] = extra[j]
      keep[#keep + 1] = extra[j + 1]
    end
  end
  f[7] = keep
  redis.call('HSET', K('fl'), id, cjson.encode(f))
end
local function settle(now, maxin, id, how, tag, token, first, last)
  if how == 'known' then
    local origin, key = id, token
    known(origin, tag)
    if key ~= '' then
      redis.call('HSET', K('state'), key, ARGV[first - 5])
      set_chk(key, ARGV[first - 4])
      if ARGV[first - 3] ~= '' then redis.call('HSET', K('why'), key, ARGV[first - 3]) end
      reschedule(key, now, maxin)
    end
    return 'ok'
  end
  if how == 'ack' then
    forget(token, first, last)
    drop_done(id, token, first, last, ARGV[first - 5], ARGV[first - 4], ARGV[first - 3])
    return 'ok'
  end
  local raw = redis.call('HGET', K('fl'), id)
  if not raw then return 'stale' end
  local f = cjson.decode(raw)
  if tostring(f[6]) ~= token then return 'stale' end
  redis.call('HDEL', K('fl'), id)
  redis.call('ZREM', K('lease'), id)
  local key = f[2]
  local inf = dec_inf(key)
  local state, chk, why = ARGV[first - 5], ARGV[first - 4], ARGV[first - 3]
  redis.call('HSET', K('state'), key, state)
  set_chk(key, chk)
  if why ~= '' then redis.call('HSET', K('why'), key, why) end
  if f[1] == 'R' then
    if tag ~= '0' then settle_known(f[3], tag) else settle_robots(f[3]) end
  elseif how == 'retry' then
    local _, origin, url = split(f[5])
    insert(key, tonumber(f[4]), tag .. '\t' .. origin .. '\t' .. url)
  elseif how == 'cancel' and f[5] ~= '' then insert(key, tonumber(f[4]), f[5]) end
  -- A claim's record goes whole: the members given leave it as they are
  -- read, instead of in a step of their own.
  local gone = {}
  if f[8] then
    for j = first, last - 1, 2 do
      if ARGV[j] == '' then gone[ARGV[j + 1]] = true end
    end
  else forget(token, first, last) end
  for j = first, last - 1, 2 do
    if ARGV[j] ~= '' then insert(key, tonumber(ARGV[j]), ARGV[j + 1]) end
  end
  if f[8] then unhold(key, f[6], gone) end
  reschedule(key, now, maxin, chk, inf)
  return 'ok'
end
local out = {}
local i = 2
while i <= #ARGV do
  T = ARGV[i]
  local first = i + 11
  local last = first + 2 * tonumber(ARGV[i + 10]) - 1
  out[#out + 1] = settle(clock(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4],
                         ARGV[i + 5], ARGV[i + 9], first, last)
  i = last + 1
end
return out
"#;

/// ARGV: T, now, max in flight, origin, key ('' for none), until, reason.
const ROBOTS_UNAVAILABLE: &str = r#"
local now, maxin, origin, key = clock(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
local gate = 'U' .. ARGV[6] .. '\t' .. ARGV[7]
local g = redis.call('HGET', K('rb'), origin)
if g and string.sub(g, 1, 1) == 'F' then redis.call('HSET', K('ua'), origin, gate)
else redis.call('HSET', K('rb'), origin, gate) end
if key ~= '' then reschedule(key, now, maxin) end
return 'ok'
"#;

/// ARGV: T, now, max in flight, key, min delay.
const BEGIN: &str = r#"
local now, maxin, key = clock(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local c = redis.call('HGET', K('chk'), key) or false
local v, at = judge(key, c, now, maxin)
if v == 'ok' then
  start(key, now, tonumber(ARGV[5]), c)
  return {'started', num_now(now), redis.call('HGET', K('state'), key) or ''}
elseif v == 'wait' then return {'wait', num_now(now), num(at)} end
return {'refused', num_now(now), redis.call('HGET', K('why'), key) or 'host skipped'}
"#;

/// ARGV: T, now, max in flight, key, state, chk, why.
const END: &str = r#"
local now, maxin, key = clock(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local inf = dec_inf(key)
redis.call('HSET', K('state'), key, ARGV[5])
set_chk(key, ARGV[6])
if ARGV[7] ~= '' then redis.call('HSET', K('why'), key, ARGV[7]) end
reschedule(key, now, maxin, ARGV[6], inf)
return 'ok'
"#;

/// KEYS: the board, its counter. ARGV: the board's key (unused), then
/// partitions that changed: each gets the next sequence number.
const BOARD: &str = r#"
local n = redis.call('INCR', KEYS[2])
local args = {}
for i = 2, #ARGV do
  args[#args + 1] = n
  args[#args + 1] = ARGV[i]
end
if #args > 0 then redis.call('ZADD', KEYS[1], unpack(args)) end
return n
"#;

/// The scripts, with the helpers prepended.
pub(crate) struct Scripts {
    pub enqueue: redis::Script,
    pub next: redis::Script,
    pub renew: redis::Script,
    pub settle: redis::Script,
    pub robots_unavailable: redis::Script,
    pub begin: redis::Script,
    pub end: redis::Script,
    pub board: redis::Script,
}

impl Scripts {
    /// Every script, to load them all at once.
    pub(crate) fn all(&self) -> [&redis::Script; 8] {
        [
            &self.enqueue,
            &self.next,
            &self.renew,
            &self.settle,
            &self.robots_unavailable,
            &self.begin,
            &self.end,
            &self.board,
        ]
    }

    pub(crate) fn new() -> Scripts {
        let s = |body: &str| redis::Script::new(&format!("{LIB}\n{body}"));
        Scripts {
            enqueue: s(ENQUEUE),
            next: s(NEXT),
            renew: s(RENEW),
            settle: s(SETTLE),
            robots_unavailable: s(ROBOTS_UNAVAILABLE),
            begin: s(BEGIN),
            end: s(END),
            board: s(BOARD),
        }
    }
}
