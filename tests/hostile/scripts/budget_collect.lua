--- title: full collections of a large heap in a loop: C work no hook counts
--- world: 1
local keep = {}
for i = 1, 500000 do keep[i] = {} end
while true do collectgarbage() end
