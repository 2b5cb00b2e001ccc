--[[
  Give a lease back for a durable wait: the task stays working but is runnable only from the
  wake time (lease clock now + ARGV[2]). No holder and no token are left, so findLeased skips it
  and the claim after the wait is not an interruption; the claim refuses it until then.
  KEYS[1] P:{b}:task:<id>   read/write (lease fields)
  KEYS[2] P:{b}:working     write (score = wake time)
  ARGV: 1 token, 2 wait ms, 3 now (task expiry), 4 lease clock now ('' = Redis TIME)
  Returns the wake time | false when not held with this token, or the lease ran out
]]
local now = tonumber(ARGV[3])
local f = redis.call('HMGET', KEYS[1], 'leaseToken', 'status', 'member', 'expiresAt', 'leaseExpiresAt')
if f[1] ~= ARGV[1] or f[2] ~= 'working' or not isLive(f[4], now) then return false end
local leaseTime = leaseNow(ARGV[4])
-- A lease that ran out proves nothing: it stays, so the next claim counts an interruption.
if tonumber(f[5]) <= leaseTime then return false end
local wakeAt = leaseTime + tonumber(ARGV[2])
redis.call('HDEL', KEYS[1], 'leaseToken', 'leaseOwner')
redis.call('HSET', KEYS[1], 'leaseExpiresAt', wakeAt)
redis.call('ZADD', KEYS[2], wakeAt, f[3])
return wakeAt
