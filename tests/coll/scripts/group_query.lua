local g = dist.new_group({2, 0})
print("group rank and size", dist.get_rank(g), dist.get_world_size(g))
