--- title: a string the machine cannot hold, under a cap that allows it (item 7)
--- world: 1
local s = string.rep("x", 1500 << 20)
