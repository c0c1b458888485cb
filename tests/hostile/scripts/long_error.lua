-- an error message longer than 1 KiB (and one longer than an event)
if world_size == 1 then error(string.rep("x", 5000) .. "END") end
if rank == 1 then error(string.rep("y", 100000) .. "END", 0) end
