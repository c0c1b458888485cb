--- title: ranks create their groups in different orders (tests: group_mismatch)
--- world: 3
-- Rank 0's first group is [0, 1], the others' first is [0, 1, 2]: the same
-- context means different groups.
local first = rank == 0 and {0, 1} or {0, 1, 2}
local second = rank == 0 and {0, 1, 2} or {0, 1}
local g1 = dist.new_group(first)
local g2 = dist.new_group(second)
if rank ~= 2 then dist.all_reduce(tensor.ones(4), ReduceOp.SUM, {group = g1}) end
