-- ARGV[A..]: scheme, delay_s. One host.
if redis.call('EXISTS', hkey(1)) == 1 then return 0 end
redis.call('HSET', hkey(1), 'host', hname(1), 'scheme', ARGV[A], 'delay_s', ARGV[A + 1], 'robots_state', 'unknown',
  'robots_failures', 0, 'next_allowed_at', 0, 'inflight', 0, 'blocked_until', 0, 'block_reason', '',
  'fail_streak', 0, 'admitted', 0, 'queued', 0, 'paused', 0, 'robots_retry_at', 0)
redis.call('ZADD', HOSTS, 0, hname(1))
return 1
