--[[
  Prepended to every script of this folder (scripts.ts joins them). Every key a script touches
  arrives in KEYS; the keys of one task and the indexes of its bucket share one hash tag, so
  each script runs inside one Redis Cluster slot.
]]
local terminal = { completed = true, failed = true, cancelled = true }
local unfinishedStatus = { working = true, input_required = true }

--[[
  A principal's unfinished tasks of one bucket, P:{b}:unfinished:<p>: index members scored by
  expiresAt ('+inf' = never), so ZCOUNT (now, +inf] counts the live ones although task hashes
  vanish by PEXPIRE. A task leaves it when it finishes; expired members when the set is added to.
]]
local function unfinishedScore(expiresAt)
  if expiresAt == '' then return '+inf' end
  return expiresAt
end

-- Keeps the set at least as long as the task hash it now holds (Redis expiry in ms, '' = none).
local function keepUnfinishedFor(key, redisExpiryMs, existed)
  if redisExpiryMs == '' then
    redis.call('PERSIST', key)
  elseif not existed then
    redis.call('PEXPIRE', key, redisExpiryMs)
  else
    local ttl = redis.call('PTTL', key)
    if ttl >= 0 and ttl < tonumber(redisExpiryMs) then redis.call('PEXPIRE', key, redisExpiryMs) end
  end
end

-- A task hash is live when it exists (expiresAt field present) and has not expired.
local function isLive(expiresAt, now)
  return expiresAt ~= false and (expiresAt == '' or tonumber(expiresAt) > now)
end

-- Leases are judged on Redis's own clock (TIME), so workers whose clocks disagree cannot take
-- each other's live leases. A caller's time is used only when given (tests with a fake clock).
local function leaseNow(given)
  if given ~= nil and given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The change notice published with each write (see codec.ts): origin first, then the body.
local function notice(channel, origin, body)
  redis.call('PUBLISH', channel, '{"o":' .. cjson.encode(origin) .. ',' .. body .. '}')
end

--[[
  A concurrency key's permits, for acquire-permit and release-permit (same layout in both):
  KEYS[1] P:{b}:permits:<key> (hash task id -> lease token), KEYS[2] P:{b}:waiters:<key>
  (sorted set, scores 0, members `<createdAt>:<id>`), KEYS[3] the asking task, KEYS[4] its
  bucket's working index, KEYS[4+i] the i-th holder's task hash, then each waiter's.
  ARGV: 1 task id, 2 token, 3 limit, 4 member, 5 release on refusal ('1'), 6 now (task
  expiry), 7 lease clock now ('' = Redis TIME), 8 holder count, then holder ids, then waiter
  members. The caller read holders and waiters just before: if they changed, the script
  returns 'retry' and the caller reads again. Dead permits and waiters are dropped; returns
  the live holders' count (the asker's own apart), whether the asker holds one, and the live
  waiters in creation order.
]]
local function readPermitBook()
  local nh = tonumber(ARGV[8])
  local stored = redis.call('HGETALL', KEYS[1])
  if #stored ~= 2 * nh then return nil end
  local tokens = {}
  for i = 1, #stored, 2 do tokens[stored[i]] = stored[i + 1] end
  local members = redis.call('ZRANGE', KEYS[2], 0, -1)
  if #members ~= #ARGV - 8 - nh then return nil end
  for i = 1, #members do
    if members[i] ~= ARGV[8 + nh + i] then return nil end
  end
  local leaseTime = leaseNow(ARGV[7])
  local now = tonumber(ARGV[6])
  local book = { held = 0, mine = false, waiters = {}, leaseTime = leaseTime }
  for i = 1, nh do
    local id = ARGV[8 + i]
    local token = tokens[id]
    if token == nil then return nil end
    local h = redis.call('HMGET', KEYS[4 + i], 'leaseToken', 'leaseExpiresAt')
    local leaseEnd = tonumber(h[2])
    if h[1] == token and leaseEnd ~= nil and leaseEnd > leaseTime then
      if id == ARGV[1] and token == ARGV[2] then book.mine = true
      elseif id ~= ARGV[1] then book.held = book.held + 1 end
    else
      redis.call('HDEL', KEYS[1], id)
    end
  end
  for i = 1, #members do
    local w = redis.call('HMGET', KEYS[4 + nh + i], 'status', 'expiresAt')
    if w[1] == 'working' and isLive(w[2], now) then
      book.waiters[#book.waiters + 1] = members[i]
    else
      redis.call('ZREM', KEYS[2], members[i])
    end
  end
  return book
end

-- The first `free` waiters other than the asker, as the reply's tail.
local function wakeable(book, free, reply)
  for _, member in ipairs(book.waiters) do
    if free <= 0 then break end
    if member ~= ARGV[4] then
      reply[#reply + 1] = member
      free = free - 1
    end
  end
  return reply
end
