--[[
  Reserve a (principal, idempotency key) for a task about to be created. The value is
  '<task id> <reserved at, Redis ms>': the reservation comes first and the task second (two
  hash slots), so a reservation whose task does not exist yet is either being created (young)
  or was left by a creator that died (old); the caller tells them apart by the age returned.
  KEYS[1] P:{b}:idem:<p>:<key>    read/write
  ARGV: 1 task id, 2 the value this reservation may replace ('' = only a free key),
        3 redis expiry in ms ('' = none)
  Returns {1} reserved | {0, current value, its task id, age in ms}
]]
local now = leaseNow('')
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[2] then
  local space = string.find(current, ' ', 1, true)
  local id = space and string.sub(current, 1, space - 1) or current
  local at = space and tonumber(string.sub(current, space + 1)) or 0
  return {0, current, id, now - at}
end
local value = ARGV[1] .. ' ' .. now
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], value)
end
return {1}
