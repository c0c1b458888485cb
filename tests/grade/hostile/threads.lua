-- hostile: coroutines forever and tensors as large as allowed
local big = {}
for i = 1, 1e6 do big[i] = tensor.zeros(1 << 16) end
