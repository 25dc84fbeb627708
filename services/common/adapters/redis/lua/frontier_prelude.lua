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
