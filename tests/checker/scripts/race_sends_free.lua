--- title: as race_sends.lua, but rank 2 waits on its isend before it lets rank 1 go: no race, a send/send deadlock (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  local w = dist.irecv(t)                  -- from any source
  dist.send(tensor.zeros(1), 1, {tag = 9})
  w:wait()
  dist.recv(t)
elseif rank == 1 then
  dist.recv(tensor.zeros(1), 2, {tag = 5}) -- after rank 0 has taken rank 2's message
  dist.send(tensor.full(2, 1), 0)
  dist.recv(tensor.zeros(1), 0, {tag = 9})
else
  local w = dist.isend(tensor.full(2, 2), 0)
  w:wait()
  dist.send(tensor.zeros(1), 1, {tag = 5})
end
