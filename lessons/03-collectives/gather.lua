--- title: Gather: the root collects every rank's tensor
--- world: 4
--- expect: ok

-- dist.gather(t, gather_list, dst): rank dst receives every rank's t into its
-- gather_list (one tensor per rank). The other ranks pass nil for the list.

local mine = tensor.full(2, rank + 1)
print("before: " .. tostring(mine))

local list = nil
if rank == 0 then
    list = {}
    for i = 1, world_size do list[i] = tensor.zeros(2) end
end
dist.gather(mine, list, 0)

if rank == 0 then
    local parts = {}
    for i = 1, world_size do parts[i] = tostring(list[i]) end
    print("after:  " .. table.concat(parts, " "))
else
    print("after:  (sent to rank 0)")
end
