--- title: prints, and writes to a buffer an isend still sends (tests: ok with a pitfall)
--- world: 2
print("hello from", rank)
local t = tensor.ones(4)
if rank == 0 then
  local w = dist.isend(t, 1)
  t[0] = 5
  w:wait()
else
  dist.recv(t, 0)
end
