--- title: native collectives on groups: a communicator per dist.new_group
--- world: 2
--- expect: ok

-- host reference: without GPUs this script uses host tensors; its .out is
-- checked on the thread engine on every machine (tests/gpu/run_engine.sh).

-- On the nccl engine (threads or processes) every collective below runs as
-- NCCL's own on the group's communicator, made at the group's first
-- collective: the pair in reversed order (group rank 0 is world rank 1, so
-- roots and list positions must map), each rank alone, and the world
-- between them, so a group's communicator and the world's are used in turn.
local gpu = dist.cuda_device_count() >= world_size
local function dev(t) if gpu then return t:cuda() end return t end
local function host(t) if gpu then return t:cpu() end return t end
local function show(what, t) print(string.format("%-22s %s", what, tostring(host(t)))) end

local pair = dist.new_group({1, 0})
local solo = {dist.new_group({0}), dist.new_group({1})}
local mine = solo[rank + 1]
print("group rank in the pair", dist.get_rank(pair))

for round = 1, 2 do
  local t = dev(tensor.from({rank + 1, 10 * (rank + 1)}))
  dist.all_reduce(t, ReduceOp.SUM, {group = pair})
  show("pair all_reduce " .. round, t)
  local w = dev(tensor.from({rank + 2}))
  dist.all_reduce(w, ReduceOp.PRODUCT)
  show("world all_reduce " .. round, w)
  local s = dev(tensor.from({rank + 7}))
  dist.all_reduce(s, ReduceOp.MAX, {group = mine})
  show("solo all_reduce " .. round, s)
end

local b = dev(tensor.full(3, rank + 5))
dist.broadcast(b, 1, {group = pair})
show("pair broadcast from 1", b)
local r = dev(tensor.from({rank + 1, 3}))
dist.reduce(r, 0, ReduceOp.MIN, {group = pair})
show("pair reduce to 0", r)
local parts = {dev(tensor.zeros(2)), dev(tensor.zeros(2))}
dist.all_gather(parts, dev(tensor.from({rank, rank + 0.5})), {group = pair})
show("pair all_gather [1]", parts[1])
show("pair all_gather [2]", parts[2])
local flat = dev(tensor.zeros(4))
dist.all_gather_into_tensor(flat, dev(tensor.from({rank * 3, rank * 3 + 1})), {group = pair})
show("pair all_gather_tensor", flat)
local out = dev(tensor.zeros(2))
dist.reduce_scatter(out, {dev(tensor.from({1, 2})), dev(tensor.from({10 * rank, 20 * rank}))},
                    ReduceOp.SUM, {group = pair})
show("pair reduce_scatter", out)
local rs = dev(tensor.zeros(1))
dist.reduce_scatter_tensor(rs, dev(tensor.from({rank + 1, rank + 3})), ReduceOp.AVG, {group = pair})
show("pair reduce_scatter_t", rs)
local g = dev(tensor.from({100 + rank}))
local list = rank == 1 and {dev(tensor.zeros(1)), dev(tensor.zeros(1))} or nil
dist.gather(g, list, 1, {group = pair})
if list then show("pair gather [1]", list[1]); show("pair gather [2]", list[2]) end
local sc = dev(tensor.zeros(1))
local src = rank == 0 and {dev(tensor.from({41})), dev(tensor.from({42}))} or nil
dist.scatter(sc, src, 0, {group = pair})
show("pair scatter from 0", sc)
local outs = {dev(tensor.zeros(1)), dev(tensor.zeros(1))}
dist.all_to_all(outs, {dev(tensor.from({rank * 10})), dev(tensor.from({rank * 10 + 1}))}, {group = pair})
show("pair all_to_all [1]", outs[1])
show("pair all_to_all [2]", outs[2])
dist.barrier({group = pair})
dist.barrier({group = mine})
dist.barrier()
print("done")
