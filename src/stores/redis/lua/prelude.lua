--[[
  Prepended to every script of this folder (scripts.ts joins them). Every key a script touches
  arrives in KEYS; the keys of one task and the indexes of its bucket share one hash tag, so
  each script runs inside one Redis Cluster slot.
]]
local terminal = { completed = true, failed = true, cancelled = true }

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
