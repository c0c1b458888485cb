--- title: rank 1 raises an error while rank 0 waits on it
--- world: 2
local t = tensor.zeros(4)
if rank == 1 then
  local x = nil
  print(x.field)
end
dist.recv(t, 1)
