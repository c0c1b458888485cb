--- title: Scatter: the root hands a different tensor to each rank
--- world: 4
--- expect: ok

-- dist.scatter(t, scatter_list, src): rank i receives scatter_list[i + 1]
-- from rank src into t. Only the root passes a list; the others pass nil.

local list = nil
if rank == 0 then
    list = {}
    for i = 1, world_size do list[i] = tensor.full(2, 100 + i - 1) end
    local parts = {}
    for i = 1, world_size do parts[i] = tostring(list[i]) end
    print("before: " .. table.concat(parts, " "))
end

local t = tensor.zeros(2)
dist.scatter(t, list, 0)
print("after:  " .. tostring(t))
