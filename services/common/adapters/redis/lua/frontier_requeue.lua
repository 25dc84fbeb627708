-- ARGV[A..]: rest, now, states it may come back from (letters), clear the note (1/0).
-- Back to the queue, due now, failures forgotten (requeue_seed and requeue). One host.
local rest, now_s = ARGV[A], ARGV[A + 1]
local t = rec_get(1, rest)
if not t or not string.find(ARGV[A + 2], t[F_STATE], 1, true) then return 0 end
leave(1, rest, t)
t[F_STATE], t[F_DUE], t[F_FAILS] = 'q', now_s, ''
-- requeue_seed starts the seed afresh; requeue keeps the note of the last fetch, as SQL does.
if ARGV[A + 3] == '1' then t[F_NOTE] = '' end
rec_put(1, rest, t)
enter(1, rest, t)
add_queued(1, 1)
place(1, tonumber(now_s))
return 1
