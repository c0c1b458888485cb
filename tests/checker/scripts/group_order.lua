--- world: 2
-- Both ranks create two groups of ranks 0 and 1, in opposite orders: their
-- "a" is not the same group, and each waits in its all_reduce for the other.
local a, b
if rank == 0 then
  a = dist.new_group({0, 1}); b = dist.new_group({0, 1})
else
  b = dist.new_group({0, 1}); a = dist.new_group({0, 1})
end
local t = tensor.ones(2)
dist.all_reduce(t, ReduceOp.SUM, {group = a})
