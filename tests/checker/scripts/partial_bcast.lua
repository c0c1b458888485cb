--- title: the root broadcasts, the others never call it (tests)
--- world: 3
local t = tensor.ones(4)
if rank == 0 then
  dist.broadcast(t, 0)
end
