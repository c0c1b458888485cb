--- title: All-gather: every rank gets every rank's tensor
--- world: 4
--- expect: ok

-- dist.all_gather(list, t): list[i + 1] receives rank i's t, on every rank.
-- The list needs one tensor per rank, each the size of t.

local mine = tensor.full(2, rank * 10)
print("before: " .. tostring(mine))

local list = {}
for i = 1, world_size do list[i] = tensor.zeros(2) end
dist.all_gather(list, mine)
local parts = {}
for i = 1, world_size do parts[i] = tostring(list[i]) end
print("after:  " .. table.concat(parts, " "))

-- dist.all_gather_into_tensor(out, t): the same into one tensor of
-- world_size times t's elements, rank i's part at offset i * t:numel().
local out = tensor.zeros(2 * world_size)
dist.all_gather_into_tensor(out, mine)
print("into one tensor: " .. tostring(out))
