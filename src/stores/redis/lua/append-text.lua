--[[
  Append one chunk to a live task's text; the text's keys expire with the task. A fenced append
  (ARGV[4] a lease token) writes only while that token is the task's lease. With a bound
  (ARGV[5]) the oldest chunks give way whole once the kept part is longer.
  KEYS[1] P:{b}:task:<id>            read
  KEYS[2] P:{b}:text:<id>:<kind>     write: end, dropped, start → chunk
  KEYS[3] P:{b}:textidx:<id>:<kind>  write: chunk starts
  ARGV: 1 chunk, 2 its length in UTF-16 code units, 3 now, 4 lease token ('' = unfenced),
        5 max chars ('' = no bound), 6 channel, 7 origin, 8 task id, 9 kind
  Returns {1, end, dropped} | {0} the task is absent or expired | {2} fenced
]]
local f = redis.call('HMGET', KEYS[1], 'expiresAt', 'leaseToken')
if not isLive(f[1], tonumber(ARGV[3])) then return { 0 } end
if ARGV[4] ~= '' and f[2] ~= ARGV[4] then return { 2 } end
local meta = redis.call('HMGET', KEYS[2], 'end', 'dropped')
local start = tonumber(meta[1] or '0')
local dropped = tonumber(meta[2] or '0')
local length = tonumber(ARGV[2])
if length > 0 then
  local field = string.format('%d', start)
  redis.call('HSET', KEYS[2], field, ARGV[1])
  redis.call('ZADD', KEYS[3], start, field)
end
local finish = start + length
if ARGV[5] ~= '' and finish - dropped > tonumber(ARGV[5]) then
  local first = redis.call('ZRANGEBYSCORE', KEYS[3], finish - tonumber(ARGV[5]), '+inf', 'LIMIT', 0, 1)
  local kept = finish
  if first[1] then kept = tonumber(first[1]) end
  local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. string.format('%d', kept))
  for i = 1, #gone do redis.call('HDEL', KEYS[2], gone[i]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. string.format('%d', kept))
  dropped = kept
end
redis.call('HSET', KEYS[2], 'end', string.format('%d', finish), 'dropped', string.format('%d', dropped))
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
notice(ARGV[6], ARGV[7], '"k":"x","id":' .. cjson.encode(ARGV[8]) .. ',"t":' ..
  cjson.encode(ARGV[9]) .. ',"e":' .. string.format('%d', finish))
return { 1, finish, dropped }
