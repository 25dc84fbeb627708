"""Lua scripts of the Redis frontier state; the key layout is described in frontier_redis.py.

Each script runs atomically inside Redis on the keys of one shard, all of them passed in
KEYS, so it runs unchanged on one Redis and on Redis Cluster (where every key of a shard
carries the shard's hash tag, and so lives in one slot). The calling convention:

- KEYS: the shard's keys in ``SHARD_KEYS`` order, then four keys per host the call is
  about (its hash, its robots.txt, its URL records, its queue), in the order of
  ARGV's host names.
- ARGV[1] is the number of hosts H, ARGV[2..H+1] their names, and the script's own
  arguments start at ARGV[H+2] (``A`` in the scripts).

Selections (which hosts may be leased, which leases expired) read an index first and
then call a script with the keys of the hosts found; every script checks again what
it was told, so a host or URL that changed in between is skipped, never mishandled.

A URL record is one string, its fields joined by \\31 (``RECORD_FIELDS`` order, empty
trailing fields left out; an empty field is SQL's NULL). A queue member is the URL's
level (a byte, 0 for sitemaps and 1 for pages, then the depth as 4 bytes), its due_at
as an 8-byte big-endian double, then the URL: all members score 0, so ZRANGEBYLEX
walks a host's queue in SQL's ORDER BY kind = 'page', depth, due_at with due_at exact.

Numbers cross the Python/Lua boundary as strings: Python sends ``repr(float)`` and Lua
writes computed floats with ``%.17g``, so a stored time reads back as the same double
(Lua's own ``tostring`` keeps 14 digits, which would move a politeness deadline).
"""

from __future__ import annotations

# The shard's keys, passed first in KEYS by every script (names after the shard tag).
SHARD_KEYS = (
    "hosts",  # zset: every host, score -queued (hosts() order)
    "ready",  # zset: hosts with robots.txt ready and a URL due, score next_allowed_at
    "robots",  # zset: hosts needing robots.txt, nothing in flight, score next_allowed_at
    "parked",  # zset: hosts of either index kept out until their score (blocked_until, or the first due_at)
    "blocked",  # zset: every host with blocked_until > 0, score blocked_until
    "rttl",  # zset: hosts with robots ready, score robots_fetched_at
    "claims",  # zset: hosts whose robots.txt is being fetched, score claim time
    "leased",  # zset: every leased URL, score leased_at
    "recrawl",  # zset: every done or failed URL, score due_at
    "dues",  # zset: every due_at some queued URL has, as text and score
    "duecount",  # hash: due_at text -> queued URLs due then
    "n",  # hash: URLs per state (q l d f x), hosts fetching robots.txt (rf), pages fetched
    "minutes",  # hash: minute (epoch s // 60) -> pages fetched
)
HOST_KEYS = ("h", "r", "u", "q")  # hash, robots.txt string, URL records, queue

# Positions (1-based, as in Lua) of a URL record's fields.
RECORD_FIELDS = (
    "state", "depth", "kind", "due_at", "fail_count", "note", "lease_id",
    "fetched_at", "status", "content_hash", "etag", "last_modified", "interval_s",
)  # fmt: skip
STATE_LETTERS = {"queued": "q", "leased": "l", "done": "d", "failed": "f", "excluded": "x"}

