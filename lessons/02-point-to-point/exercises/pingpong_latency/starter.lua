-- Exercise: pingpong_latency (see README.md). ROUNDS is set by the grader.
ROUNDS = ROUNDS or 10
local t = tensor.zeros(1)
if rank == 0 then
    local t0 = dist.time()
    -- TODO: ROUNDS round trips with rank 1
    result = (dist.time() - t0) / (2 * ROUNDS)
elseif rank == 1 then
    -- TODO: answer every ping
end
