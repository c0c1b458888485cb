--- title: a rank waiting on itself: the deadlock verdict, then every communicator aborted
--- world: 1
--- expect: deadlock

-- host reference: without GPUs this script uses host tensors; its .out is
-- checked on the thread engine on every machine (tests/gpu/run_engine.sh).

local gpu = dist.cuda_device_count() >= world_size
local t = tensor.zeros(4)
if gpu then t = t:cuda() end
print("receiving from myself, with nobody sending")
dist.recv(t, 0)
print("never printed")
