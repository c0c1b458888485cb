--- title: a plain find over a long string in a loop: C work (item 4)
--- world: 1
local s = string.rep("x", 16 << 20)
while true do local r = s:find("y", 1, true) end
