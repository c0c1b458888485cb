--- title: an irecv from any source waited on before the send that orders the next sender: no race (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  local w = dist.irecv(t, nil, {tag = 4})  -- only rank 1 has sent yet
  w:wait()
  dist.send(tensor.zeros(1), 2, {tag = 9}) -- rank 2 may send now
  local v = dist.irecv(t, nil, {tag = 4})
  while not v:is_completed() do end
  dist.send(tensor.zeros(1), 2, {tag = 9})
  dist.recv(t, nil, {tag = 4})
elseif rank == 1 then
  dist.send(tensor.full(2, 1), 0, {tag = 4})
else
  dist.recv(tensor.zeros(1), 0, {tag = 9})
  dist.send(tensor.full(2, 2), 0, {tag = 4})
  dist.recv(tensor.zeros(1), 0, {tag = 9})
  dist.send(tensor.full(2, 2), 0, {tag = 4})
end
