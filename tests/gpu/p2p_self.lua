--- title: send and receive to the rank itself, inside a group and out of order
--- world: 1
--- expect: ok

-- host reference: without GPUs this script uses host tensors; its .out is
-- checked on the thread engine on every machine (tests/gpu/run_engine.sh).

-- NCCL may send to itself inside ncclGroupStart/End: batch_isend_irecv is
-- one such group. Tags are matched on the host (NCCL has none), so a
-- receive posted first for the second tag still gets the right message.
local gpu = dist.cuda_device_count() >= world_size
local function dev(t) if gpu then return t:cuda() end return t end
local function host(t) if gpu then return t:cpu() end return t end

local a = dev(tensor.from({1, 2, 3}))
local b = dev(tensor.zeros(3))
local reqs = dist.batch_isend_irecv({dist.P2POp(dist.isend, a, 0), dist.P2POp(dist.irecv, b, 0)})
for _, w in ipairs(reqs) do w:wait() end
print("group to self: " .. tostring(host(b)))

local x, y = dev(tensor.zeros(2, {dtype = "int64"})), dev(tensor.zeros(2, {dtype = "int64"}))
local r2 = dist.irecv(y, 0, {tag = 2})
local r1 = dist.irecv(x, 0, {tag = 1})
local s1 = dist.isend(dev(tensor.from({10, 11}, {dtype = "int64"})), 0, {tag = 1})
local s2 = dist.isend(dev(tensor.from({20, 21}, {dtype = "int64"})), 0, {tag = 2})
dist.wait_all({s1, s2, r1, r2})
print("tag 1: " .. tostring(host(x)) .. ", tag 2: " .. tostring(host(y)))

local big = dev(tensor.arange(1 << 20))
local into = dev(tensor.zeros(1 << 20))
local w = dist.irecv(into, 0)
dist.send(big, 0)
w:wait()
print("1 Mi elements to self, equal: " .. tostring(host(into):equal(host(big))))
