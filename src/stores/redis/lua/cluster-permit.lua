--[[
  A concurrency key's permits on a Redis Cluster, all in the key's own slot: the holders'
  leases sit in other slots, so each holder carries its lease's expiry (on this node's clock)
  and is refreshed with the lease. An expired holder is dropped here; the caller checks the
  waiters this script names (their tasks sit in other slots) and passes back the dead ones.
  KEYS[1] P:{permit:<key>}:holders  sorted set: task id, score = the lease's expiry
  KEYS[2] P:{permit:<key>}:tokens   hash: task id -> lease token
  KEYS[3] P:{permit:<key>}:waiters  sorted set, scores 0, members `<createdAt>:<id>`
  ARGV: 1 'acquire' | 'release' | 'renew', 2 task id, 3 token, 4 limit, 5 the task's waiter
        member, 6 the lease's remaining ms, 7 lease clock now ('' = Redis TIME), 8... waiter
        members found dead (not working, or expired): removed first
  Returns acquire {'1' | '0', waiters that fit now...} | release {'ok', waiters that fit now...}
          | renew {'1' held | '0' not}; the waiters named are the first that fit (the asker
          apart); on a refusal they are the older waiters it waits behind
]]
local now = leaseNow(ARGV[7])
local id, token, limit = ARGV[2], ARGV[3], tonumber(ARGV[4])
for i = 8, #ARGV do redis.call('ZREM', KEYS[3], ARGV[i]) end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('ZREM', KEYS[1], gone)
  redis.call('HDEL', KEYS[2], gone)
end

local mine = redis.call('HGET', KEYS[2], id) == token
if ARGV[1] == 'renew' then
  if not mine then return { '0' } end
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[6]), id)
  return { '1' }
end

-- The first `free` waiters other than the asker, appended to `head`.
local function firstWaiters(free, head)
  if free <= 0 then return head end
  local taken = 0
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, free)) do
    if taken >= free then break end
    if member ~= ARGV[5] then
      head[#head + 1] = member
      taken = taken + 1
    end
  end
  return head
end

if ARGV[1] == 'release' then
  if mine then
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
  end
  return firstWaiters(limit - redis.call('ZCARD', KEYS[1]), { 'ok' })
end

if mine then
  redis.call('ZREM', KEYS[3], ARGV[5])
  return firstWaiters(limit - redis.call('ZCARD', KEYS[1]), { '1' })
end
-- Another token of this task: an earlier attempt whose lease has ended.
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[2], id)
local free = limit - redis.call('ZCARD', KEYS[1])
local ahead = firstWaiters(free, {})
local older = 0
for _, member in ipairs(ahead) do
  if member < ARGV[5] then older = older + 1 end
end
if free > 0 and older < free then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[6]), id)
  redis.call('HSET', KEYS[2], id, token)
  redis.call('ZREM', KEYS[3], ARGV[5])
  return firstWaiters(free - 1, { '1' })
end
redis.call('ZADD', KEYS[3], 0, ARGV[5])
table.insert(ahead, 1, '0')
return ahead
