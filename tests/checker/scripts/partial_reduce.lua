--- title: only rank 1 calls the collective (tests: a deadlock under every send mode)
--- world: 2
local t = tensor.ones(4)
if rank == 1 then
  dist.reduce(t, 0)
end
