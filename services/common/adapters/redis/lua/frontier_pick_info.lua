-- Read only. ARGV[A..]: now, cap. Per host: its FIELDS (below) and how many of its
-- queued URLs are due by now, counted up to cap: what a selection needs to pick hosts
-- exactly as the SQL query does.
local now, cap = tonumber(ARGV[A]), tonumber(ARGV[A + 1])
local due_bound = struct.pack('>d', now > 0 and now or 0) .. '\255'
local out = {}
for i = 1, NH do
  local f = redis.call('HMGET', hkey(i), 'robots_state', 'inflight', 'blocked_until', 'queued', 'delay_s', 'paused',
    'next_allowed_at')
  local due, cursor = 0, '-'
  while due < cap do
    local first = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not first then break end
    local level = string.sub(first, 1, 5)
    due = due + #redis.call('ZRANGEBYLEX', qkey(i), '[' .. level, '[' .. level .. due_bound, 'LIMIT', 0, cap - due)
    cursor = '(' .. level .. PAST_LEVEL
  end
  f[#f + 1] = redis.call('HGET', hkey(i), 'robots_retry_at') or '0'  -- absent in a host made before it
  f[#f + 1] = due
  out[#out + 1] = f
end
return out
