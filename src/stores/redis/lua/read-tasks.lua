--[[
  Reads the same fields of a batch of task hashes in one call (the scans' per-task reads), so a
  scan costs a command per batch, not per task. Read only; the caller batches one bucket, so
  every key shares one hash tag and the call stays in one Cluster slot.
  KEYS[1..n] P:{b}:task:<id>   read
  ARGV: the field names
  Returns the fields of each hash in turn, flat (n × #ARGV values; false for a missing one)
]]
local out = {}
for k = 1, #KEYS do
  local values = redis.call('HMGET', KEYS[k], unpack(ARGV))
  for i = 1, #ARGV do out[#out + 1] = values[i] end
end
return out
