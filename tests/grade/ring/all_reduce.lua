-- ring, wrong: a collective does the work.
local total = tensor.full(1, rank + 1)
dist.all_reduce(total)
result = total
