--- title: rank 0 receives from whoever sends first
--- world: 4
if rank == 0 then
  local t = tensor.zeros(1)
  local sum = 0
  for i = 1, world_size - 1 do
    local src = dist.recv(t)
    assert(t[0] == src * 100)
    sum = sum + src
  end
  print("sum of senders", sum)
else
  dist.send(tensor.full(1, rank * 100), 0)
end
