--- title: table.concat with a long separator in a loop: C work (item 4)
--- world: 1
local t = {}
for i = 1, 100 do t[i] = "x" end
local sep = string.rep("y", 100000)
while true do local r = table.concat(t, sep) end
