-- Exercise: ring (see README.md). Set the global `result` on every rank.
local right = (rank + 1) % world_size
local left = (rank - 1 + world_size) % world_size
local value = tensor.full(1, rank + 1)
local total = value:clone()

-- TODO: world_size - 1 steps: send to the right, receive from the left,
-- add what arrived to total, and forward it next step.

result = total
