--- world: 1
-- 100000 lines in one print: more than one event carries.
local t = {}
for i = 1, 100000 do t[i] = "line " .. i end
print(table.concat(t, "\n"))
