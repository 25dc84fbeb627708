-- KEYS: a hash of packed values; ARGV: cursor, count. One HSCAN step as three strings:
-- the cursor, (field as uint32, value's length) pairs, and the values end to end. Three
-- bulk strings instead of two per page: redis-py parses each reply element in Python,
-- which for a million pages cost more than all the rest of a PageRank run.
local reply = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local items, header, values = reply[2], {}, {}
for i = 1, #items, 2 do
  header[#header + 1] = struct.pack('<I4I4', tonumber(items[i]), #items[i + 1])
  values[#values + 1] = items[i + 1]
end
return {reply[1], table.concat(header), table.concat(values)}
