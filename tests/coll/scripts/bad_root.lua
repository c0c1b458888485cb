local t = tensor.ones(2)
dist.broadcast(t, world_size)
