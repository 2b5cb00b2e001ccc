--[[
  Create a task unless its id is taken. Idempotency keys are reserved before this script runs
  (reserve-idempotency.lua): they live in another bucket, so another hash slot.
  KEYS[1] P:{b}:task:<id>          write (and read: is the id taken)
  KEYS[2] P:{b}:created            write
  KEYS[3] P:{b}:principal:<p>      write
  KEYS[4] P:{b}:working            write when the task is working
  KEYS[5] P:{b}:expiry             write when the task expires
  KEYS[6] P:{b}:unfinished:<p>     read/write when the task is unfinished (prelude.lua)
  ARGV: 1 fixed JSON, 2 data JSON, 3 status, 4 revision, 5 index member,
        6 expiresAt ('' = never), 7 redis expiry in ms ('' = none), 8 idempotency key ('' = none),
        9 channel, 10 origin, 11 lease owner ('' = no lease), 12 lease token, 13 lease ms,
        14 lease clock now ('' = Redis TIME), 15 the notice body,
        16 the most unfinished tasks the principal may have in this bucket ('' = no cap), 17 now
  Returns {1, lease expiry or 0, place among the bucket's unfinished or 0} created
          | {-1} the id is taken | {-2} the principal is at the cap: nothing written
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return {-1} end
local place = 0
if unfinishedStatus[ARGV[3]] then
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', ARGV[17])
  local before = redis.call('ZCARD', KEYS[6])
  if ARGV[16] ~= '' and before >= tonumber(ARGV[16]) then return {-2} end
  redis.call('ZADD', KEYS[6], unfinishedScore(ARGV[6]), ARGV[5])
  keepUnfinishedFor(KEYS[6], ARGV[7], before > 0)
  place = before + 1
end
redis.call('HSET', KEYS[1], 'fixed', ARGV[1], 'data', ARGV[2], 'status', ARGV[3],
  'revision', ARGV[4], 'expiresAt', ARGV[6], 'member', ARGV[5], 'pindex', KEYS[3])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'idem', ARGV[8]) end
redis.call('ZADD', KEYS[2], 0, ARGV[5])
redis.call('ZADD', KEYS[3], 0, ARGV[5])
local leaseUntil = 0
if ARGV[3] == 'working' and ARGV[11] ~= '' then
  leaseUntil = leaseNow(ARGV[14]) + tonumber(ARGV[13])
  redis.call('HSET', KEYS[1], 'leaseToken', ARGV[12], 'leaseOwner', ARGV[11],
    'leaseExpiresAt', leaseUntil)
end
if ARGV[3] == 'working' then redis.call('ZADD', KEYS[4], leaseUntil, ARGV[5]) end
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[5], ARGV[6], ARGV[5]) end
if ARGV[7] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
notice(ARGV[9], ARGV[10], ARGV[15])
return {1, leaseUntil, place}
