-- ARGV[A..]: state letter, note, due_at ('' keeps it), then host index, rest per URL.
local state, note, due = ARGV[A], ARGV[A + 1], ARGV[A + 2]
local touched, n = {}, 0
for j = A + 3, #ARGV, 2 do
  local i, rest = tonumber(ARGV[j]), ARGV[j + 1]
  local t = rec_get(i, rest)
  if t and t[F_STATE] == 'q' then
    leave(i, rest, t)
    t[F_STATE], t[F_NOTE] = state, note
    if due ~= '' then t[F_DUE] = due end
    rec_put(i, rest, t)
    enter(i, rest, t)
    add_queued(i, -1)
    touched[i] = true
    n = n + 1
  end
end
for i in pairs(touched) do place(i, nil) end
return n
