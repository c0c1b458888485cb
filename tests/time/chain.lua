--- title: a chain: rank 0's tensor passes through every rank
local n = 1024                     -- float32: 4096 bytes
local t = tensor.zeros(n)
if rank > 0 then dist.recv(t, rank - 1) end
if rank < world_size - 1 then dist.send(t, rank + 1) end
if rank == world_size - 1 then print(string.format("%.0f", dist.time() * 1e9)) end
