-- spec.lua of the measure_latency exercise: each case runs under an
-- alpha-beta model, so the one-way time is exact: alpha + 4 ELEMS / bandwidth.
local function latency(alpha, bandwidth)
    return function(run)
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
            if m.elements ~= run.params.ELEMS then
                return false, string.format("rank %d sends %d elements: a ping is ELEMS = %d",
                                            m.src, m.elements, run.params.ELEMS)
            end
        end
        local got = run.result[0]
        if type(got) ~= "number" then
            return false, "rank 0's result must be the one-way time: a number of seconds"
        end
        -- the model's rule: a transmission lasts bytes / bandwidth in whole
        -- nanoseconds, rounded up (docs/time-model.md)
        local bytes = 4 * run.params.ELEMS
        local want = alpha + ((bytes * 1000000000 + bandwidth - 1) // bandwidth) / 1e9
        if math.abs(got - want) > 1e-12 then
            return false, string.format("rank 0's result is %.3f us; under this model one message of "
                                        .. "%d bytes takes %.3f us (alpha %g us + %d bytes at %g GB/s): "
                                        .. "time ROUNDS round trips and divide by 2 ROUNDS",
                                        got * 1e6, bytes, want * 1e6, alpha * 1e6, bytes, bandwidth // 1000000000)
        end
        return true
    end
end
return {
    title = "measure_latency: the one-way time of a message, exactly, under a network model",
    allowed = {"send", "recv", "isend", "irecv"},
    cases = {
        {name = "1 element, alpha 10 us, 1 GB/s", world = 2, net = "alpha=10us,bandwidth=1GB/s",
         params = {ROUNDS = 10, ELEMS = 1}, points = 2, check = latency(10e-6, 1000000000)},
        {name = "100 kB, alpha 2 us, 10 GB/s", world = 2, net = "alpha=2us,bandwidth=10GB/s",
         params = {ROUNDS = 5, ELEMS = 25000}, points = 2, check = latency(2e-6, 10000000000)},
        {name = "a bystander rank", world = 3, net = "alpha=10us,bandwidth=1GB/s", hidden = true,
         params = {ROUNDS = 3, ELEMS = 256}, points = 1, check = latency(10e-6, 1000000000)},
    },
}
