--- world: 3
-- Over 1 MiB, recursive_doubling and reduce_broadcast (which reduces in
-- place, the broadcast overwriting it) give the ring's result, element for
-- element, whatever the group size (folded or not).
local n = 3 * 1024 * 1024 + 7 -- 12 MiB and 28 bytes
local a = tensor.zeros(n)
for i = 0, n - 1, 4099 do a[i] = (i % 1000) + rank end
a[n - 1] = rank + 0.5
local b, c = a:clone(), a:clone()
dist.all_reduce(a, ReduceOp.SUM, {algo = "recursive_doubling"})
dist.all_reduce(b, ReduceOp.SUM, {algo = "ring"})
dist.all_reduce(c, ReduceOp.SUM, {algo = "reduce_broadcast"}) -- in place, no copy
local d = 0
for i = 0, n - 1, 4099 do d = d + math.abs(a[i] - b[i]) + math.abs(c[i] - b[i]) end
d = d + math.abs(a[n - 1] - b[n - 1]) + math.abs(c[n - 1] - b[n - 1])
print(d == 0 and a:sum() == b:sum() and c:sum() == b:sum() and "same" or ("differ by " .. d))
