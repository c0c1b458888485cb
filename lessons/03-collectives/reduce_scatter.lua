--- title: Reduce-scatter: sum everybody's pieces, each rank keeps one piece
--- world: 4
--- expect: ok

-- dist.reduce_scatter(out, list, op): every rank brings world_size pieces;
-- rank i gets the sum over all ranks of piece i. It is the first half of
-- the ring all-reduce (see ring_allreduce.lua).

local pieces = {}
for j = 1, world_size do pieces[j] = tensor.full(2, 10 * (j - 1) + rank) end
local parts = {}
for j = 1, world_size do parts[j] = tostring(pieces[j]) end
print("before: " .. table.concat(parts, " "))

local out = tensor.zeros(2)
dist.reduce_scatter(out, pieces, ReduceOp.SUM)
print("after:  " .. tostring(out))     -- 4 * 10 * rank + (0 + 1 + 2 + 3)

-- dist.reduce_scatter_tensor(out, input): the same with the pieces laid out
-- one after the other in a single input tensor.
local input = tensor.arange(2 * world_size)
local out2 = tensor.zeros(2)
dist.reduce_scatter_tensor(out2, input)
print("from one tensor: " .. tostring(out2))
