--[[
  Write a task's next version if the stored revision is the expected one and it is not terminal;
  a fenced write (ARGV[10] a lease token) also only while that token is the task's lease.
  Leaving 'working' deletes the lease; entering it makes the task runnable.
  KEYS[1] P:{b}:task:<id>   read/write
  KEYS[2] P:{b}:working     write
  KEYS[3] P:{b}:expiry      write when expiresAt changed
  KEYS[4] P:{b}:unfinished:<p>  write when the task finishes or its expiresAt changed
  ARGV: 1 expected revision, 2 data JSON, 3 status, 4 expiresAt ('' = never),
        5 redis expiry in ms ('' = none), 6 now, 7 channel, 8 origin, 9 the notice body,
        10 the writer's lease token ('' = unfenced)
  Returns {1, fixed, previous status} | {0} absent or expired | {0, fixed, data} lost the race
          | {2, fixed, data} fenced: another lease (or none) holds the task
]]
local now = tonumber(ARGV[6])
local cur = redis.call('HMGET', KEYS[1], 'revision', 'status', 'expiresAt', 'member', 'fixed', 'data',
  'leaseToken')
if not isLive(cur[3], now) then return {0} end
if terminal[cur[2]] then return {0, cur[5], cur[6]} end
if ARGV[10] ~= '' and cur[7] ~= ARGV[10] then return {2, cur[5], cur[6]} end
if tonumber(cur[1]) ~= tonumber(ARGV[1]) then return {0, cur[5], cur[6]} end
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
if not unfinishedStatus[ARGV[3]] then
  redis.call('ZREM', KEYS[4], cur[4])
elseif ARGV[4] ~= cur[3] then
  local moved = redis.call('ZADD', KEYS[4], 'XX', 'CH', unfinishedScore(ARGV[4]), cur[4])
  if moved == 1 then keepUnfinishedFor(KEYS[4], ARGV[5], true) end
end
notice(ARGV[7], ARGV[8], '"p":' .. cjson.encode(cur[2]) .. ',' .. ARGV[9])
return {1, cur[5], cur[2]}
