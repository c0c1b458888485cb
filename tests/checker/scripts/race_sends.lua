--- title: a race leaves a send with no receive: rank 0's irecv from any source takes rank 2's message, rank 0 then sends to rank 1, which is sending to it (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  local w = dist.irecv(t)                  -- from any source
  dist.send(tensor.zeros(1), 1, {tag = 9})
  w:wait()
  dist.recv(t)
elseif rank == 1 then
  dist.recv(tensor.zeros(1), 2, {tag = 5}) -- after rank 2 has posted its send
  dist.send(tensor.full(2, 1), 0)
  dist.recv(tensor.zeros(1), 0, {tag = 9})
else
  local w = dist.isend(tensor.full(2, 2), 0)
  dist.send(tensor.zeros(1), 1, {tag = 5})
  w:wait()
end
