-- ARGV[A..]: rest, lease_id, now ('': no host update), how many record pairs follow,
-- then position, value pairs of the outcome's record fields (the state among them),
-- then field, value pairs of the host update. One host. Returns 0 for a stale or
-- repeated outcome, and then changes nothing.
local rest = ARGV[A]
local t = rec_get(1, rest)
if not t or t[F_STATE] ~= 'l' or t[F_LEASE] ~= ARGV[A + 1] then return 0 end
local host_from = A + 4 + 2 * tonumber(ARGV[A + 3])
leave(1, rest, t)
for j = A + 4, host_from - 1, 2 do t[tonumber(ARGV[j])] = ARGV[j + 1] end
t[F_LEASE] = ''
rec_put(1, rest, t)
enter(1, rest, t)
if ARGV[A + 2] ~= '' then update_host(1, tonumber(ARGV[A + 2]), true, host_from) end
if t[F_STATE] == 'q' then
  add_queued(1, 1)
  place(1, nil)
elseif t[F_STATE] == 'd' and t[F_KIND] == '' then
  redis.call('HINCRBY', N, 'fetched', 1)
  local fetched_at = tonumber(t[F_FETCHED])
  if fetched_at then
    local minute = math.floor(fetched_at / 60)
    redis.call('HINCRBY', MINUTES, string.format('%d', minute), 1)
    -- A day is kept: the minute that has just fallen out goes (a gap leaves a stray
    -- field behind, which fetch_history skips by its age).
    redis.call('HDEL', MINUTES, string.format('%d', minute - 1440))
  end
end
return 1
