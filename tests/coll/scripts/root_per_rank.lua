-- every rank a different root: a mismatch found when two ranks have
-- entered, declared when the third has
local t = tensor.zeros(4)
dist.broadcast(t, rank)
