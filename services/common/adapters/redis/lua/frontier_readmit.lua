-- ARGV[A..]: note, now, then host index, rest per URL. Excluded URLs with this note are
-- queued again, due now, note and failures cleared; returns how many.
local note, now_s = ARGV[A], ARGV[A + 1]
local touched, n = {}, 0
for j = A + 2, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local t = rec_get(i, rest)
  if t and t[F_STATE] == 'x' and t[F_NOTE] == note then
    leave(i, rest, t)
    t[F_STATE], t[F_NOTE], t[F_DUE], t[F_FAILS] = 'q', '', now_s, ''
    rec_put(i, rest, t)
    enter(i, rest, t)
    add_queued(i, 1)
    touched[i] = true
    n = n + 1
  end
end
for i in pairs(touched) do place(i, tonumber(now_s)) end
return n
