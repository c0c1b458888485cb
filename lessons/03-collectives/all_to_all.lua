--- title: All-to-all: every rank sends a different piece to every rank
--- world: 4
--- expect: ok

-- dist.all_to_all(out_list, in_list): rank i's in_list[j + 1] lands in rank
-- j's out_list[i + 1]. Seen as a matrix of pieces (row = sender), it is a
-- transpose. Mixture-of-experts layers use it to route tokens to experts.

local ins, outs, parts = {}, {}, {}
for j = 1, world_size do
    ins[j] = tensor.full(1, 10 * rank + (j - 1))   -- "from rank, for j - 1"
    outs[j] = tensor.zeros(1)
    parts[j] = tostring(ins[j])
end
print("before: " .. table.concat(parts, " "))
dist.all_to_all(outs, ins)
for j = 1, world_size do parts[j] = tostring(outs[j]) end
print("after:  " .. table.concat(parts, " "))

-- dist.all_to_all_single(out, input): the same with one tensor each side,
-- split into world_size equal blocks.
local input = tensor.arange(world_size) + 10 * rank
local out = tensor.zeros(world_size)
dist.all_to_all_single(out, input)
print("single: " .. tostring(input) .. " -> " .. tostring(out))
