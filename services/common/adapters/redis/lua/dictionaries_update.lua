-- ARGV: job_id, owner, then field, value pairs. 1 if written.
local f = redis.call('HMGET', KEYS[1], 'job_id', 'owner', 'state')
if f[1] ~= ARGV[1] or f[2] ~= ARGV[2] or (f[3] ~= 'pending' and f[3] ~= 'running') then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1
