--- world: 2
local t = tensor.zeros(2)
dist.send(t, 2)