_PRELUDE = r"""
local HOSTS, READY, ROBOTS, PARKED = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local BLOCKED, RTTL, CLAIMS, LEASED = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local RECRAWL, DUES, DUECOUNT, N, MINUTES = KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
local NS = 13  -- shard keys; the hosts' keys follow
local NH = tonumber(ARGV[1])
local A = NH + 2  -- where the script's own arguments start
local SEP = '\31'
local PAST_LEVEL = string.rep('\255', 9)
local F_STATE, F_DEPTH, F_KIND, F_DUE, F_FAILS, F_NOTE, F_LEASE = 1, 2, 3, 4, 5, 6, 7
local F_FETCHED = 8
local NFIELDS = 13

local function hname(i) return ARGV[1 + i] end
local function hkey(i) return KEYS[NS + 4 * i - 3] end
local function rkey(i) return KEYS[NS + 4 * i - 2] end
local function ukey(i) return KEYS[NS + 4 * i - 1] end
local function qkey(i) return KEYS[NS + 4 * i] end
local function fmt(x) return string.format('%.17g', x) end

-- The URL of a record's field: http URLs keep what follows the host, https ones
-- that with a '+' before it, any other URL is kept whole after a '!'.
local function full(i, rest)
  local c = string.sub(rest, 1, 1)
  if c == '+' then return 'https://' .. hname(i) .. string.sub(rest, 2) end
  if c == '!' then return string.sub(rest, 2) end
  return 'http://' .. hname(i) .. rest
end

local function rec_get(i, rest)
  local s = redis.call('HGET', ukey(i), rest)
  if not s then return nil end
  local t, pos = {}, 1
  while true do
    local j = string.find(s, SEP, pos, true)
    if not j then t[#t + 1] = string.sub(s, pos); break end
    t[#t + 1] = string.sub(s, pos, j - 1)
    pos = j + 1
  end
  for k = #t + 1, NFIELDS do t[k] = '' end
  return t
end

local function rec_put(i, rest, t)
  local n = NFIELDS
  while n > 1 and t[n] == '' do n = n - 1 end
  redis.call('HSET', ukey(i), rest, table.concat(t, SEP, 1, n))
end

local function member(t, rest)
  local level = (t[F_KIND] == '' and '\1' or '\0') .. struct.pack('>I4', tonumber(t[F_DEPTH]))
  local due = tonumber(t[F_DUE])
  if due <= 0 then due = 0 end  -- a negative double would sort last; it is due anyway
  return level .. struct.pack('>d', due) .. rest
end

-- Take a URL out of the index of its state, and its state's count.
local function leave(i, rest, t)
  local s = t[F_STATE]
  if s == 'q' then
    redis.call('ZREM', qkey(i), member(t, rest))
    if redis.call('HINCRBY', DUECOUNT, t[F_DUE], -1) <= 0 then
      redis.call('HDEL', DUECOUNT, t[F_DUE])
      redis.call('ZREM', DUES, t[F_DUE])
    end
  elseif s == 'l' then redis.call('ZREM', LEASED, full(i, rest))
  elseif s == 'd' or s == 'f' then redis.call('ZREM', RECRAWL, full(i, rest)) end
  redis.call('HINCRBY', N, s, -1)
end

-- Put a URL (its record already holding the new state) in its state's index.
-- Queued URLs are also counted by due_at (URLs admitted together share one), so that
-- counts() finds how many are not due yet without a zset of every queued URL.
-- `leased_at` is the score of a lease.
local function enter(i, rest, t, leased_at)
  local s = t[F_STATE]
  if s == 'q' then
    redis.call('ZADD', qkey(i), 0, member(t, rest))
    if redis.call('HINCRBY', DUECOUNT, t[F_DUE], 1) == 1 then redis.call('ZADD', DUES, t[F_DUE], t[F_DUE]) end
  elseif s == 'l' then redis.call('ZADD', LEASED, leased_at, full(i, rest))
  elseif s == 'd' or s == 'f' then redis.call('ZADD', RECRAWL, t[F_DUE], full(i, rest)) end
  redis.call('HINCRBY', N, s, 1)
end

-- The host's queued count, and its place in hosts() (queued desc, host asc).
-- Like SQL's UPDATE, nothing happens for a host that was never ensured.
local function add_queued(i, n)
  if redis.call('EXISTS', hkey(i)) == 1 then
    redis.call('HINCRBY', hkey(i), 'queued', n)
    redis.call('ZINCRBY', HOSTS, -n, hname(i))
  end
end

local function release_slot(i)
  local inflight = redis.call('HGET', hkey(i), 'inflight')
  if inflight then redis.call('HSET', hkey(i), 'inflight', math.max(tonumber(inflight) - 1, 0)) end
end

-- The earliest due_at of a host's queue: the first member of each level.
local function earliest(i)
  local cursor, best = '-', nil
  while true do
    local m = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not m then return best end
    local due = struct.unpack('>d', m, 6)
    if not best or due < best then best = due end
    cursor = '(' .. string.sub(m, 1, 5) .. PAST_LEVEL
  end
end

-- Put a host in the one index it belongs to (READY, ROBOTS, PARKED or none), and keep
-- its 'due' field (the earliest due_at of its queue) for the selections. A host is
-- parked until its block passes and, for READY, until its first URL is due; every
-- selection first promotes the parked hosts whose time has come, so parking is always
-- safe, and `now` (nil: the caller has no clock) only saves a promotion.
local function place(i, now)
  local h = hname(i)
  redis.call('ZREM', READY, h)
  redis.call('ZREM', ROBOTS, h)
  redis.call('ZREM', PARKED, h)
  local f = redis.call('HMGET', hkey(i), 'queued', 'robots_state', 'next_allowed_at', 'blocked_until', 'paused', 'inflight',
    'robots_retry_at')
  if not f[1] or tonumber(f[1]) <= 0 then return end
  local first = earliest(i)
  if not first then return end
  redis.call('HSET', hkey(i), 'due', fmt(first))
  if f[5] == '1' then return end  -- a paused host is in no index: no selection sees it
  local target, wait = nil, tonumber(f[4])
  if f[2] == 'ready' then
    target = READY
    if first > wait then wait = first end
  elseif f[2] == 'unknown' and tonumber(f[6]) == 0 then
    target = ROBOTS
  elseif f[2] == 'failed' and tonumber(f[6]) == 0 then
    -- Given up over its robots.txt: asked for it again at its retry time, not before.
    target = ROBOTS
    local retry = tonumber(f[7] or '0')
    if retry > wait then wait = retry end
  end
  if not target then return end
  if now and wait <= now then
    redis.call('ZADD', target, f[3], h)
  else
    redis.call('ZADD', PARKED, fmt(wait), h)
  end
end

-- Whether host h's score in an index is at or before cutoff; if so it leaves the index.
local function take_expired(index, h, cutoff)
  local score = redis.call('ZSCORE', index, h)
  if not score or tonumber(score) > cutoff then return false end
  redis.call('ZREM', index, h)
  return true
end

local function set_fetching(from_fetching, to_fetching)
  if from_fetching and not to_fetching then redis.call('HINCRBY', N, 'rf', -1) end
  if to_fetching and not from_fetching then redis.call('HINCRBY', N, 'rf', 1) end
end

-- update_host: ARGV[from..] are field, value pairs (robots_txt goes to its own key);
-- `release` ends one fetch in flight and restarts the clock from now.
local function update_host(i, now, release, from)
  local k, h = hkey(i), hname(i)
  if redis.call('EXISTS', k) == 0 then return 0 end
  local old_state = redis.call('HGET', k, 'robots_state')
  local sets = {}
  for j = from, #ARGV, 2 do
    if ARGV[j] == 'robots_txt' then
      redis.call('SET', rkey(i), ARGV[j + 1])
    else
      sets[#sets + 1] = ARGV[j]
      sets[#sets + 1] = ARGV[j + 1]
    end
  end
  if #sets > 0 then redis.call('HSET', k, unpack(sets)) end
  if release then
    -- The gap is measured from the end of the last response, not from its lease.
    local f = redis.call('HMGET', k, 'inflight', 'next_allowed_at', 'delay_s')
    redis.call('HSET', k, 'inflight', math.max(tonumber(f[1]) - 1, 0),
      'next_allowed_at', fmt(math.max(tonumber(f[2]), now + tonumber(f[3]))))
  end
  local f = redis.call('HMGET', k, 'robots_state', 'robots_fetched_at', 'blocked_until')
  set_fetching(old_state == 'fetching', f[1] == 'fetching')
  if f[1] ~= 'fetching' then redis.call('ZREM', CLAIMS, h) end
  if f[1] == 'ready' and f[2] then redis.call('ZADD', RTTL, f[2], h) else redis.call('ZREM', RTTL, h) end
  if tonumber(f[3]) > 0 then redis.call('ZADD', BLOCKED, f[3], h) else redis.call('ZREM', BLOCKED, h) end
  place(i, now)
  return 1
end
"""

