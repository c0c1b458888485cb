--- title: rank 1 waits to receive from rank 2, which the test kills
--- world: 3
local t = tensor.zeros(4)
if rank == 2 then
  dist.recv(t, 1)
  print("ready")
  dist.compute(60000)   -- the test kills this rank here
  dist.send(t, 1)
elseif rank == 1 then
  dist.send(t, 2)
  dist.recv(t, 2)       -- waits for the rank that dies
end
