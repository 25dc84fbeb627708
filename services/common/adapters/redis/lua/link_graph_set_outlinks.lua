-- KEYS: url-ids, urls, text-ids, texts, next, targets, anchors.
-- ARGV: the page's distinct URLs, the source first, as strings (each a uint32 length,
-- then the bytes); its targets as 1-based positions in that list (uint32s); its
-- distinct anchor texts as strings; its anchors as (URL position, text position) pairs.
-- Four arguments however many links (packing one argument per link cost redis-py more
-- than the script cost Redis), and one HMGET per thousand names rather than one HGET
-- each. Returns 1 if the page is new or its links changed.
local function strings(blob)
  local out, at = {}, 1
  while at <= #blob do
    local size = struct.unpack('<I4', blob, at)
    out[#out + 1] = string.sub(blob, at + 4, at + 3 + size)
    at = at + 4 + size
  end
  return out
end
local function numbers(blob)
  local out = {}
  for at = 1, #blob, 4 do out[#out + 1] = struct.unpack('<I4', blob, at) end
  return out
end
local function ids_of(ids_key, values_key, kind, names)
  local out, missing = {}, {}
  for start = 1, #names, 1000 do
    local got = redis.call('HMGET', ids_key, unpack(names, start, math.min(start + 999, #names)))
    for i = 1, #got do
      if got[i] then out[start + i - 1] = tonumber(got[i]) else missing[#missing + 1] = start + i - 1 end
    end
  end
  if #missing == 0 then return out end
  local first = redis.call('HINCRBY', KEYS[5], kind, #missing) - #missing
  local forward, backward = {}, {}
  for k, index in ipairs(missing) do
    out[index] = first + k - 1
    forward[#forward + 1], forward[#forward + 2] = names[index], out[index]
    backward[#backward + 1], backward[#backward + 2] = out[index], names[index]
  end
  for start = 1, #forward, 1000 do  -- an even step: a name and its id stay together
    redis.call('HSET', ids_key, unpack(forward, start, math.min(start + 999, #forward)))
    redis.call('HSET', values_key, unpack(backward, start, math.min(start + 999, #backward)))
  end
  return out
end
local url_ids = ids_of(KEYS[1], KEYS[2], 'url', strings(ARGV[1]))
local text_ids = ids_of(KEYS[3], KEYS[4], 'text', strings(ARGV[3]))
local source, targets, anchors = url_ids[1], {}, {}
for i, position in ipairs(numbers(ARGV[2])) do targets[i] = url_ids[position] end
table.sort(targets)
for i, id in ipairs(targets) do targets[i] = struct.pack('<I4', id) end
local pairs_ = numbers(ARGV[4])
for i = 1, #pairs_, 2 do anchors[#anchors + 1] = {url_ids[pairs_[i]], text_ids[pairs_[i + 1]]} end
table.sort(anchors, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
for i, pair in ipairs(anchors) do anchors[i] = struct.pack('<I4I4', pair[1], pair[2]) end
local targets_value, anchors_value = table.concat(targets), table.concat(anchors)
if redis.call('HGET', KEYS[6], source) == targets_value
    and (redis.call('HGET', KEYS[7], source) or '') == anchors_value then
  return 0
end
redis.call('HSET', KEYS[6], source, targets_value)
if anchors_value == '' then redis.call('HDEL', KEYS[7], source) else redis.call('HSET', KEYS[7], source, anchors_value) end
return 1