# ARGV[A..]: scheme, delay_s. One host.
ENSURE_HOST = _PRELUDE + r"""
if redis.call('EXISTS', hkey(1)) == 1 then return 0 end
redis.call('HSET', hkey(1), 'host', hname(1), 'scheme', ARGV[A], 'delay_s', ARGV[A + 1], 'robots_state', 'unknown',
  'robots_failures', 0, 'next_allowed_at', 0, 'inflight', 0, 'blocked_until', 0, 'block_reason', '',
  'fail_streak', 0, 'admitted', 0, 'queued', 0, 'paused', 0, 'robots_retry_at', 0)
redis.call('ZADD', HOSTS, 0, hname(1))
return 1
"""

# Read only. Each host's hash (as field, value pairs) and robots.txt (false if none).
GET_HOSTS = _PRELUDE + r"""
local out = {}
for i = 1, NH do
  out[#out + 1] = redis.call('HGETALL', hkey(i))
  out[#out + 1] = redis.call('GET', rkey(i))
end
return out
"""

# Read only. ARGV[A..]: now, cap. Per host: its FIELDS (below) and how many of its
# queued URLs are due by now, counted up to cap: what a selection needs to pick hosts
# exactly as the SQL query does.
PICK_INFO = _PRELUDE + r"""
local now, cap = tonumber(ARGV[A]), tonumber(ARGV[A + 1])
local due_bound = struct.pack('>d', now > 0 and now or 0) .. '\255'
local out = {}
for i = 1, NH do
  local f = redis.call('HMGET', hkey(i), 'robots_state', 'inflight', 'blocked_until', 'queued', 'delay_s', 'paused',
    'next_allowed_at')
  local due, cursor = 0, '-'
  while due < cap do
    local first = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not first then break end
    local level = string.sub(first, 1, 5)
    due = due + #redis.call('ZRANGEBYLEX', qkey(i), '[' .. level, '[' .. level .. due_bound, 'LIMIT', 0, cap - due)
    cursor = '(' .. level .. PAST_LEVEL
  end
  f[#f + 1] = redis.call('HGET', hkey(i), 'robots_retry_at') or '0'  -- absent in a host made before it
  f[#f + 1] = due
  out[#out + 1] = f
end
return out
"""
PICK_FIELDS = ("robots_state", "inflight", "blocked_until", "queued", "delay_s", "paused", "next_allowed_at",
               "robots_retry_at", "due")  # fmt: skip

