--- title: all_reduce with different counts (tests: collective_mismatch)
--- world: 2
local t = tensor.ones(rank == 0 and 4 or 8)
dist.all_reduce(t, ReduceOp.SUM)
