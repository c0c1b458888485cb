--- title: a ring passed around many times
local t = tensor.full(1, rank)
local r = tensor.zeros(1)
local right, left = (rank + 1) % world_size, (rank - 1 + world_size) % world_size
for i = 1, 1000 do
  if rank % 2 == 0 then
    dist.send(t, right); dist.recv(r, left)
  else
    dist.recv(r, left); dist.send(t, right)
  end
  t:copy_(r)
end
if rank == 0 then print("after 1000 steps rank 0 holds", t[0]) end
