import { LuaScript } from './lua.js';

/*
 * Change notices are published inside the scripts, so a write and its announcement are one
 * atomic step. They carry ids and what changed, never the record (results can be MiBs):
 * `{"o": origin, "p": previous status, "k": "c" | "w" | "d", "id": id, "r": revision,
 * "s": status, "m": statusMessage, "u": updatedAt}` (the body after "o" and "p" is built by
 * the caller, codec.ts). Subscribers read the record back only when someone listens.
 */

export const createScript = new LuaScript(
  'create',
  `
--[[
  Create a task, unless its (principal, idempotency key) already names a live task.
  KEYS[1] P:task:<id>          write (and read: is the id taken)
  KEYS[2] P:idem:<p>:<key>     read/write, only when ARGV[9] == '1'
  KEYS[3] P:created            write
  KEYS[4] P:principal:<p>      write
  KEYS[5] P:working            write when the task is working
  KEYS[6] P:expiry             write when the task expires
  ARGV: 1 id, 2 fixed JSON, 3 data JSON, 4 status, 5 revision, 6 index member,
        7 expiresAt ('' = never), 8 redis expiry in ms ('' = none), 9 use idempotency,
        10 now, 11 key prefix, 12 channel, 13 origin,
        14 lease owner ('' = no lease), 15 lease token, 16 lease ms,
        17 lease clock now ('' = Redis TIME), 18 the notice body
  Also reads P:task:<earlier id> named by the idempotency key.
  Returns {1, lease expiry or 0} created | {0, fixed, data} the earlier task | {-1} the id is taken
]]
local now = tonumber(ARGV[10])
if ARGV[9] == '1' then
  local earlier = redis.call('GET', KEYS[2])
  if earlier then
    local f = redis.call('HMGET', ARGV[11] .. 'task:' .. earlier, 'expiresAt', 'fixed', 'data')
    if isLive(f[1], now) then return {0, f[2], f[3]} end
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {-1} end
redis.call('HSET', KEYS[1], 'fixed', ARGV[2], 'data', ARGV[3], 'status', ARGV[4],
  'revision', ARGV[5], 'expiresAt', ARGV[7], 'member', ARGV[6], 'pindex', KEYS[4])
redis.call('ZADD', KEYS[3], 0, ARGV[6])
redis.call('ZADD', KEYS[4], 0, ARGV[6])
local leaseUntil = 0
if ARGV[4] == 'working' and ARGV[14] ~= '' then
  leaseUntil = leaseNow(ARGV[17]) + tonumber(ARGV[16])
  redis.call('HSET', KEYS[1], 'leaseToken', ARGV[15], 'leaseOwner', ARGV[14],
    'leaseExpiresAt', leaseUntil)
end
if ARGV[4] == 'working' then redis.call('ZADD', KEYS[5], leaseUntil, ARGV[6]) end
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[6], ARGV[7], ARGV[6]) end
if ARGV[8] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[8]) end
if ARGV[9] == '1' then
  redis.call('HSET', KEYS[1], 'idem', KEYS[2])
  redis.call('SET', KEYS[2], ARGV[1])
  if ARGV[8] ~= '' then redis.call('PEXPIRE', KEYS[2], ARGV[8]) end
end
redis.call('PUBLISH', ARGV[12], '{"o":' .. cjson.encode(ARGV[13]) .. ',' .. ARGV[18] .. '}')
return {1, leaseUntil}
`,
);

export const compareAndSetScript = new LuaScript(
  'compareAndSet',
  `
--[[
  Write a task's next version if the stored revision is the expected one and it is not terminal.
  Leaving 'working' deletes the lease; entering it makes the task runnable.
  KEYS[1] P:task:<id>   read/write
  KEYS[2] P:working     write
  KEYS[3] P:expiry      write when expiresAt changed
  ARGV: 1 expected revision, 2 data JSON, 3 status, 4 expiresAt ('' = never),
        5 redis expiry in ms ('' = none), 6 now, 7 channel, 8 origin, 9 the notice body
  Returns {1, fixed, previous status} | {0} absent or expired | {0, fixed, data} lost the race
]]
local now = tonumber(ARGV[6])
local cur = redis.call('HMGET', KEYS[1], 'revision', 'status', 'expiresAt', 'member', 'fixed', 'data')
if not isLive(cur[3], now) then return {0} end
if tonumber(cur[1]) ~= tonumber(ARGV[1]) or terminal[cur[2]] then return {0, cur[5], cur[6]} end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'revision', tonumber(ARGV[1]) + 1, 'status', ARGV[3])
if ARGV[3] ~= 'working' then
  redis.call('HDEL', KEYS[1], 'leaseToken', 'leaseOwner', 'leaseExpiresAt')
  redis.call('ZREM', KEYS[2], cur[4])
elseif cur[2] ~= 'working' then
  redis.call('ZADD', KEYS[2], 0, cur[4])
end
if ARGV[4] ~= cur[3] then
  redis.call('HSET', KEYS[1], 'expiresAt', ARGV[4])
  if ARGV[4] == '' then
    redis.call('ZREM', KEYS[3], cur[4])
    redis.call('PERSIST', KEYS[1])
  else
    redis.call('ZADD', KEYS[3], ARGV[4], cur[4])
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
  end
end
redis.call('PUBLISH', ARGV[7], '{"o":' .. cjson.encode(ARGV[8]) .. ',"p":' ..
  cjson.encode(cur[2]) .. ',' .. ARGV[9] .. '}')
return {1, cur[5], cur[2]}
`,
);

export const saveStepScript = new LuaScript(
  'saveStep',
  `
--[[
  Record a finished step of a live task; the steps hash expires with the task.
  KEYS[1] P:task:<id>    read
  KEYS[2] P:steps:<id>   write
  ARGV: 1 step name, 2 value JSON, 3 now
  Returns 1 saved | 0 the task is absent or expired
]]
local expiresAt = redis.call('HGET', KEYS[1], 'expiresAt')
if not isLive(expiresAt, tonumber(ARGV[3])) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`,
);

export const sweepScript = new LuaScript(
  'sweep',
  `
--[[
  Delete up to ARGV[2] expired tasks with their steps, lease, idempotency key and index entries.
  KEYS[1] P:expiry    read/write
  KEYS[2] P:created   write
  KEYS[3] P:working   write
  ARGV: 1 now, 2 limit, 3 key prefix, 4 channel, 5 origin
  Also reads/deletes, built from the prefix: P:task:<id>, P:steps:<id>, the task's idempotency
  key and its P:principal:<p> entry.
  Returns the deleted ids.
]]
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local ids = {}
for _, member in ipairs(members) do
  local id = string.sub(member, string.find(member, ':', 1, true) + 1)
  local task = ARGV[3] .. 'task:' .. id
  local f = redis.call('HMGET', task, 'pindex', 'idem')
  if f[1] then redis.call('ZREM', f[1], member) end
  if f[2] and redis.call('GET', f[2]) == id then redis.call('DEL', f[2]) end
  redis.call('DEL', task, ARGV[3] .. 'steps:' .. id)
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
  redis.call('ZREM', KEYS[3], member)
  redis.call('PUBLISH', ARGV[4], '{"o":' .. cjson.encode(ARGV[5]) .. ',"k":"d","id":' ..
    cjson.encode(id) .. '}')
  ids[#ids + 1] = id
end
return ids
`,
);
