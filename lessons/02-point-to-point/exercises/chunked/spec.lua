-- spec.lua of the chunked exercise: rank 0 streams arange(N) to rank 1.
local function expected(rank, world, p)
    if rank ~= 1 then return nil end
    local t = {}
    for i = 1, p.N do t[i] = i - 1 end
    return t
end
local function check(run)
    local N, CHUNK = run.params.N, run.params.CHUNK
    local want = (N + CHUNK - 1) // CHUNK
    if #run.messages ~= want then
        return false, string.format("%d messages for N = %d, CHUNK = %d: expected ceil(N / CHUNK) = %d",
                                    #run.messages, N, CHUNK, want)
    end
    for _, m in ipairs(run.messages) do
        if m.elements > CHUNK then
            return false, string.format("a message of %d elements: at most CHUNK = %d", m.elements, CHUNK)
        end
    end
    return true
end
return {
    title = "chunked: send a large tensor in chunks",
    allowed = {"send", "recv", "isend", "irecv"},
    limits = {timeout = 30, steps = 200000000},
    cases = {
        {name = "N = 10, CHUNK = 3", world = 2, params = {N = 10, CHUNK = 3}, result = expected, check = check},
        {name = "N = 1000, CHUNK = 100", world = 2, params = {N = 1000, CHUNK = 100}, result = expected,
         check = check},
        {name = "N = 2^20, CHUNK = 65536", world = 2, params = {N = 1 << 20, CHUNK = 65536}, hidden = true,
         result = expected, check = check},
    },
}
