-- Every factory and every way to move a tensor fails the same way, on its own line.
local function try(f) local ok, err = pcall(f); print(ok, err) end
try(function() return tensor.zeros(2, 3, {device = "cuda"}) end)
try(function() return tensor.ones({2}, {device = "cuda:0", dtype = "int64"}) end)
try(function() return tensor.full(3, 1.5, {device = "cuda"}) end)
try(function() return tensor.arange(5, {device = "cuda"}) end)
try(function() return tensor.randn(4, {device = "cuda"}) end)
try(function() return tensor.from({1, 2, 3}, {device = "cuda", dtype = "uint8"}) end)
local t = tensor.arange(6)
try(function() return t:cuda() end)
try(function() return t:cuda(1) end)
try(function() return t:to("cuda") end)
try(function() return t:to("cuda:0", "float64") end)
-- the host tensor is untouched and usable
print(t, t.device, t:sum())
