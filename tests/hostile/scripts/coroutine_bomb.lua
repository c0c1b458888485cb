-- coroutines made as fast as possible, each holding a stack
local t = {}
for i = 1, 1e9 do t[i] = coroutine.create(function() end) end
