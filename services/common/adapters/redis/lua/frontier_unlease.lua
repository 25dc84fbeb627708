-- ARGV[A..]: rest, now, state letter, note. One host.
local rest, now = ARGV[A], tonumber(ARGV[A + 1])
local t = rec_get(1, rest)
if not t or t[F_STATE] ~= 'l' then return 0 end
leave(1, rest, t)
t[F_STATE], t[F_NOTE], t[F_LEASE] = ARGV[A + 2], ARGV[A + 3], ''
rec_put(1, rest, t)
enter(1, rest, t)
release_slot(1)
if t[F_STATE] == 'q' then add_queued(1, 1) end
place(1, now)
return 1
