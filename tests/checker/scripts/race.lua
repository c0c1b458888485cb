--- title: two ranks send to rank 0 with one tag; rank 0 receives from any source (tests)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  for i = 1, 2 do
    local src = dist.recv(t, nil, {tag = 4})
    print("from", src)
  end
elseif rank == 1 then
  dist.send(tensor.full(2, 1), 0, {tag = 4})
else
  dist.send(tensor.full(2, 2), 0, {tag = 4})
end
