-- the tensor metatable is protected: getmetatable gives its name only
local mt = getmetatable(tensor.zeros(1))
print(mt)
rawset(mt, "__index", nil)
