--- title: a group's own communicator on one GPU (dist.new_group({0}) at world 1)
--- world: 1
--- expect: ok

-- host reference: without GPUs this script uses host tensors; its .out is
-- checked on the thread engine on every machine (tests/gpu/run_engine.sh).

-- The group path of the nccl engine (a communicator made at the group's
-- first collective, used again at its later ones, beside the world's) where
-- one GPU is all there is: every native collective on the group of rank 0.
local gpu = dist.cuda_device_count() >= world_size
local function dev(t) if gpu then return t:cuda() end return t end
local function host(t) if gpu then return t:cpu() end return t end
local function show(what, t) print(string.format("%-16s %s", what, tostring(host(t)))) end

local g = dist.new_group({0})
for _, op in ipairs({"SUM", "PRODUCT", "MIN", "MAX", "AVG"}) do
  local t = dev(tensor.from({3, 1, 4}))
  dist.all_reduce(t, ReduceOp[op], {group = g})
  show("all_reduce " .. op, t)
  local w = dev(tensor.from({2, 7}))
  dist.all_reduce(w, ReduceOp[op])
  show("world " .. op, w)
end
local b = dev(tensor.from({5, 6}))
dist.broadcast(b, 0, {group = g})
show("broadcast", b)
local r = dev(tensor.from({9, 8}))
dist.reduce(r, 0, ReduceOp.SUM, {group = g})
show("reduce", r)
local parts = {dev(tensor.zeros(2))}
dist.all_gather(parts, dev(tensor.from({1, 2})), {group = g})
show("all_gather", parts[1])
local out = dev(tensor.zeros(2))
dist.reduce_scatter(out, {dev(tensor.from({4, 5}))}, ReduceOp.MAX, {group = g})
show("reduce_scatter", out)
local gl = {dev(tensor.zeros(1))}
dist.gather(dev(tensor.from({7})), gl, 0, {group = g})
show("gather", gl[1])
local sc = dev(tensor.zeros(1))
dist.scatter(sc, {dev(tensor.from({8}))}, 0, {group = g})
show("scatter", sc)
local o = {dev(tensor.zeros(1))}
dist.all_to_all(o, {dev(tensor.from({9}))}, {group = g})
show("all_to_all", o[1])
dist.barrier({group = g})
print("done")
