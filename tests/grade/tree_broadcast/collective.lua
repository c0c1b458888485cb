-- wrong: the collective does it.
local t = rank == 0 and tensor.arange(8) or tensor.zeros(8)
dist.broadcast(t, 0)
result = t
