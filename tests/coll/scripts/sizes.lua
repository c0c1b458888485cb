local out = tensor.zeros(5)
dist.all_gather_into_tensor(out, tensor.ones(2))
