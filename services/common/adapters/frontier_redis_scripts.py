"""Lua scripts of the Redis frontier state; the key layout is described in frontier_redis.py.

Each script runs atomically inside Redis, so two schedulers never interleave inside one
FrontierState call. ARGV[1] is always the key prefix. Keys are built inside the scripts
(a URL's or a host's keys cannot be known before reading), which standalone Redis,
Sentinel and managed single-primary Redis allow, but Redis Cluster does not.

Numbers cross the Python/Lua boundary as strings: Python sends ``repr(float)`` and Lua
writes computed floats with ``%.17g``, so a stored time reads back as the same double
(Lua's own ``tostring`` keeps 14 digits, which would move a politeness deadline).
"""

from __future__ import annotations

_PRELUDE = r"""
local P = ARGV[1]
local HOSTS = P .. 'hosts'                  -- zset: every host, score -queued (hosts() order)
local READY = P .. 'hosts:ready'            -- zset: leasable hosts, score next_allowed_at
local ROBOTS = P .. 'hosts:robots'          -- zset: hosts needing robots.txt, score next_allowed_at
local PARKED = P .. 'hosts:parked'          -- zset: READY/ROBOTS hosts kept out while blocked, score blocked_until
local BLOCKED = P .. 'hosts:blocked'        -- zset: every host with blocked_until > 0, score blocked_until
local ROBOTS_TTL = P .. 'hosts:robots_ttl'  -- zset: hosts with robots ready, score robots_fetched_at
local CLAIMS = P .. 'hosts:robots_claims'   -- zset: hosts with robots fetching, score claimed at
local BY_ROBOTS = P .. 'hosts:by_robots_state'  -- hash: robots_state -> number of hosts
local QUEUED = P .. 'urls:queued'           -- zset: every queued URL, score due_at
local LEASED = P .. 'urls:leased'           -- zset: every leased URL, score leased_at
local RECRAWL = P .. 'urls:recrawl'         -- zset: every done or failed URL, score due_at
local BY_STATE = P .. 'urls:by_state'       -- hash: URL state -> number of URLs
local COUNTERS = P .. 'counters'            -- hash: bump() names and 'fetched'
local MINUTES = P .. 'fetched:minutes'      -- hash: minute (epoch s // 60) -> pages fetched
local HOST_URLS_COMPLETE = P .. 'hu:complete'  -- set once every URL is in its host's hu: set

local function hkey(h) return P .. 'h:' .. h end
local function ukey(u) return P .. 'u:' .. u end
local function qkey(h, lvl) return P .. 'q:' .. h .. ':' .. lvl end
local function lkey(h) return P .. 'ql:' .. h end
local function hukey(h) return P .. 'hu:' .. h end
local function fmt(x) return string.format('%.17g', x) end

local function count_state(from, to)
  if from then redis.call('HINCRBY', BY_STATE, from, -1) end
  if to then redis.call('HINCRBY', BY_STATE, to, 1) end
end

-- The host's queued count, and its place in hosts() (queued desc, host asc).
-- Like SQL's UPDATE, nothing happens for a host that was never ensured.
local function add_queued(h, n)
  if redis.call('EXISTS', hkey(h)) == 1 then
    redis.call('HINCRBY', hkey(h), 'queued', n)
    redis.call('ZINCRBY', HOSTS, -n, h)
  end
end

local function release_slot(h)
  local k = hkey(h)
  local inflight = redis.call('HGET', k, 'inflight')
  if inflight then
    redis.call('HSET', k, 'inflight', math.max(tonumber(inflight) - 1, 0))
  end
end

-- A host's queue is split in levels, leased in level order: every non-page kind
-- (sitemaps) first, then pages, each by depth; within a level, by due_at. That is
-- SQL's ORDER BY kind = 'page', depth, due_at, with due_at an exact score.
local function level(kind, d)
  if kind == 'page' then return d, d end
  return 's' .. d, fmt(tonumber(d) - 1e15)
end

local function enqueue(u, h, lvl, lscore, due)
  redis.call('ZADD', qkey(h, lvl), due, u)
  redis.call('ZADD', lkey(h), lscore, lvl)
  redis.call('ZADD', QUEUED, due, u)
end

local function dequeue(u, h, lvl)
  local k = qkey(h, lvl)
  redis.call('ZREM', k, u)
  if redis.call('EXISTS', k) == 0 then redis.call('ZREM', lkey(h), lvl) end
  redis.call('ZREM', QUEUED, u)
end

local function is_finished(state) return state == 'done' or state == 'failed' end

-- Move a URL from one state to another (old is nil for a new URL) once its hash
-- holds the new fields: takes it out of the old state's index, puts it in the new
-- one's and keeps the counts by state. Host counters are the caller's business.
local function move(u, old, new)
  local f = redis.call('HMGET', ukey(u), 'host', 'depth', 'kind', 'due_at', 'leased_at')
  local lvl, lscore = level(f[3] or 'page', f[2])
  if old == 'queued' then dequeue(u, f[1], lvl)
  elseif old == 'leased' then redis.call('ZREM', LEASED, u)
  elseif is_finished(old) then redis.call('ZREM', RECRAWL, u) end
  if new == 'queued' then enqueue(u, f[1], lvl, lscore, f[4])
  elseif new == 'leased' then redis.call('ZADD', LEASED, f[5], u)
  elseif is_finished(new) then redis.call('ZADD', RECRAWL, f[4], u) end
  count_state(old, new)
end

-- Put a host in the one index it belongs to (READY, ROBOTS, PARKED or none).
-- Parking is always safe: every selection first promotes parked hosts whose block has
-- passed, and re-checks blocked_until itself. So `now` (nil when the caller has no
-- clock) only decides whether a blocked host costs a promotion or a skipped scan entry.
local function place(h, now)
  local f = redis.call('HMGET', hkey(h), 'queued', 'robots_state', 'next_allowed_at', 'blocked_until', 'paused')
  local target
  -- A paused host is in no index, so no selection ever sees it.
  if f[1] and tonumber(f[1]) > 0 and f[5] ~= '1' then
    if f[2] == 'ready' then target = READY elseif f[2] == 'unknown' then target = ROBOTS end
  end
  if not target then
    redis.call('ZREM', READY, h)
    redis.call('ZREM', ROBOTS, h)
    redis.call('ZREM', PARKED, h)
    return
  end
  local blocked = tonumber(f[4])
  local parked
  if now then
    parked = blocked > now
  elseif redis.call('ZSCORE', PARKED, h) then
    parked = true
  elseif redis.call('ZSCORE', READY, h) or redis.call('ZSCORE', ROBOTS, h) then
    parked = false
  else
    parked = blocked > 0
  end
  if parked then
    redis.call('ZREM', READY, h)
    redis.call('ZREM', ROBOTS, h)
    redis.call('ZADD', PARKED, f[4], h)
  else
    redis.call('ZREM', PARKED, h)
    if target == READY then redis.call('ZREM', ROBOTS, h) else redis.call('ZREM', READY, h) end
    redis.call('ZADD', target, f[3], h)
  end
end

-- Hosts whose block has passed go back to READY or ROBOTS.
local function promote(now_s, now)
  local hosts = redis.call('ZRANGEBYSCORE', PARKED, '-inf', now_s)
  for _, h in ipairs(hosts) do
    redis.call('ZREM', PARKED, h)
    place(h, now)
  end
end

local function set_robots_state(h, old, new)
  if old ~= new then
    if old then redis.call('HINCRBY', BY_ROBOTS, old, -1) end
    redis.call('HINCRBY', BY_ROBOTS, new, 1)
  end
end
"""