# ARGV[A..]: now. Hosts whose parked time has come go back to their index.
PROMOTE = _PRELUDE + r"""
local now = tonumber(ARGV[A])
for i = 1, NH do
  local score = redis.call('ZSCORE', PARKED, hname(i))
  if score and tonumber(score) <= now then place(i, now) end
end
return 0
"""

# ARGV[A..]: now. Claims each host's robots.txt if it still may be fetched now; returns,
# per claimed host, its index, its hash as it was and its robots.txt.
CLAIM_ROBOTS = _PRELUDE + r"""
local now_s = ARGV[A]
local now = tonumber(now_s)
local out = {}
for i = 1, NH do
  local k = hkey(i)
  local f = redis.call('HMGET', k, 'robots_state', 'inflight', 'blocked_until', 'queued', 'paused', 'next_allowed_at', 'delay_s')
  local retry = tonumber(redis.call('HGET', k, 'robots_retry_at') or '0')
  if (f[1] == 'unknown' or (f[1] == 'failed' and retry <= now)) and tonumber(f[2]) == 0 and tonumber(f[3]) <= now
      and tonumber(f[4]) > 0 and f[5] ~= '1' and tonumber(f[6]) <= now then
    out[#out + 1] = {i, redis.call('HGETALL', k), redis.call('GET', rkey(i))}
    redis.call('HSET', k, 'robots_state', 'fetching', 'next_allowed_at', fmt(now + tonumber(f[7])))
    redis.call('HINCRBY', k, 'inflight', 1)
    set_fetching(false, true)
    redis.call('ZREM', RTTL, hname(i))
    redis.call('ZADD', CLAIMS, now_s, hname(i))
    place(i, now)
  end
end
return out
"""

# ARGV[A..]: cutoff (claims made at or before it expire), now. Returns the hosts released.
EXPIRE_ROBOTS_CLAIMS = _PRELUDE + r"""
local cutoff, now = tonumber(ARGV[A]), tonumber(ARGV[A + 1])
local out = {}
for i = 1, NH do
  if take_expired(CLAIMS, hname(i), cutoff) and redis.call('HGET', hkey(i), 'robots_state') == 'fetching' then
    redis.call('HSET', hkey(i), 'robots_state', 'unknown')
    release_slot(i)
    set_fetching(true, false)
    place(i, now)
    out[#out + 1] = hname(i)
  end
end
return out
"""

# ARGV[A..]: cutoff (robots.txt fetched at or before it expires). Returns the hosts sent back.
EXPIRE_ROBOTS = _PRELUDE + r"""
local cutoff = tonumber(ARGV[A])
local out = {}
for i = 1, NH do
  if take_expired(RTTL, hname(i), cutoff) and redis.call('HGET', hkey(i), 'robots_state') == 'ready' then
    redis.call('HSET', hkey(i), 'robots_state', 'unknown')
    place(i, nil)
    out[#out + 1] = hname(i)
  end
end
return out
"""

