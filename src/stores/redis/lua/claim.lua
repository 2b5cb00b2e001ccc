--[[
  Take the lease of a live working task when nobody holds it or the holder's lease expired.
  A claim to run (ARGV[7] == '1') also returns the record and its steps, read under the new
  lease, so the runner needs no second and third round trip before the handler starts.
  KEYS[1] P:{b}:task:<id>    read/write (lease fields)
  KEYS[2] P:{b}:working      write (score = lease expiry)
  KEYS[3] P:{b}:steps:<id>   read when loading
  ARGV: 1 owner, 2 token, 3 lease ms, 4 now (task expiry), 5 holder to take over from
        ('' = none), 6 lease clock now ('' = Redis TIME), 7 '1' to load the task and steps,
        8 '1' to spare an expired lease still on record (its holder may renew after an outage)
  Returns {lease expiry, 1 if a previous lease had expired or was taken over else 0
           [, fixed, data, {step name, value JSON, ...}]} | nil
]]
local now = tonumber(ARGV[4])
local load = ARGV[7] == '1'
local fields = {'status', 'expiresAt', 'leaseToken', 'leaseExpiresAt', 'member', 'leaseOwner'}
if load then
  table.insert(fields, 'fixed')
  table.insert(fields, 'data')
end
local f = redis.call('HMGET', KEYS[1], unpack(fields))
if f[1] ~= 'working' or not isLive(f[2], now) then return false end
local leaseTime = leaseNow(ARGV[6])
-- A live lease, or a durable wait (no token, leaseExpiresAt = its wake time), refuses the claim.
if f[4] and tonumber(f[4]) > leaseTime and (ARGV[5] == '' or f[6] ~= ARGV[5]) then return false end
if ARGV[8] == '1' and f[3] and (ARGV[5] == '' or f[6] ~= ARGV[5]) then return false end
local untilMs = leaseTime + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'leaseToken', ARGV[2], 'leaseOwner', ARGV[1], 'leaseExpiresAt', untilMs)
redis.call('ZADD', KEYS[2], untilMs, f[5])
if not load then return {untilMs, f[3] and 1 or 0} end
return {untilMs, f[3] and 1 or 0, f[7], f[8], redis.call('HGETALL', KEYS[3])}
