-- ARGV[A..]: now, host_budget, then per URL: host index, rest, depth, kind, state, note.
-- Returns the 1-based positions of the URLs queued.
local now_s, budget = ARGV[A], tonumber(ARGV[A + 1])
local now = tonumber(now_s)
local added, touched, n = {}, {}, 0
for j = A + 2, #ARGV, 6 do
  n = n + 1
  local i, rest, depth, kind, state, note = tonumber(ARGV[j]), ARGV[j + 1], ARGV[j + 2], ARGV[j + 3], ARGV[j + 4], ARGV[j + 5]
  if state == 'q' then
    local admitted = redis.call('HGET', hkey(i), 'admitted')
    if admitted and tonumber(admitted) >= budget then state, note = 'x', 'host_budget' end
  end
  if redis.call('HEXISTS', ukey(i), rest) == 0 then
    local t = {state, depth, kind == 'page' and '' or kind, now_s, '', note, '', '', '', '', '', '', ''}
    rec_put(i, rest, t)
    enter(i, rest, t)
    if state == 'q' then
      if redis.call('EXISTS', hkey(i)) == 1 then redis.call('HINCRBY', hkey(i), 'admitted', 1) end
      add_queued(i, 1)
      touched[i] = true
      added[#added + 1] = n
    end
  end
end
for i in pairs(touched) do place(i, now) end
return added
