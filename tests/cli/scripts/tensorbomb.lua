--- title: a tensor larger than the memory cap
--- world: 1
local t = tensor.zeros(1 << 30)