# ARGV: prefix, host, scheme, delay_s
ENSURE_HOST = _PRELUDE + r"""
local h = ARGV[2]
if redis.call('EXISTS', hkey(h)) == 1 then return 0 end
-- The first host of a new frontier: every URL will go through ADD_URLS, so every host's
-- URL set is complete (a frontier from before the sets gets them from a scan instead).
if redis.call('EXISTS', HOSTS) == 0 then redis.call('SET', HOST_URLS_COMPLETE, 1) end
redis.call('HSET', hkey(h), 'host', h, 'scheme', ARGV[3], 'delay_s', ARGV[4], 'robots_state', 'unknown',
  'robots_failures', 0, 'next_allowed_at', 0, 'inflight', 0, 'blocked_until', 0, 'block_reason', '',
  'fail_streak', 0, 'admitted', 0, 'queued', 0, 'paused', 0)
redis.call('ZADD', HOSTS, 0, h)
redis.call('HINCRBY', BY_ROBOTS, 'unknown', 1)
return 1
"""

# ARGV: prefix, now, limit. Returns each claimed host's fields as they were before the claim.
CLAIM_ROBOTS = _PRELUDE + r"""
local now_s, limit = ARGV[2], tonumber(ARGV[3])
local now = tonumber(now_s)
promote(now_s, now)
local chosen, offset = {}, 0
-- A negative limit means no limit, as in SQL.
while limit < 0 or #chosen < limit do
  local batch = redis.call('ZRANGEBYSCORE', ROBOTS, '-inf', now_s, 'LIMIT', offset, 256)
  if #batch == 0 then break end
  for _, h in ipairs(batch) do
    local f = redis.call('HMGET', hkey(h), 'robots_state', 'inflight', 'blocked_until', 'queued')
    if f[1] == 'unknown' and tonumber(f[2]) == 0 and tonumber(f[3]) <= now and tonumber(f[4]) > 0 then
      chosen[#chosen + 1] = h
      if #chosen == limit then break end
    end
  end
  offset = offset + #batch
end
local out = {}
for _, h in ipairs(chosen) do
  local k = hkey(h)
  out[#out + 1] = redis.call('HGETALL', k)
  local delay = tonumber(redis.call('HGET', k, 'delay_s'))
  redis.call('HSET', k, 'robots_state', 'fetching', 'next_allowed_at', fmt(now + delay))
  redis.call('HINCRBY', k, 'inflight', 1)
  set_robots_state(h, 'unknown', 'fetching')
  redis.call('ZREM', ROBOTS_TTL, h)
  redis.call('ZADD', CLAIMS, now_s, h)
  place(h, now)
end
return out
"""

