-- every rank a different root: a mismatch declared when two ranks have
-- entered; the third may enter before the run ends, or not
local t = tensor.zeros(4)
dist.broadcast(t, rank)
