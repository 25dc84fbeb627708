-- ARGV[A..]: cutoff (robots.txt fetched at or before it expires). Returns the hosts sent back.
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
