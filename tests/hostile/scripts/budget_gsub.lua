--- title: gsub over a long string in a loop: C work (item 4)
--- world: 1
local s = string.rep("x", 1 << 20)
while true do local r = s:gsub("y", "z") end
