--- title: a receive from any source on a tag nobody sends (tests: deadlock_tag)
--- world: 3
local t = tensor.zeros(2)
if rank == 0 then
  dist.recv(t, nil, {tag = 3})
else
  dist.send(t, 0, {tag = rank})
end
