-- Exercise: measure_latency (see README.md). ROUNDS and ELEMS are set by
-- the grader; the defaults here are for trying it with commsim run.
ROUNDS = ROUNDS or 10
ELEMS = ELEMS or 1
local t = tensor.zeros(ELEMS)
if rank == 0 then
    local t0 = dist.time()
    -- TODO: ROUNDS round trips with rank 1
    result = (dist.time() - t0) / (2 * ROUNDS)
elseif rank == 1 then
    -- TODO: answer every ping
end
