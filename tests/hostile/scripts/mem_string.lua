local s = string.rep("x", 1 << 20)
local t = {}
for i = 1, 1e9 do t[i] = s .. i end
