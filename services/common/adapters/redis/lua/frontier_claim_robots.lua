-- ARGV[A..]: now. Claims each host's robots.txt if it still may be fetched now; returns,
-- per claimed host, its index, its hash as it was and its robots.txt.
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
