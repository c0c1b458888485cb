-- spec.lua of the tree_broadcast exercise.
local function expected() return {0, 1, 2, 3, 4, 5, 6, 7} end
local function tree(run)
    local p = run.world
    if #run.messages ~= p - 1 then
        return false, string.format("%d messages in all: a broadcast to %d ranks needs p - 1 = %d",
                                    #run.messages, p, p - 1)
    end
    local limit = math.ceil(math.log(p, 2) - 1e-9)
    for r = 0, p - 1 do
        local sent = (run.ops[r].send or 0) + (run.ops[r].isend or 0)
        if sent > limit then
            return false, string.format("rank %d sends %d messages: a binomial tree sends at most ceil(log2 p) = %d",
                                        r, sent, limit)
        end
    end
    for _, m in ipairs(run.messages) do
        local hb = 1
        while hb * 2 <= m.dst do hb = hb * 2 end
        if m.src ~= m.dst - hb then
            return false, string.format("rank %d receives from rank %d: in a binomial tree its parent is rank %d",
                                        m.dst, m.src, m.dst - hb)
        end
    end
    return true
end
return {
    title = "tree_broadcast: a binomial tree with send and recv",
    allowed = {"send", "recv", "isend", "irecv"},
    cases = {
        {name = "two ranks", world = 2, points = 1, result = expected},
        {name = "three to five ranks", world = {3, 4, 5}, points = 1, result = expected},
        {name = "six to eight ranks", world = {6, 7, 8}, points = 1, hidden = true, result = expected},
        {name = "a tree's messages", world = {5, 8}, points = 2, check = tree},
    },
}
