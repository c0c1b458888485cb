--- title: Mixture of experts: all_to_all sends each token to its expert and back
--- world: 4
--- expect: ok

-- A mixture-of-experts layer has many expert networks; a router sends each
-- token to one of them. With expert parallelism (DeepSpeed-MoE, Megatron-LM,
-- GShard, Mixtral's training) expert e lives on rank e, so the tokens of
-- every rank must travel to the ranks of their experts and come back:
--   1. all_to_all of the counts: how many tokens each rank sends each expert
--      (the sizes differ per pair, and a receive must know its size);
--   2. all_to_all of the tokens ("dispatch");
--   3. each expert processes what it received;
--   4. all_to_all back ("combine"), the reverse sizes; each rank puts the
--      results back in its tokens' order.

local n = world_size
local ntok = 4
local tokens, expert_of = {}, {}
for t = 1, ntok do
    tokens[t] = 10 * rank + t                  -- a token, as one number
    expert_of[t] = (rank + t * (t + 1) // 2) % n   -- the router's choice
end
local line = {}
for t = 1, ntok do line[t] = tokens[t] .. "->e" .. expert_of[t] end
print("tokens and experts: " .. table.concat(line, " "))

-- Group the tokens by expert: send_list[e + 1] holds those for expert e.
local by_expert = {}
for e = 1, n do by_expert[e] = {} end
for t = 1, ntok do table.insert(by_expert[expert_of[t] + 1], tokens[t]) end
local send_list, counts = {}, tensor.zeros(n, {dtype = "int64"})
for e = 1, n do
    send_list[e] = tensor.from(by_expert[e])
    counts[e - 1] = #by_expert[e]
end

-- 1. Who sends what: rank i sends count j to rank j. Nothing aggregated.
local recv_counts = tensor.zeros(n, {dtype = "int64"})
dist.all_to_all_single(recv_counts, counts)
print("tokens I will receive from each rank: " .. tostring(recv_counts))

-- 2. Dispatch: rank i's send_list[j + 1] lands in rank j's recv_list[i + 1].
local recv_list = {}
for i = 1, n do recv_list[i] = tensor.zeros(recv_counts[i - 1]) end
dist.all_to_all(recv_list, send_list)

-- 3. This rank is expert `rank`: it adds 100 * (rank + 1) to every token.
local parts = {}
for i = 1, n do
    recv_list[i]:add_(100 * (rank + 1))
    parts[i] = tostring(recv_list[i])
end
print("expert " .. rank .. " output: " .. table.concat(parts, " "))

-- 4. Combine: the same exchange backwards, into buffers of the sent sizes.
local back = {}
for e = 1, n do back[e] = tensor.zeros(#by_expert[e]) end
dist.all_to_all(back, recv_list)

-- Undo the grouping: the k-th token sent to expert e is the k-th result.
local out, next_of = {}, {}
for e = 1, n do next_of[e] = 0 end
for t = 1, ntok do
    local e = expert_of[t] + 1
    out[t] = string.format("%d", back[e][next_of[e]])
    next_of[e] = next_of[e] + 1
end
print("results in token order: " .. table.concat(out, " "))
