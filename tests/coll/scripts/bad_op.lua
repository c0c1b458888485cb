dist.all_reduce(tensor.ones(2), "sum")
