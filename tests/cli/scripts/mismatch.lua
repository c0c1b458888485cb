--- title: the receive expects another size than the send carries
--- world: 2
if rank == 0 then
  dist.send(tensor.ones(4), 1)
else
  local t = tensor.zeros(3)
  dist.recv(t, 0)
end
