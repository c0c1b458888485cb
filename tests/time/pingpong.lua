--- title: ping-pong: ten round trips of n bytes; each takes 2 (alpha + n beta)
--- world: 2
local n = 250                      -- float32: 1000 bytes
local t = tensor.zeros(n)
for i = 1, 10 do
  if rank == 0 then
    dist.send(t, 1)
    dist.recv(t, 1)
  else
    dist.recv(t, 0)
    dist.send(t, 0)
  end
end
print(string.format("%.0f", dist.time() * 1e9))
