--- title: async collectives under --strict: one rank reads before its wait (tests)
--- world: 2
local t = tensor.ones(4)
local w = dist.all_reduce(t, ReduceOp.SUM, {async_op = true})
if rank == 1 then print(t[0]) end -- line 5: reads the result before the wait
w:wait()
-- Rank 0 waits on nobody and never ends by itself: whatever the timing, the
-- run ends with rank 1's error, and rank 0 is stopped (aborted).
while true do dist.compute(1000) end
