-- ARGV[A..]: now, then rests of the host's URLs. Queued, done and failed ones become
-- queued and due now (or as they were, if earlier), failures forgotten; returns how many.
local now_s = ARGV[A]
local now = tonumber(now_s)
local n = 0
for j = A + 1, #ARGV do
  local rest = ARGV[j]
  local t = rec_get(1, rest)
  if t and (t[F_STATE] == 'q' or t[F_STATE] == 'd' or t[F_STATE] == 'f') then
    local was = t[F_STATE]
    leave(1, rest, t)
    if tonumber(t[F_DUE]) > now then t[F_DUE] = now_s end  -- SQL's MIN(due_at, now)
    t[F_STATE], t[F_FAILS] = 'q', ''
    rec_put(1, rest, t)
    enter(1, rest, t)
    if was ~= 'q' then add_queued(1, 1) end
    n = n + 1
  end
end
place(1, now)
return n
