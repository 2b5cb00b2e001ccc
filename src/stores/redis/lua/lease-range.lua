--[[
  Working tasks of one bucket by lease: 'runnable' (nobody holds a live lease: score <= now)
  or 'leased' (a lease runs past now), judged on the clock of the node that holds the bucket.
  KEYS[1] P:{b}:working   read
  ARGV: 1 'runnable' | 'leased', 2 offset, 3 count, 4 lease clock now ('' = Redis TIME)
  Returns {lease clock now, member...}
]]
local now = leaseNow(ARGV[4])
local members
if ARGV[1] == 'runnable' then
  members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', ARGV[2], ARGV[3])
else
  members = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'LIMIT', ARGV[2], ARGV[3])
end
table.insert(members, 1, now)
return members
