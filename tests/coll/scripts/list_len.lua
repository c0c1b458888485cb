local list = {tensor.zeros(2), tensor.zeros(2)}
dist.all_gather(list, tensor.ones(2))
