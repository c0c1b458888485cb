--- title: an irecv from any source, a send, then the wait: still a race (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  local w = dist.irecv(t)                  -- from any source
  dist.send(tensor.zeros(1), 1, {tag = 9}) -- rank 1 sends only after this
  w:wait()
  dist.recv(t)
elseif rank == 1 then
  dist.recv(tensor.zeros(1), 0, {tag = 9})
  dist.send(tensor.full(2, 1), 0)
else
  dist.send(tensor.full(2, 2), 0)
end
