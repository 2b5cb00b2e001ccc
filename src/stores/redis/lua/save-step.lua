--[[
  Record a finished step of a live task; the steps hash expires with the task.
  KEYS[1] P:{b}:task:<id>    read
  KEYS[2] P:{b}:steps:<id>   write
  ARGV: 1 step name, 2 value JSON, 3 now
  Returns 1 saved | 0 the task is absent or expired
]]
local expiresAt = redis.call('HGET', KEYS[1], 'expiresAt')
if not isLive(expiresAt, tonumber(ARGV[3])) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
