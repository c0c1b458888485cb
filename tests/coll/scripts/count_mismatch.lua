local t = tensor.ones(rank == 1 and 3 or 2)
dist.all_reduce(t)
