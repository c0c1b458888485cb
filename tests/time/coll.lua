--- title: one collective; the last rank to finish prints the time (all print)
-- Run with --algo to pick the algorithm; n elements of float32.
local n = 4096
local t = tensor.ones(n)
local which = COLL or "all_reduce"
dist.all_reduce(t)
print(string.format("%.0f", dist.time() * 1e9))
