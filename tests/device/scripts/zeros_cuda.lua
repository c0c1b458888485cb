-- A device tensor where no GPU can be used: the script stops at line 3.
local host = tensor.zeros(4)
local t = tensor.zeros(4, {device = "cuda"})
print("not reached", host, t)
