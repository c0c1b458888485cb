--- title: a keyword argument, as Python would pass it
local t = tensor.ones(4)
dist.all_reduce(t, op=dist.ReduceOp.SUM)
