--[[
  Record a finished step of a live task; the steps hash expires with the task. A fenced save
  (ARGV[4] a lease token) writes only while that token is the task's lease.
  KEYS[1] P:{b}:task:<id>    read
  KEYS[2] P:{b}:steps:<id>   write
  ARGV: 1 step name, 2 value JSON, 3 now, 4 the writer's lease token ('' = unfenced)
  Returns 1 saved | 0 the task is absent or expired | 2 fenced: another lease (or none) holds it
]]
local f = redis.call('HMGET', KEYS[1], 'expiresAt', 'leaseToken')
if not isLive(f[1], tonumber(ARGV[3])) then return 0 end
if ARGV[4] ~= '' and f[2] ~= ARGV[4] then return 2 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
