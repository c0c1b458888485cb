--- title: a tensor far larger than the cap, whose element count fits (item 7)
--- world: 1
local t = tensor.zeros(2^40)
