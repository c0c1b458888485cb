--- title: a tensor whose element count overflows (item 7)
--- world: 1
local t = tensor.zeros(2^40, 2^40)
