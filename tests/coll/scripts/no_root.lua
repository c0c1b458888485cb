local t = tensor.ones(2)
dist.reduce(t)
