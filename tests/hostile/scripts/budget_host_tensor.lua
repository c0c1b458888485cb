--- title: a tensor the machine cannot hold, under a cap that allows it (item 7)
--- world: 1
local t = tensor.zeros(1 << 30)
