--[[
  Take a concurrency permit under the asker's live lease, or wait for one (see readPermitBook
  in the prelude for KEYS and ARGV). Granted when the live permits and the waiters created
  before the asker leave room under the limit; otherwise the asker is recorded as a waiter
  and, with ARGV[5] == '1', its lease is given back (runnable at once, no interruption).
  Returns { 'retry' } | { '1' | '0', waiter members that fit now... }
]]
local book = readPermitBook()
if book == nil then return { 'retry' } end
local f = redis.call('HMGET', KEYS[3], 'leaseToken', 'leaseExpiresAt', 'status', 'member')
local leaseEnd = tonumber(f[2])
if f[1] ~= ARGV[2] or leaseEnd == nil or leaseEnd <= book.leaseTime then return { '0' } end
if book.mine then
  redis.call('ZREM', KEYS[2], ARGV[4])
  return { '1' }
end
local ahead = 0
for _, member in ipairs(book.waiters) do
  if member < ARGV[4] then ahead = ahead + 1 end
end
local limit = tonumber(ARGV[3])
if book.held + ahead < limit then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[4])
  return wakeable(book, limit - book.held - 1, { '1' })
end
redis.call('ZADD', KEYS[2], 0, ARGV[4])
if ARGV[5] == '1' then
  redis.call('HDEL', KEYS[3], 'leaseToken', 'leaseOwner', 'leaseExpiresAt')
  if f[3] == 'working' then redis.call('ZADD', KEYS[4], 0, f[4]) end
end
return wakeable(book, limit - book.held, { '0' })
