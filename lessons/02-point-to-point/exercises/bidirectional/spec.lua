-- spec.lua of the bidirectional exercise: partners swap tensors with isend/irecv.
local function expected(rank, world)
    local partner = rank % 2 == 0 and rank + 1 or rank - 1
    local v = partner < world and partner or rank
    return {v, v, v, v}
end
return {
    title = "bidirectional: swap tensors with isend and irecv",
    required = {"isend", "irecv"},
    allowed = {"isend", "irecv", "send", "recv"},
    cases = {
        {name = "one pair", world = 2, points = 1, result = expected},
        {name = "two pairs", world = 4, points = 1, result = expected},
        {name = "an odd rank out", world = 5, points = 1, result = expected},
    },
}
