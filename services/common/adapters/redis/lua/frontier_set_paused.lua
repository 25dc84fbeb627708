-- ARGV[A..]: paused (1/0), now. One host; 0 for an unknown host.
if redis.call('EXISTS', hkey(1)) == 0 then return 0 end
redis.call('HSET', hkey(1), 'paused', ARGV[A])
place(1, tonumber(ARGV[A + 1]))
return 1
