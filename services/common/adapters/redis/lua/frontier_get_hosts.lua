-- Read only. Each host's hash (as field, value pairs) and robots.txt (false if none).
local out = {}
for i = 1, NH do
  out[#out + 1] = redis.call('HGETALL', hkey(i))
  out[#out + 1] = redis.call('GET', rkey(i))
end
return out
