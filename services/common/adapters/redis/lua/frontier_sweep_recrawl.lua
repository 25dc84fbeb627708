-- ARGV[A..]: now, then host index, rest per URL (done or failed ones due by now).
local now = tonumber(ARGV[A])
local touched, n = {}, 0
for j = A + 1, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local score = redis.call('ZSCORE', RECRAWL, full(i, rest))
  local t = score and tonumber(score) <= now and rec_get(i, rest)
  if t and (t[F_STATE] == 'd' or t[F_STATE] == 'f') then
    leave(i, rest, t)
    t[F_STATE], t[F_FAILS] = 'q', ''
    rec_put(i, rest, t)
    enter(i, rest, t)
    add_queued(i, 1)
    touched[i] = true
    n = n + 1
  end
end
for i in pairs(touched) do place(i, now) end
return n