# ARGV[A..]: now, release (1/0), then field, value pairs to set (robots_txt among them
# goes to its own key). One host.
UPDATE_HOST = _PRELUDE + r"""
return update_host(1, tonumber(ARGV[A]), ARGV[A + 1] == '1', A + 2)
"""

# ARGV[A..]: now, host_budget, then per URL: host index, rest, depth, kind, state, note.
# Returns the 1-based positions of the URLs queued.
ADD_URLS = _PRELUDE + r"""
local now_s, budget = ARGV[A], tonumber(ARGV[A + 1])
local now = tonumber(now_s)
local added, touched, n = {}, {}, 0
for j = A + 2, #ARGV, 6 do
  n = n + 1
  local i, rest, depth, kind, state, note = tonumber(ARGV[j]), ARGV[j + 1], ARGV[j + 2], ARGV[j + 3], ARGV[j + 4], ARGV[j + 5]
  if state == 'q' then
    local admitted = redis.call('HGET', hkey(i), 'admitted')
    if admitted and tonumber(admitted) >= budget then state, note = 'x', 'host_budget' end
  end
  if redis.call('HEXISTS', ukey(i), rest) == 0 then
    local t = {state, depth, kind == 'page' and '' or kind, now_s, '', note, '', '', '', '', '', '', ''}
    rec_put(i, rest, t)
    enter(i, rest, t)
    if state == 'q' then
      if redis.call('EXISTS', hkey(i)) == 1 then redis.call('HINCRBY', hkey(i), 'admitted', 1) end
      add_queued(i, 1)
      touched[i] = true
      added[#added + 1] = n
    end
  end
end
for i in pairs(touched) do place(i, now) end
return added
"""

# ARGV[A..]: rest, now, states it may come back from (letters), clear the note (1/0).
# Back to the queue, due now, failures forgotten (requeue_seed and requeue). One host.
REQUEUE = _PRELUDE + r"""
local rest, now_s = ARGV[A], ARGV[A + 1]
local t = rec_get(1, rest)
if not t or not string.find(ARGV[A + 2], t[F_STATE], 1, true) then return 0 end
leave(1, rest, t)
t[F_STATE], t[F_DUE], t[F_FAILS] = 'q', now_s, ''
-- requeue_seed starts the seed afresh; requeue keeps the note of the last fetch, as SQL does.
if ARGV[A + 3] == '1' then t[F_NOTE] = '' end
rec_put(1, rest, t)
enter(1, rest, t)
add_queued(1, 1)
place(1, tonumber(now_s))
return 1
"""

# ARGV[A..]: now, parallelism, lease id base, then the slots to fill per host, in host
# order. Each host is checked again (robots ready, not paused or blocked, its clock and
# its free slots); its due URLs are taken level by level, each in due_at order.
# Returns {url, host, lease_id, depth, etag, last_modified, kind} per lease.
LEASE = _PRELUDE + r"""
local now_s = ARGV[A]
local now, par = tonumber(now_s), tonumber(ARGV[A + 1])
local due_bound = struct.pack('>d', now > 0 and now or 0) .. '\255'
local out, n = {}, 0
for i = 1, NH do
  local k = hkey(i)
  local f = redis.call('HMGET', k, 'robots_state', 'inflight', 'blocked_until', 'queued', 'delay_s', 'paused', 'next_allowed_at')
  local host_par = par
  if f[5] and tonumber(f[5]) > 0 then host_par = 1 end
  local slots = tonumber(ARGV[A + 2 + i])
  if f[1] == 'ready' and f[6] ~= '1' and tonumber(f[3]) <= now and tonumber(f[4]) > 0 and tonumber(f[7]) <= now then
    slots = math.min(slots, host_par - tonumber(f[2]))
  else
    slots = 0
  end
  local got, cursor = 0, '-'
  while got < slots do
    local first = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not first then break end
    local level = string.sub(first, 1, 5)
    local due = redis.call('ZRANGEBYLEX', qkey(i), '[' .. level, '[' .. level .. due_bound, 'LIMIT', 0, slots - got)
    for _, m in ipairs(due) do
      local rest = string.sub(m, 14)
      local t = rec_get(i, rest)
      n, got = n + 1, got + 1
      local id = ARGV[A + 2] .. '-' .. n
      leave(i, rest, t)
      t[F_STATE], t[F_LEASE] = 'l', id
      rec_put(i, rest, t)
      enter(i, rest, t, now_s)
      out[#out + 1] = {full(i, rest), hname(i), id, t[F_DEPTH], t[11], t[12], t[F_KIND] == '' and 'page' or t[F_KIND]}
    end
    cursor = '(' .. level .. PAST_LEVEL
  end
  if got > 0 then
    redis.call('HINCRBY', k, 'inflight', got)
    add_queued(i, -got)
    redis.call('HSET', k, 'next_allowed_at', fmt(now + tonumber(f[5])))
    place(i, now)
  end
end
return out
"""

