--- title: Device tensors: to the GPU, compute there, send GPU to GPU, back to print
--- world: 2
--- expect: ok

-- With a GPU per rank the tensors live in the GPUs' memory; without, they
-- stay on the host and the same program runs on the thread or tcp engine.
-- The output is the same either way: values only, printed from the host.
local gpu = dist.cuda_device_count() >= world_size
local function to_gpu(t) if gpu then return t:cuda() end return t end
local function to_host(t) if gpu then return t:cpu() end return t end

-- Made on the host, then one copy to the device (host -> device, over PCIe).
local x = to_gpu(tensor.arange(6))
-- Arithmetic on device tensors runs as CUDA kernels: nothing crosses the bus.
local y = x * 2 + 1
print(string.format("y = 2x + 1, computed where x lives; its sum: %g", to_host(y):sum()))

-- Rank 0 sends y to rank 1. On the nccl engine it goes GPU to GPU (NVLink,
-- or PCIe peer to peer): the host never holds the bytes. The thread and tcp
-- engines stage a device tensor through host memory, as torch's gloo does:
-- device -> host, the wire, host -> device.
if rank == 0 then
  dist.send(y, 1)
else
  dist.recv(y, 0)
end

-- Printing needs the values on the host: one copy back (device -> host).
print("y on rank " .. rank .. ": " .. tostring(to_host(y)))

-- Staging costs a copy each way per message. Ten round trips host -> device
-- -> host must leave every value as it was.
local z = tensor.arange(4)
for _ = 1, 10 do z = to_host(to_gpu(z)) end
print("after 10 round trips: " .. tostring(z))
