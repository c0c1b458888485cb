--- title: Barrier: nobody leaves until everybody has arrived
--- world: 4
--- expect: ok

-- dist.barrier() returns on a rank only once every rank has called it. Here
-- rank r first works for 20 * r ms, so rank 3 arrives last, after 60 ms:
-- no rank can leave the barrier before that.

local start = dist.time()
dist.compute(20 * rank)
print("arrived at the barrier")
dist.barrier()
print("left the barrier after the slowest rank: " .. tostring(dist.time() - start >= 0.06))

-- The algorithm is dissemination: in round k every rank signals the rank
-- 2^k ahead of it and waits for the rank 2^k behind, so after log2(n)
-- rounds each rank has heard, directly or not, from every other.
