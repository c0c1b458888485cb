--- title: modelled arithmetic: flops= makes tensor arithmetic move the clock
--- world: 1
local a = tensor.ones(1000)
local b = a + a                    -- 1000 operations
b:add_(a)                          -- 1000
local s = b:sum()                  -- 1000
local m = tensor.matmul(tensor.ones(10, 20), tensor.ones(20, 5))  -- 2*10*20*5 = 2000
print(string.format("%.0f", dist.time() * 1e9))
dist.compute(1)                    -- 1 ms
print(string.format("%.0f", dist.time() * 1e9))
