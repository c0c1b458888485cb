--- title: a send and a receive that differ in their tag (tests: deadlock_tag)
--- world: 2
local t = tensor.zeros(4)
if rank == 0 then
  dist.send(t, 1, {tag = 1})
else
  dist.recv(t, 0, {tag = 2})
end
