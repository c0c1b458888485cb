local t = tensor.arange(2 * world_size) + 10 * rank
local out = tensor.zeros(2 * world_size)
dist.all_to_all(out:chunk(world_size), t:chunk(world_size)) -- views of two tensors: fine
dist.all_to_all_single(t, t)
