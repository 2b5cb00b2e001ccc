--[[
  How long a lease still runs, for the Redis Cluster's permits (whose holders sit in another
  slot than the task): judged on the clock of the node that holds the task.
  KEYS[1] P:{b}:task:<id>   read
  ARGV: 1 token, 2 lease clock now ('' = Redis TIME)
  Returns the lease's remaining ms | 0 when this token does not hold a live lease
]]
local f = redis.call('HMGET', KEYS[1], 'leaseToken', 'leaseExpiresAt')
local leaseEnd = tonumber(f[2])
if f[1] ~= ARGV[1] or leaseEnd == nil then return 0 end
return math.max(0, leaseEnd - leaseNow(ARGV[2]))
