-- a tensor's metatable is not the script's to replace
local t = tensor.zeros(2)
setmetatable(t, {__index = function() return 42 end})
