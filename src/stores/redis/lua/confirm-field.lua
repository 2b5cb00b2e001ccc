--[[
  Re-write one field of a hash if it still holds the expected value, so that a WAIT sent right
  after it on the same connection tells whether the replicas have the hash as the caller left
  it (a create, a claim). Run with plain EVAL, never EVALSHA: a NOSCRIPT retry would run it
  after the WAIT. Does not use the prelude.
  KEYS[1] P:{b}:task:<id>   read/write (the one field, unchanged)
  ARGV: 1 field, 2 expected value
  Returns 1 present (and re-written) | 0 absent or changed
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
