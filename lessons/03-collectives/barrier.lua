--- title: Barrier: nobody leaves until everybody has arrived
--- world: 4
--- expect: ok

-- dist.barrier() returns on a rank only once every rank has called it. Here
-- rank r first works for 20 * r ms, so rank 3 arrives last: no rank can
-- leave the barrier before it arrived.

dist.compute(20 * rank)
local arrived = dist.time()
print("arrived at the barrier")
dist.barrier()
local left = dist.time()

-- Check it: gather everybody's arrival time (an all_gather, see
-- all_gather.lua) and compare it with when this rank left.
local times = {}
for i = 1, world_size do times[i] = tensor.zeros(1, {dtype = "float64"}) end
dist.all_gather(times, tensor.from({arrived}, {dtype = "float64"}))
local last = 0
for i = 1, world_size do last = math.max(last, times[i][0]) end
print("left after the last rank had arrived: " .. tostring(left >= last))

-- The algorithm is dissemination: in round k = 1, 2, ... rank r signals
-- rank r + 2^(k-1) and waits for rank r - 2^(k-1) (mod n), so after
-- ceil(log2 n) rounds each rank has heard, directly or not, from every other.
