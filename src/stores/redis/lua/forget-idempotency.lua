--[[
  Free an idempotency key if it still names this task (its create failed, or it was swept).
  KEYS[1] P:{b}:idem:<p>:<key>    read/write
  ARGV: 1 task id
  Returns 1 deleted | 0 it names another task or nothing
]]
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local space = string.find(current, ' ', 1, true)
local id = space and string.sub(current, 1, space - 1) or current
if id ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