# ARGV: prefix, cutoff (claims made at or before it expire), now
EXPIRE_ROBOTS_CLAIMS = _PRELUDE + r"""
local hosts = redis.call('ZRANGEBYSCORE', CLAIMS, '-inf', ARGV[2])
local out = {}
for _, h in ipairs(hosts) do
  redis.call('ZREM', CLAIMS, h)
  if redis.call('HGET', hkey(h), 'robots_state') == 'fetching' then
    redis.call('HSET', hkey(h), 'robots_state', 'unknown')
    release_slot(h)
    set_robots_state(h, 'fetching', 'unknown')
    place(h, tonumber(ARGV[3]))
    out[#out + 1] = h
  end
end
return out
"""

# ARGV: prefix, cutoff (robots fetched at or before it expire)
EXPIRE_ROBOTS = _PRELUDE + r"""
local hosts = redis.call('ZRANGEBYSCORE', ROBOTS_TTL, '-inf', ARGV[2])
for _, h in ipairs(hosts) do
  redis.call('HSET', hkey(h), 'robots_state', 'unknown')
  set_robots_state(h, 'ready', 'unknown')
  redis.call('ZREM', ROBOTS_TTL, h)
  place(h, tonumber(ARGV[2]))
end
return hosts
"""

# ARGV: prefix, host, now, release (1/0), then field, value pairs to set
UPDATE_HOST = _PRELUDE + r"""
local h, now = ARGV[2], tonumber(ARGV[3])
local k = hkey(h)
if redis.call('EXISTS', k) == 0 then return 0 end
local old_state = redis.call('HGET', k, 'robots_state')
if #ARGV > 4 then
  local sets = {}
  for i = 5, #ARGV do sets[#sets + 1] = ARGV[i] end
  redis.call('HSET', k, unpack(sets))
end
if ARGV[4] == '1' then
  -- The gap is measured from the end of the last response, not from its lease.
  local f = redis.call('HMGET', k, 'inflight', 'next_allowed_at', 'delay_s')
  redis.call('HSET', k, 'inflight', math.max(tonumber(f[1]) - 1, 0),
    'next_allowed_at', fmt(math.max(tonumber(f[2]), now + tonumber(f[3]))))
end
local f = redis.call('HMGET', k, 'robots_state', 'robots_fetched_at', 'blocked_until')
set_robots_state(h, old_state, f[1])
if f[1] ~= 'fetching' then redis.call('ZREM', CLAIMS, h) end
if f[1] == 'ready' and f[2] then
  redis.call('ZADD', ROBOTS_TTL, f[2], h)
else
  redis.call('ZREM', ROBOTS_TTL, h)
end
if tonumber(f[3]) > 0 then redis.call('ZADD', BLOCKED, f[3], h) else redis.call('ZREM', BLOCKED, h) end
place(h, now)
return 1
"""

