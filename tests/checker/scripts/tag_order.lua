--- title: the right tags in opposite orders (tests: deadlock_tag)
--- world: 2
local t = tensor.zeros(2)
if rank == 0 then
  dist.send(t, 1, {tag = 1})
  dist.send(t, 1, {tag = 2})
else
  dist.recv(t, 0, {tag = 2})
  dist.recv(t, 0, {tag = 1})
end