# ARGV[A..]: rest, lease_id, now ('': no host update), how many record pairs follow,
# then position, value pairs of the outcome's record fields (the state among them),
# then field, value pairs of the host update. One host. Returns 0 for a stale or
# repeated outcome, and then changes nothing.
FINISH = _PRELUDE + r"""
local rest = ARGV[A]
local t = rec_get(1, rest)
if not t or t[F_STATE] ~= 'l' or t[F_LEASE] ~= ARGV[A + 1] then return 0 end
local host_from = A + 4 + 2 * tonumber(ARGV[A + 3])
leave(1, rest, t)
for j = A + 4, host_from - 1, 2 do t[tonumber(ARGV[j])] = ARGV[j + 1] end
t[F_LEASE] = ''
rec_put(1, rest, t)
enter(1, rest, t)
if ARGV[A + 2] ~= '' then update_host(1, tonumber(ARGV[A + 2]), true, host_from) end
if t[F_STATE] == 'q' then
  add_queued(1, 1)
  place(1, nil)
elseif t[F_STATE] == 'd' and t[F_KIND] == '' then
  redis.call('HINCRBY', N, 'fetched', 1)
  local fetched_at = tonumber(t[F_FETCHED])
  if fetched_at then
    local minute = math.floor(fetched_at / 60)
    redis.call('HINCRBY', MINUTES, string.format('%d', minute), 1)
    -- A day is kept: the minute that has just fallen out goes (a gap leaves a stray
    -- field behind, which fetch_history skips by its age).
    redis.call('HDEL', MINUTES, string.format('%d', minute - 1440))
  end
end
return 1
"""

# ARGV[A..]: rest, now, state letter, note. One host.
UNLEASE = _PRELUDE + r"""
local rest, now = ARGV[A], tonumber(ARGV[A + 1])
local t = rec_get(1, rest)
if not t or t[F_STATE] ~= 'l' then return 0 end
leave(1, rest, t)
t[F_STATE], t[F_NOTE], t[F_LEASE] = ARGV[A + 2], ARGV[A + 3], ''
rec_put(1, rest, t)
enter(1, rest, t)
release_slot(1)
if t[F_STATE] == 'q' then add_queued(1, 1) end
place(1, now)
return 1
"""

# ARGV[A..]: cutoff (leased at or before it expire), now, then host index, rest per URL.
EXPIRE_LEASES = _PRELUDE + r"""
local cutoff, now = tonumber(ARGV[A]), tonumber(ARGV[A + 1])
local touched, n = {}, 0
for j = A + 2, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local score = redis.call('ZSCORE', LEASED, full(i, rest))
  if score and tonumber(score) <= cutoff then
    local t = rec_get(i, rest)
    if t and t[F_STATE] == 'l' then
      leave(i, rest, t)
      t[F_STATE], t[F_LEASE] = 'q', ''
      rec_put(i, rest, t)
      enter(i, rest, t)
      release_slot(i)
      add_queued(i, 1)
      touched[i] = true
      n = n + 1
    else
      redis.call('ZREM', LEASED, full(i, rest))
    end
  end
end
for i in pairs(touched) do place(i, now) end
return n
"""

# ARGV[A..]: state letter, note, due_at ('' keeps it), then host index, rest per URL.
DROP_QUEUED = _PRELUDE + r"""
local state, note, due = ARGV[A], ARGV[A + 1], ARGV[A + 2]
local touched, n = {}, 0
for j = A + 3, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local t = rec_get(i, rest)
  if t and t[F_STATE] == 'q' then
    leave(i, rest, t)
    t[F_STATE], t[F_NOTE] = state, note
    if due ~= '' then t[F_DUE] = due end
    rec_put(i, rest, t)
    enter(i, rest, t)
    add_queued(i, -1)
    touched[i] = true
    n = n + 1
  end
end
for i in pairs(touched) do place(i, nil) end
return n
"""

