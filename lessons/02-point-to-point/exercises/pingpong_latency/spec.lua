-- spec.lua of the pingpong_latency exercise: the pattern, not the times.
local function pattern(run)
    local rounds = run.params.ROUNDS
    for r = 0, 1 do
        local sent = (run.ops[r].send or 0) + (run.ops[r].isend or 0)
        if sent ~= rounds then
            return false, string.format("rank %d sends %d messages: %d round trips are %d from each side",
                                        r, sent, rounds, rounds)
        end
    end
    for _, m in ipairs(run.messages) do
        if m.src > 1 or m.dst ~= 1 - m.src then
            return false, string.format("rank %d sends to rank %d: only ranks 0 and 1 play", m.src, m.dst)
        end
        if m.elements ~= 1 then
            return false, string.format("rank %d sends %d elements: a ping is one element", m.src, m.elements)
        end
    end
    local lat = run.result[0]
    if type(lat) ~= "number" or not (lat > 0) then
        return false, "rank 0's result must be the latency: a positive number of seconds"
    end
    return true
end
return {
    title = "pingpong_latency: time round trips between two ranks",
    allowed = {"send", "recv", "isend", "irecv"},
    cases = {
        {name = "10 round trips", world = 2, params = {ROUNDS = 10}, points = 2, check = pattern},
        {name = "a bystander rank", world = 3, params = {ROUNDS = 5}, points = 1, check = pattern},
    },
}
