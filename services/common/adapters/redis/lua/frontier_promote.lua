-- ARGV[A..]: now. Hosts whose parked time has come go back to their index.
local now = tonumber(ARGV[A])
for i = 1, NH do
  local score = redis.call('ZSCORE', PARKED, hname(i))
  if score and tonumber(score) <= now then place(i, now) end
end
return 0
