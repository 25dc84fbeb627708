-- ARGV[A..]: cutoff (leased at or before it expire), now, then host index, rest per URL.
local cutoff, now = tonumber(ARGV[A]), tonumber(ARGV[A + 1])
local touched, n = {}, 0
for j = A + 2, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local score = redis.call('ZSCORE', LEASED, full(i, rest))
  if score and tonumber(score) <= cutoff then
    local t = rec_get(i, rest)
    if t and t[F_STATE] == 'l' then
      leave(i, rest, t)
      t[F_STATE], t[F_LEASE] = 'q', ''
      rec_put(i, rest, t)
      enter(i, rest, t)
      release_slot(i)
      add_queued(i, 1)
      touched[i] = true
      n = n + 1
    else
      redis.call('ZREM', LEASED, full(i, rest))
    end
  end
end
for i in pairs(touched) do place(i, now) end
return n