# ARGV: prefix, now, host_budget, then url, host, depth, kind, state, note per URL.
# Returns the 1-based positions of the URLs queued.
ADD_URLS = _PRELUDE + r"""
local now_s, budget = ARGV[2], tonumber(ARGV[3])
local added, touched, n = {}, {}, 0
for i = 4, #ARGV, 6 do
  n = n + 1
  local u, h, d, kind, state, note = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  if state == 'queued' then
    local admitted = redis.call('HGET', hkey(h), 'admitted')
    if admitted and tonumber(admitted) >= budget then state, note = 'excluded', 'host_budget' end
  end
  local uk = ukey(u)
  if redis.call('EXISTS', uk) == 0 then
    redis.call('HSET', uk, 'host', h, 'depth', d, 'kind', kind, 'state', state, 'due_at', now_s,
      'discovered_at', now_s, 'note', note, 'fail_count', 0)
    move(u, nil, state)
    if state ~= 'excluded' then redis.call('SADD', hukey(h), u) end
    if state == 'queued' then
      if redis.call('EXISTS', hkey(h)) == 1 then redis.call('HINCRBY', hkey(h), 'admitted', 1) end
      add_queued(h, 1)
      touched[h] = true
      added[#added + 1] = n
    end
  end
end
for h in pairs(touched) do place(h, tonumber(now_s)) end
return added
"""

# ARGV: prefix, url, now, states it may come back from (space-separated).
# Back to the queue, due now, failures forgotten (requeue_seed and requeue).
REQUEUE = _PRELUDE + r"""
local u, now_s = ARGV[2], ARGV[3]
local uk = ukey(u)
local f = redis.call('HMGET', uk, 'host', 'state')
if not f[2] or not string.find(' ' .. ARGV[4] .. ' ', ' ' .. f[2] .. ' ', 1, true) then return 0 end
local sets = {'state', 'queued', 'due_at', now_s, 'fail_count', 0}
-- requeue_seed starts the seed afresh; requeue keeps the note of the last fetch, as SQL does.
if ARGV[5] == '1' then sets[#sets + 1] = 'note'; sets[#sets + 1] = '' end
redis.call('HSET', uk, unpack(sets))
move(u, f[2], 'queued')
add_queued(f[1], 1)
place(f[1], tonumber(now_s))
return 1
"""

# ARGV: prefix, now, limit, parallelism, max_in_flight, lease id base.
# Returns {url, host, lease_id, depth, etag, last_modified, kind} per lease.
LEASE_DUE = _PRELUDE + r"""
local now_s = ARGV[2]
local now, limit, par, max_in_flight = tonumber(now_s), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local in_flight = tonumber(redis.call('HGET', BY_STATE, 'leased') or '0')
local room = math.min(limit, max_in_flight - in_flight)
if room <= 0 then return {} end
promote(now_s, now)
-- The first `room` hosts by next_allowed_at that may take a fetch now, as the SQL
-- query picks them. Only hosts at full parallelism are skipped, and those are bounded
-- by the leases in flight, so this never walks every host.
-- A host whose queued URLs are all waiting (retry backoff) must not take a place
-- in `room`, or hosts with due URLs behind it would wait for nothing.
local function has_due(h)
  for _, lvl in ipairs(redis.call('ZRANGE', lkey(h), 0, -1)) do
    if #redis.call('ZRANGEBYSCORE', qkey(h, lvl), '-inf', now_s, 'LIMIT', 0, 1) > 0 then return true end
  end
  return false
end
local chosen, inflights, pars, offset = {}, {}, {}, 0
while #chosen < room do
  local batch = redis.call('ZRANGEBYSCORE', READY, '-inf', now_s, 'LIMIT', offset, 256)
  if #batch == 0 then break end
  for _, h in ipairs(batch) do
    local f = redis.call('HMGET', hkey(h), 'robots_state', 'inflight', 'blocked_until', 'queued', 'delay_s')
    -- A host with a delay (its Crawl-delay, say) takes one fetch at a time.
    local host_par = par
    if tonumber(f[5]) > 0 then host_par = 1 end
    if f[1] == 'ready' and tonumber(f[2]) < host_par and tonumber(f[3]) <= now and tonumber(f[4]) > 0 and has_due(h) then
      chosen[#chosen + 1] = h
      inflights[#chosen] = tonumber(f[2])
      pars[#chosen] = host_par
      if #chosen >= room then break end
    end
  end
  offset = offset + #batch
end
local out, n = {}, 0
for i, h in ipairs(chosen) do
  local slots = math.min(pars[i] - inflights[i], room - n)
  if slots <= 0 then break end
  local got = 0
  for _, lvl in ipairs(redis.call('ZRANGE', lkey(h), 0, -1)) do
    if got >= slots then break end
    for _, u in ipairs(redis.call('ZRANGEBYSCORE', qkey(h, lvl), '-inf', now_s, 'LIMIT', 0, slots - got)) do
      n, got = n + 1, got + 1
      local id = ARGV[6] .. '-' .. n
      local uk = ukey(u)
      redis.call('HSET', uk, 'state', 'leased', 'lease_id', id, 'leased_at', now_s)
      move(u, 'queued', 'leased')
      local f = redis.call('HMGET', uk, 'depth', 'etag', 'last_modified', 'kind')
      out[#out + 1] = {u, h, id, f[1], f[2] or '', f[3] or '', f[4] or 'page'}
    end
  end
  if got > 0 then
    local k = hkey(h)
    redis.call('HINCRBY', k, 'inflight', got)
    add_queued(h, -got)
    redis.call('HSET', k, 'next_allowed_at', fmt(now + tonumber(redis.call('HGET', k, 'delay_s'))))
    place(h, now)
  end
end
return out
"""

