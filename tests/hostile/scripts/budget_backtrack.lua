--- title: a pattern that backtracks: hours of C inside one call of Lua's own matcher
--- world: 2
local s = string.rep("a", 32)
print(s:find(string.rep("a*", 32) .. "b"))
