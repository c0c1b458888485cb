-- spec.lua of the ring exercise: every rank ends with the sum of rank + 1.
return {
    title = "ring: pass values around the ring and add them up",
    allowed = {"send", "recv", "isend", "irecv"},
    limits = {timeout = 20, steps = 10000000},
    cases = {
        {name = "two ranks", world = 2, points = 1,
         result = function(rank, world) return {world * (world + 1) / 2} end},
        {name = "three to five ranks", world = {3, 4, 5}, points = 2,
         result = function(rank, world) return {world * (world + 1) / 2} end},
        {name = "eight ranks", world = 8, points = 1, hidden = true,
         result = function(rank, world) return {world * (world + 1) / 2} end},
        {name = "world_size - 1 messages per rank", world = {4, 5}, points = 1,
         check = function(run)
             for r = 0, run.world - 1 do
                 local sent = (run.ops[r].send or 0) + (run.ops[r].isend or 0)
                 if sent ~= run.world - 1 then
                     return false, string.format("rank %d sends %d messages; a ring step sends one, %d in all",
                                                 r, sent, run.world - 1)
                 end
             end
             for _, m in ipairs(run.messages) do
                 if m.dst ~= (m.src + 1) % run.world then
                     return false, string.format("rank %d sends to rank %d: send to the right neighbour only",
                                                 m.src, m.dst)
                 end
             end
             return true
         end},
    },
}