# ARGV: prefix, url, lease_id, then field, value pairs of the outcome (state among them)
FINISH = _PRELUDE + r"""
local u = ARGV[2]
local uk = ukey(u)
local f = redis.call('HMGET', uk, 'host', 'state', 'lease_id', 'kind')
if f[2] ~= 'leased' or f[3] ~= ARGV[3] then return 0 end
local sets, state = {}, nil
for i = 4, #ARGV, 2 do
  sets[#sets + 1] = ARGV[i]
  sets[#sets + 1] = ARGV[i + 1]
  if ARGV[i] == 'state' then state = ARGV[i + 1] end
end
redis.call('HDEL', uk, 'lease_id')
redis.call('HSET', uk, unpack(sets))
move(u, 'leased', state)
if state == 'queued' then
  add_queued(f[1], 1)
  place(f[1], nil)
elseif state == 'done' and f[4] == 'page' then
  redis.call('HINCRBY', COUNTERS, 'fetched', 1)
  local fetched_at = tonumber(redis.call('HGET', uk, 'fetched_at') or '')
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

# ARGV: prefix, url, now, state, note
UNLEASE = _PRELUDE + r"""
local u, state = ARGV[2], ARGV[4]
local uk = ukey(u)
local f = redis.call('HMGET', uk, 'host', 'state')
if f[2] ~= 'leased' then return 0 end
redis.call('HSET', uk, 'state', state, 'note', ARGV[5])
redis.call('HDEL', uk, 'lease_id')
move(u, 'leased', state)
release_slot(f[1])
if state == 'queued' then add_queued(f[1], 1) end
place(f[1], tonumber(ARGV[3]))
return 1
"""

# ARGV: prefix, cutoff (leased at or before it expire), now
EXPIRE_LEASES = _PRELUDE + r"""
local touched, n = {}, 0
for _, u in ipairs(redis.call('ZRANGEBYSCORE', LEASED, '-inf', ARGV[2])) do
  local uk = ukey(u)
  local f = redis.call('HMGET', uk, 'host', 'state')
  if f[2] == 'leased' then
    redis.call('HSET', uk, 'state', 'queued')
    redis.call('HDEL', uk, 'lease_id')
    move(u, 'leased', 'queued')
    release_slot(f[1])
    add_queued(f[1], 1)
    touched[f[1]] = true
    n = n + 1
  else
    redis.call('ZREM', LEASED, u)
  end
