-- A rank that cannot have its device tensor falls back to the host and talks.
local dev = dist.cuda_device_count() > 0 and "cuda" or "cpu"
local ok = pcall(function() return tensor.zeros(1, {device = "cuda"}) end)
local t = tensor.full(3, rank + 1, {device = dev})
if rank == 0 then dist.send(t, 1) else dist.recv(t, 0) end
print(ok, dev, t)
