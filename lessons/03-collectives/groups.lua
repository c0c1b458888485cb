--- title: Groups: collectives among some of the ranks
--- world: 4
--- expect: ok

-- dist.new_group(ranks) makes a group; {group = g} runs a collective among
-- its members only. Every rank must create every group, in the same order,
-- even the ranks that are not members (as in torch).

local evens = dist.new_group({0, 2})
local odds = dist.new_group({1, 3})
local mine = rank % 2 == 0 and evens or odds

-- Ranks inside a group are numbered from 0 in the order of the list.
print(string.format("world rank %d is rank %d of %d in its group", rank,
                    dist.get_rank(mine), dist.get_world_size(mine)))
-- A rank outside a group has rank -1 there.
print("my rank in the other group: " .. dist.get_rank(rank % 2 == 0 and odds or evens))

local t = tensor.full(2, rank)
dist.all_reduce(t, ReduceOp.SUM, {group = mine})
print("sum over my group: " .. tostring(t))   -- evens: 0 + 2, odds: 1 + 3

-- Roots are world ranks, as in torch: rank 3 broadcasts in the odd group.
local b = tensor.full(1, rank)
dist.broadcast(b, rank % 2 == 0 and 2 or 3, {group = mine})
print("broadcast in my group: " .. tostring(b))
