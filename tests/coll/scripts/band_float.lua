local t = tensor.ones(2)
dist.all_reduce(t, ReduceOp.BAND)
