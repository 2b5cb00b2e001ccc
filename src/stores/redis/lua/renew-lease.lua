--[[
  Extend a lease still held with this token.
  KEYS[1] P:{b}:task:<id>   read/write (leaseExpiresAt)
  KEYS[2] P:{b}:working     write
  ARGV: 1 token, 2 lease ms, 3 now (task expiry), 4 lease clock now ('' = Redis TIME)
  Returns {1 held | 0 lost, current status or '' when absent}
]]
local now = tonumber(ARGV[3])
local f = redis.call('HMGET', KEYS[1], 'status', 'expiresAt', 'leaseToken', 'member')
if not isLive(f[2], now) then return {0, ''} end
if f[3] ~= ARGV[1] then return {0, f[1]} end
local untilMs = leaseNow(ARGV[4]) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'leaseExpiresAt', untilMs)
redis.call('ZADD', KEYS[2], untilMs, f[4])
return {1, f[1]}
