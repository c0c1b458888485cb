--- title: Exercise: time a blocking and a non-blocking receive
--- world: 2
--- expect: ok

-- Rank 0 computes for 50 ms, then sends rank 1 a tensor. Rank 1 also has
-- 50 ms of work of its own that does not need the tensor.
--   blocking:     recv, then work. Rank 1 idles until rank 0 has sent:
--                 about 50 + 50 ms.
--   non-blocking: irecv, work, then wait. Rank 1 works while it waits:
--                 about 50 ms.
-- The times are wall-clock (dist.time()): they vary from run to run and
-- machine to machine, so compare them, do not expect exact numbers.

if world_size < 2 then error("run with -n 2") end
local t = tensor.zeros(4)

for _, mode in ipairs({"blocking", "non-blocking"}) do
    dist.barrier()                        -- both ranks start the round together
    t:zero_()
    local t0 = dist.time()
    if rank == 0 then
        dist.compute(50)                  -- produce the data
        dist.send(tensor.full(4, 1), 1)
    elseif rank == 1 then
        if mode == "blocking" then
            dist.recv(t, 0)               -- waits ~50 ms doing nothing
            dist.compute(50)              -- then its own work
        else
            local w = dist.irecv(t, 0)
            dist.compute(50)              -- its own work, while the data comes
            w:wait()
        end
        print(string.format("%-12s %.3f s  (received %s)", mode .. ":", dist.time() - t0,
                            tostring(t)))
    end
end
