-- spec.lua of the pipeline_microbatches exercise.
local function expected(rank, world, p)
    if rank ~= world - 1 then return nil end
    local t = {}
    for m = 0, p.MB - 1 do t[m + 1] = 4 * (m + world * (world - 1) / 2) end
    return t
end
local function pattern(run)
    for r = 0, run.world - 2 do
        local sent = (run.ops[r].send or 0) + (run.ops[r].isend or 0)
        if sent ~= run.params.MB then
            return false, string.format("stage %d sends %d messages: one per microbatch, %d", r, sent, run.params.MB)
        end
    end
    for _, m in ipairs(run.messages) do
        if m.dst ~= m.src + 1 then
            return false, string.format("stage %d sends to rank %d: only to the next stage", m.src, m.dst)
        end
        if m.elements ~= 4 then
            return false, string.format("stage %d sends %d elements: one microbatch is 4", m.src, m.elements)
        end
    end
    return true
end
return {
    title = "pipeline_microbatches: microbatches through pipeline stages",
    allowed = {"send", "recv", "isend", "irecv"},
    cases = {
        {name = "two stages", world = 2, params = {MB = 4}, points = 1, result = expected},
        {name = "three and four stages", world = {3, 4}, params = {MB = 8}, points = 2, result = expected},
        {name = "one message per microbatch", world = 4, params = {MB = 4}, points = 1, check = pattern},
    },
}
