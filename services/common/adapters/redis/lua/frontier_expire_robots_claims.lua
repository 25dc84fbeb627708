-- ARGV[A..]: cutoff (claims made at or before it expire), now. Returns the hosts released.
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
