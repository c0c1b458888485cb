--- title: a mixed cycle through isend and wait (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  local w = dist.isend(t, 1)
  w:wait()                                -- line 6: rank 1 receives from 2 first
  dist.recv(t, 2)
elseif rank == 1 then
  dist.recv(t, 2)
  dist.recv(t, 0)
else
  dist.recv(t, 0)                         -- rank 0 sends to 1 first
  dist.send(t, 1)
end
