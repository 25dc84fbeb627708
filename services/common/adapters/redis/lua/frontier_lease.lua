-- ARGV[A..]: now, parallelism, lease id base, then the slots to fill per host, in host
-- order. Each host is checked again (robots ready, not paused or blocked, its clock and
-- its free slots); its due URLs are taken level by level, each in due_at order.
-- Returns {url, host, lease_id, depth, etag, last_modified, kind} per lease.
local now_s = ARGV[A]
local now, par = tonumber(now_s), tonumber(ARGV[A + 1])
local due_bound = struct.pack('>d', now > 0 and now or 0) .. '\255'
local out, n = {}, 0
for i = 1, NH do
  local k = hkey(i)
  local f = redis.call('HMGET', k, 'robots_state', 'inflight', 'blocked_until', 'queued', 'delay_s', 'paused', 'next_allowed_at')
  local host_par = par
  if f[5] and tonumber(f[5]) > 0 then host_par = 1 end
  local slots = tonumber(ARGV[A + 2 + i])
  if f[1] == 'ready' and f[6] ~= '1' and tonumber(f[3]) <= now and tonumber(f[4]) > 0 and tonumber(f[7]) <= now then
    slots = math.min(slots, host_par - tonumber(f[2]))
  else
    slots = 0
  end
  local got, cursor = 0, '-'
  while got < slots do
    local first = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not first then break end
    local level = string.sub(first, 1, 5)
    local due = redis.call('ZRANGEBYLEX', qkey(i), '[' .. level, '[' .. level .. due_bound, 'LIMIT', 0, slots - got)
    for _, m in ipairs(due) do
      local rest = string.sub(m, 14)
      local t = rec_get(i, rest)
      n, got = n + 1, got + 1
      local id = ARGV[A + 2] .. '-' .. n
      leave(i, rest, t)
      t[F_STATE], t[F_LEASE] = 'l', id
      rec_put(i, rest, t)
      enter(i, rest, t, now_s)
      out[#out + 1] = {full(i, rest), hname(i), id, t[F_DEPTH], t[11], t[12], t[F_KIND] == '' and 'page' or t[F_KIND]}
    end
    cursor = '(' .. level .. PAST_LEVEL
  end
  if got > 0 then
    redis.call('HINCRBY', k, 'inflight', got)
    add_queued(i, -got)
    redis.call('HSET', k, 'next_allowed_at', fmt(now + tonumber(f[5])))
    place(i, now)
  end
end
return out
