--[[
  The chunks of a live task's text that overlap [from, to), with its end and dropped front.
  KEYS[1] P:{b}:task:<id>            read
  KEYS[2] P:{b}:text:<id>:<kind>     read
  KEYS[3] P:{b}:textidx:<id>:<kind>  read
  ARGV: 1 now, 2 offset (moved up to the dropped front), 3 length, 4 the longest chunk
  Returns {0} the task is absent or expired | {1, end, dropped, start, chunk, start, chunk, …}
]]
if not isLive(redis.call('HGET', KEYS[1], 'expiresAt'), tonumber(ARGV[1])) then return { 0 } end
local meta = redis.call('HMGET', KEYS[2], 'end', 'dropped')
if not meta[1] then return { 1, 0, 0 } end
local from = math.max(tonumber(ARGV[2]), tonumber(meta[2]))
local low = from - tonumber(ARGV[4])
local high = from + tonumber(ARGV[3])
local starts = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. string.format('%d', low),
  '(' .. string.format('%d', high))
local reply = { 1, tonumber(meta[1]), tonumber(meta[2]) }
for i = 1, #starts do
  reply[#reply + 1] = tonumber(starts[i])
  reply[#reply + 1] = redis.call('HGET', KEYS[2], starts[i])
end
return reply
