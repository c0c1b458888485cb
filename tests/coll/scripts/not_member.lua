local g = dist.new_group({0})
dist.all_reduce(tensor.ones(2), {group = g})
