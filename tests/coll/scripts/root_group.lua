local g = dist.new_group({0, 2})
local t = tensor.ones(2)
if rank ~= 1 then dist.broadcast(t, 1, {group = g}) end
