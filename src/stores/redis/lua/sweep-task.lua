--[[
  Delete one expired task with its steps, lease and index entries (the sweeper found it in
  KEYS[3] and read its principal index first; its idempotency key, in another slot, is freed
  by forget-idempotency.lua afterwards).
  KEYS[1] P:{b}:task:<id>          read/delete
  KEYS[2] P:{b}:steps:<id>         delete
  KEYS[3..8] P:{b}:text…:<id>:…    delete (the six keys of its texts, keys.ts)
  KEYS[9] P:{b}:expiry             write
  KEYS[10] P:{b}:created           write
  KEYS[11] P:{b}:working           write
  KEYS[12] P:{b}:principal:<p>     write (absent when the task hash was already gone)
  ARGV: 1 index member, 2 now, 3 channel, 4 origin, 5 task id
  Returns 1 deleted | 0 the task is live again
]]
local expiresAt = redis.call('HGET', KEYS[1], 'expiresAt')
if expiresAt and isLive(expiresAt, tonumber(ARGV[2])) then
  redis.call('ZREM', KEYS[9], ARGV[1])
  if expiresAt ~= '' then redis.call('ZADD', KEYS[9], expiresAt, ARGV[1]) end
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8])
for i = 9, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
notice(ARGV[3], ARGV[4], '"k":"d","id":' .. cjson.encode(ARGV[5]))
return 1
