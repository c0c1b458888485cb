--- title: receives from any source ordered by the program's messages: no race (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  dist.recv(t, nil, {tag = 4})          -- only rank 1 has sent yet
  dist.send(tensor.zeros(1), 2, {tag = 9}) -- rank 2 may send now
  dist.recv(t, nil, {tag = 4})
  print(t)
elseif rank == 1 then
  dist.send(tensor.full(2, 1), 0, {tag = 4})
else
  dist.recv(tensor.zeros(1), 0, {tag = 9})
  dist.send(tensor.full(2, 2), 0, {tag = 4})
end
