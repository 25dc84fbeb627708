-- Read only. ARGV[A..]: limit per host (negative: all). Per host, its queued URLs with
-- the soonest due_at, as {url, due_at} pairs.
local limit = tonumber(ARGV[A])
local out = {}
for i = 1, NH do
  local cursor = '-'
  while true do
    local first = redis.call('ZRANGEBYLEX', qkey(i), cursor, '+', 'LIMIT', 0, 1)[1]
    if not first then break end
    local level = string.sub(first, 1, 5)
    local take = limit >= 0 and limit or -1
    for _, m in ipairs(redis.call('ZRANGEBYLEX', qkey(i), '[' .. level, '[' .. level .. PAST_LEVEL, 'LIMIT', 0, take)) do
      out[#out + 1] = full(i, string.sub(m, 14))
      out[#out + 1] = fmt(struct.unpack('>d', m, 6))
    end
    cursor = '(' .. level .. PAST_LEVEL
  end
end
return out