# ARGV[A..]: now, then host index, rest per URL (done or failed ones due by now).
SWEEP_RECRAWL = _PRELUDE + r"""
local now = tonumber(ARGV[A])
local touched, n = {}, 0
for j = A + 1, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local score = redis.call('ZSCORE', RECRAWL, full(i, rest))
  local t = score and tonumber(score) <= now and rec_get(i, rest)
  if t and (t[F_STATE] == 'd' or t[F_STATE] == 'f') then
    leave(i, rest, t)
    t[F_STATE], t[F_FAILS] = 'q', ''
    rec_put(i, rest, t)
    enter(i, rest, t)
    add_queued(i, 1)
    touched[i] = true
    n = n + 1
  end
end
for i in pairs(touched) do place(i, now) end
return n
"""

# Read only. ARGV[A..]: limit per host (negative: all). Per host, its queued URLs with
# the soonest due_at, as {url, due_at} pairs.
UPCOMING = _PRELUDE + r"""
local limit = tonumber(ARGV[A])
local out = {}
for i = 1, NH do
  local cursor = '-'
  while true do
    local first = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not first then break end
    local level = string.sub(first, 1, 5)
    local take = limit >= 0 and limit or -1
    for _, m in ipairs(redis.call('ZRANGEBYLEX', qkey(i), '[' .. level, '[' .. level .. PAST_LEVEL, 'LIMIT', 0, take)) do
      out[#out + 1] = full(i, string.sub(m, 14))
      out[#out + 1] = fmt(struct.unpack('>d', m, 6))
    end
    cursor = '(' .. level .. PAST_LEVEL
  end
end
return out
"""

# ARGV[A..]: rest, note. A done URL's note is set; nothing else of it changes. One
# host; 0 if the URL is not done.
NOTE_FETCHED = _PRELUDE + r"""
local rest = ARGV[A]
local t = rec_get(1, rest)
if not t or t[F_STATE] ~= 'd' then return 0 end
t[F_NOTE] = ARGV[A + 1]
rec_put(1, rest, t)
return 1
"""

# ARGV[A..]: paused (1/0), now. One host; 0 for an unknown host.
SET_PAUSED = _PRELUDE + r"""
if redis.call('EXISTS', hkey(1)) == 0 then return 0 end
redis.call('HSET', hkey(1), 'paused', ARGV[A])
place(1, tonumber(ARGV[A + 1]))
return 1
"""

# ARGV[A..]: now, then rests of the host's URLs. Queued, done and failed ones become
# queued and due now (or as they were, if earlier), failures forgotten; returns how many.
RECRAWL_URLS = _PRELUDE + r"""
local now_s = ARGV[A]
local now = tonumber(now_s)
local n = 0
for j = A + 1, #ARGV do
  local rest = ARGV[j]
  local t = rec_get(1, rest)
  if t and (t[F_STATE] == 'q' or t[F_STATE] == 'd' or t[F_STATE] == 'f') then
    local was = t[F_STATE]
    leave(1, rest, t)
    if tonumber(t[F_DUE]) > now then t[F_DUE] = now_s end  -- SQL's MIN(due_at, now)
    t[F_STATE], t[F_FAILS] = 'q', ''
    rec_put(1, rest, t)
    enter(1, rest, t)
    if was ~= 'q' then add_queued(1, 1) end
    n = n + 1
  end
end
place(1, now)
return n
"""

# ARGV[A..]: note, now, then host index, rest per URL. Excluded URLs with this note are
# queued again, due now, note and failures cleared; returns how many.
READMIT = _PRELUDE + r"""
local note, now_s = ARGV[A], ARGV[A + 1]
local touched, n = {}, 0
for j = A + 2, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local t = rec_get(i, rest)
  if t and t[F_STATE] == 'x' and t[F_NOTE] == note then
    leave(i, rest, t)
    t[F_STATE], t[F_NOTE], t[F_DUE], t[F_FAILS] = 'q', '', now_s, ''
    rec_put(i, rest, t)
    enter(i, rest, t)
    add_queued(i, 1)
    touched[i] = true
    n = n + 1
  end
end
for i in pairs(touched) do place(i, tonumber(now_s)) end
return n
"""
