-- The default by size: every rank ends with the same sums on both sides of
-- all_reduce's line, and the trace names the algorithm each call ran.
local small, big = tensor.full(8192, rank + 1), tensor.full(8193, rank + 1)
dist.all_reduce(small)
dist.all_reduce(big)
local want = world_size * (world_size + 1) / 2
local ok = small:min() == want and small:max() == want and big:min() == want and big:max() == want
print(ok and "same" or "different")
