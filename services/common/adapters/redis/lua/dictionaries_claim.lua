-- ARGV: owner, now, stale_s. The job's fields after the claim, or nothing.
local f = redis.call('HMGET', KEYS[1], 'state', 'owner', 'heartbeat_at')
if not f[1] then return {} end
local now = tonumber(ARGV[2])
if f[1] == 'pending' or (f[1] == 'running' and (f[2] == ARGV[1] or now - tonumber(f[3]) >= tonumber(ARGV[3]))) then
  redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1], 'heartbeat_at', ARGV[2])
  return redis.call('HGETALL', KEYS[1])
end
return {}
