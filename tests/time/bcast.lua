--- title: broadcast of 4096 bytes from rank 0
local t = tensor.ones(1024)
dist.broadcast(t, 0)
print(string.format("%.0f", dist.time() * 1e9))
