--[[
  Give back the permit the asker holds under its lease (if it does), and name the waiters that
  now fit (see readPermitBook in the prelude for KEYS and ARGV).
  Returns { 'retry' } | { 'ok', waiter members that fit now... }
]]
local book = readPermitBook()
if book == nil then return { 'retry' } end
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return wakeable(book, tonumber(ARGV[3]) - book.held, { 'ok' })