end
for h in pairs(touched) do place(h, tonumber(ARGV[3])) end
return n
"""

# ARGV: prefix, host
QUEUED_URLS = _PRELUDE + r"""
local out = {}
for _, lvl in ipairs(redis.call('ZRANGE', lkey(ARGV[2]), 0, -1)) do
  for _, u in ipairs(redis.call('ZRANGE', qkey(ARGV[2], lvl), 0, -1)) do out[#out + 1] = u end
end
return out
"""

# ARGV: prefix, state, note, then the URLs
DROP_QUEUED = _PRELUDE + r"""
local state, note, due = ARGV[2], ARGV[3], ARGV[4]
local touched, n = {}, 0
for i = 5, #ARGV do
  local u = ARGV[i]
  local uk = ukey(u)
  local f = redis.call('HMGET', uk, 'host', 'state')
  if f[2] == 'queued' then
    redis.call('HSET', uk, 'state', state, 'note', note)
    if due ~= '' then redis.call('HSET', uk, 'due_at', due) end
    move(u, 'queued', state)
    add_queued(f[1], -1)
    touched[f[1]] = true
    n = n + 1
  end
end
for h in pairs(touched) do place(h, nil) end
return n
"""

# ARGV: prefix, now, limit (negative: no limit). Soonest due first.
SWEEP_RECRAWL = _PRELUDE + r"""
local now_s, limit = ARGV[2], tonumber(ARGV[3])
local range = {'ZRANGEBYSCORE', RECRAWL, '-inf', now_s}
if limit >= 0 then
  range[#range + 1] = 'LIMIT'; range[#range + 1] = 0; range[#range + 1] = limit
end
local touched, n = {}, 0
for _, u in ipairs(redis.call(unpack(range))) do
  local uk = ukey(u)
  local f = redis.call('HMGET', uk, 'host', 'state')
  redis.call('HSET', uk, 'state', 'queued', 'fail_count', 0)
  move(u, f[2], 'queued')
  add_queued(f[1], 1)
  touched[f[1]] = true
  n = n + 1
end
for h in pairs(touched) do place(h, tonumber(now_s)) end
return n
"""

# ARGV: prefix, limit (negative: no limit). {url, state, due_at}, soonest first.
UPCOMING = _PRELUDE + r"""
local limit = tonumber(ARGV[2])
local stop = limit > 0 and limit - 1 or -1
local a = redis.call('ZRANGE', QUEUED, 0, stop, 'WITHSCORES')
local b = redis.call('ZRANGE', RECRAWL, 0, stop, 'WITHSCORES')
local out, i, j = {}, 1, 1
while (limit < 0 or #out < limit) and (i <= #a or j <= #b) do
  local u
  if j > #b or (i <= #a and tonumber(a[i + 1]) <= tonumber(b[j + 1])) then
    u, i = a[i], i + 2
  else
    u, j = b[j], j + 2
  end
  local f = redis.call('HMGET', ukey(u), 'state', 'due_at')
  out[#out + 1] = {u, f[1], f[2]}
end
return out
"""

# ARGV: prefix, host, paused (1/0), now. Returns 0 for an unknown host.
SET_PAUSED = _PRELUDE + r"""
local h = ARGV[2]
if redis.call('EXISTS', hkey(h)) == 0 then return 0 end
redis.call('HSET', hkey(h), 'paused', ARGV[3])
place(h, tonumber(ARGV[4]))
return 1
"""

# ARGV: prefix, host, now, then URLs of that host. Queued, done and failed ones become
# queued and due now, failures forgotten; returns how many.
RECRAWL_URLS = _PRELUDE + r"""
local h, now_s = ARGV[2], ARGV[3]
local now = tonumber(now_s)
local n = 0
for i = 4, #ARGV do
  local u = ARGV[i]
  local uk = ukey(u)
  local f = redis.call('HMGET', uk, 'host', 'state', 'due_at')
  if f[1] == h and (f[2] == 'queued' or is_finished(f[2])) then
    -- Due now, or as it was if that is earlier (SQL's MIN(due_at, now)).
    if tonumber(f[3]) > now then redis.call('HSET', uk, 'due_at', now_s) end
    redis.call('HSET', uk, 'state', 'queued', 'fail_count', 0)
    -- queued -> queued re-files the URL under its new due_at; the counts stay even.
    move(u, f[2], 'queued')
    if f[2] ~= 'queued' then add_queued(h, 1) end
    n = n + 1
  end
end
place(h, now)
return n
"""
