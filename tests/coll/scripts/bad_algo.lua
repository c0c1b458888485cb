dist.all_reduce(tensor.ones(2), ReduceOp.SUM, {algo = "tree"})
