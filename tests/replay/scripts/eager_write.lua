--- title: writing after an isend: a pitfall unless the send is eager (tests)
--- world: 2
local t = tensor.ones(2)
if rank == 0 then
  local w = dist.isend(t, 1)
  t:fill_(5)                              -- line 6: a pitfall with rendezvous sends
  dist.send(tensor.zeros(1), 1, {tag = 9}) -- only now may rank 1 receive: no real race
  w:wait()
else
  dist.recv(tensor.zeros(1), 0, {tag = 9})
  dist.recv(t, 0)
  print(t)
end
