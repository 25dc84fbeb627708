-- KEYS: an id -> string hash; ARGV: ids. Their values as lengths (uint32) and one blob.
local values = redis.call('HMGET', KEYS[1], unpack(ARGV))
local lengths = {}
for i, value in ipairs(values) do lengths[i] = struct.pack('<I4', #value) end
return {table.concat(lengths), table.concat(values)}
