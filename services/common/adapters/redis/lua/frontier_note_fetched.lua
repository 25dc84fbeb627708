-- ARGV[A..]: rest, note. A done URL's note is set; nothing else of it changes. One
-- host; 0 if the URL is not done.
local rest = ARGV[A]
local t = rec_get(1, rest)
if not t or t[F_STATE] ~= 'd' then return 0 end
t[F_NOTE] = ARGV[A + 1]
rec_put(1, rest, t)
return 1
