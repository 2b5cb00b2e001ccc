--[[
  Give a lease back; a task still working becomes runnable at once. Abandoned (ARGV[2] == '1'),
  or released after it already ran out (nobody knows that run ended cleanly): the lease is kept
  but expired, so the next claim reports the run as interrupted.
  KEYS[1] P:{b}:task:<id>   read/write (lease fields)
  KEYS[2] P:{b}:working     write
  ARGV: 1 token, 2 abandoned ('1' | '0'), 3 lease clock now ('' = Redis TIME)
  Returns 1 released | 0 not held with this token
]]
local f = redis.call('HMGET', KEYS[1], 'leaseToken', 'status', 'member', 'leaseExpiresAt')
if f[1] ~= ARGV[1] then return 0 end
if ARGV[2] == '1' or tonumber(f[4]) <= leaseNow(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'leaseExpiresAt', 0)
else
  redis.call('HDEL', KEYS[1], 'leaseToken', 'leaseOwner', 'leaseExpiresAt')
end
if f[2] == 'working' then redis.call('ZADD', KEYS[2], 0, f[3]) end
return 1
