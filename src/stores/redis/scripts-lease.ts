import { LuaScript } from './lua.js';

export const claimScript = new LuaScript(
  'claim',
  `
--[[
  Take the lease of a live working task when nobody holds it or the holder's lease expired.
  KEYS[1] P:task:<id>   read/write (lease fields)
  KEYS[2] P:working     write (score = lease expiry)
  ARGV: 1 owner, 2 token, 3 lease ms, 4 now (task expiry), 5 holder to take over from
        ('' = none), 6 lease clock now ('' = Redis TIME)
  Returns {lease expiry, 1 if a previous lease had expired or was taken over else 0} | nil
]]
local now = tonumber(ARGV[4])
local f = redis.call('HMGET', KEYS[1], 'status', 'expiresAt', 'leaseToken', 'leaseExpiresAt',
  'member', 'leaseOwner')
if f[1] ~= 'working' or not isLive(f[2], now) then return false end
local leaseTime = leaseNow(ARGV[6])
if f[3] and tonumber(f[4]) > leaseTime and (ARGV[5] == '' or f[6] ~= ARGV[5]) then return false end
local untilMs = leaseTime + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'leaseToken', ARGV[2], 'leaseOwner', ARGV[1], 'leaseExpiresAt', untilMs)
redis.call('ZADD', KEYS[2], untilMs, f[5])
return {untilMs, f[3] and 1 or 0}
`,
);

export const renewScript = new LuaScript(
  'renewLease',
  `
--[[
  Extend a lease still held with this token.
  KEYS[1] P:task:<id>   read/write (leaseExpiresAt)
  KEYS[2] P:working     write
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
`,
);

export const releaseScript = new LuaScript(
  'releaseLease',
  `
--[[
  Give a lease back; a task still working becomes runnable at once. Abandoned (ARGV[2] == '1'):
  the lease is kept but expired, so the next claim reports the run as interrupted.
  KEYS[1] P:task:<id>   read/write (lease fields)
  KEYS[2] P:working     write
  ARGV: 1 token, 2 abandoned ('1' | '0')
  Returns 1 released | 0 not held with this token
]]
local f = redis.call('HMGET', KEYS[1], 'leaseToken', 'status', 'member')
if f[1] ~= ARGV[1] then return 0 end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'leaseExpiresAt', 0)
else
  redis.call('HDEL', KEYS[1], 'leaseToken', 'leaseOwner', 'leaseExpiresAt')
end
if f[2] == 'working' then redis.call('ZADD', KEYS[2], 0, f[3]) end
return 1
`,
);
