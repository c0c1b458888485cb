-- spec.lua of the ring_allreduce exercise.
local function expected(rank, world)
    local t = {}
    for i = 1, 4 * world do t[i] = world * (i - 1) + world * (world - 1) / 2 end
    return t
end
local function messages(run)
    for r = 0, run.world - 1 do
        local sent = (run.ops[r].send or 0) + (run.ops[r].isend or 0)
        if sent ~= 2 * (run.world - 1) then
            return false, string.format("rank %d sends %d messages: the ring all-reduce sends 2 (p - 1) = %d",
                                        r, sent, 2 * (run.world - 1))
        end
    end
    for _, m in ipairs(run.messages) do
        if m.elements ~= 4 then
            return false, string.format("rank %d sends %d elements to rank %d: each message is one chunk of 4",
                                        m.src, m.elements, m.dst)
        end
    end
    return true
end
return {
    title = "ring_allreduce: reduce-scatter and all-gather around a ring",
    allowed = {"send", "recv", "isend", "irecv"},
    cases = {
        {name = "two ranks", world = 2, points = 1, result = expected},
        {name = "three to five ranks", world = {3, 4, 5}, points = 2, result = expected},
        {name = "six to eight ranks", world = {6, 7, 8}, points = 1, hidden = true, result = expected},
        {name = "2 (p - 1) messages of one chunk", world = {4, 5}, points = 1, check = messages},
    },
}
