local list = {}
for i = 1, world_size do list[i] = tensor.zeros(2) end
dist.gather(tensor.ones(2), rank == 0 and list or {}, 0) -- an empty list is nil
dist.scatter(tensor.ones(2), list, 1)
