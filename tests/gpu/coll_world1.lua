--- title: every collective and ReduceOp at world 1, on the GPU, against the host
--- world: 1
--- expect: ok

-- host reference: without GPUs this script uses host tensors; its .out is
-- checked on the thread engine on every machine (tests/gpu/run_engine.sh).

-- On the nccl engine every collective below is NCCL's own (all_to_all,
-- gather and scatter grouped send/recv); each result is copied back to the
-- host and printed. The host reference is the same script on the thread
-- engine with host tensors (this file's .out), where a world of one rank
-- leaves every value as it was: the GPU must agree element by element.
local gpu = dist.cuda_device_count() >= world_size
local function dev(t) if gpu then return t:cuda() end return t end
local function host(t) if gpu then return t:cpu() end return t end

local dtypes = {"float32", "float64", "int32", "int64", "uint8"}
local ops = {"SUM", "PRODUCT", "MIN", "MAX", "AVG"}

for _, d in ipairs(dtypes) do
  local float = d == "float32" or d == "float64"
  for _, op in ipairs(ops) do
    if op ~= "AVG" or float then
      local t = dev(tensor.from({3, 1, 4, 1, 5}, {dtype = d}))
      dist.all_reduce(t, ReduceOp[op])
      print(string.format("all_reduce %-7s %-7s %s", op, d, tostring(host(t))))
      local r = dev(tensor.from({2, 7, 1, 8}, {dtype = d}))
      dist.reduce(r, 0, ReduceOp[op])
      print(string.format("reduce     %-7s %-7s %s", op, d, tostring(host(r))))
      local rs_out = dev(tensor.zeros(3, {dtype = d}))
      dist.reduce_scatter(rs_out, {dev(tensor.from({9, 2, 6}, {dtype = d}))}, ReduceOp[op])
      print(string.format("reduce_scatter %-7s %-7s %s", op, d, tostring(host(rs_out))))
      local rst = dev(tensor.zeros(2, {dtype = d}))
      dist.reduce_scatter_tensor(rst, dev(tensor.from({5, 3}, {dtype = d})), ReduceOp[op])
      print(string.format("reduce_scatter_tensor %-7s %-7s %s", op, d, tostring(host(rst))))
    end
  end
  local b = dev(tensor.from({1, 2, 3}, {dtype = d}))
  dist.broadcast(b, 0)
  print(string.format("broadcast  %-7s %s", d, tostring(host(b))))
  local ag = {dev(tensor.zeros(2, {dtype = d}))}
  dist.all_gather(ag, dev(tensor.from({4, 2}, {dtype = d})))
  print(string.format("all_gather %-7s %s", d, tostring(host(ag[1]))))
  local agt = dev(tensor.zeros(2, {dtype = d}))
  dist.all_gather_into_tensor(agt, dev(tensor.from({6, 9}, {dtype = d})))
  print(string.format("all_gather_into_tensor %-7s %s", d, tostring(host(agt))))
  local gl = {dev(tensor.zeros(2, {dtype = d}))}
  dist.gather(dev(tensor.from({7, 7}, {dtype = d})), gl, 0)
  print(string.format("gather     %-7s %s", d, tostring(host(gl[1]))))
  local so = dev(tensor.zeros(2, {dtype = d}))
  dist.scatter(so, {dev(tensor.from({8, 1}, {dtype = d}))}, 0)
  print(string.format("scatter    %-7s %s", d, tostring(host(so))))
  local ao = {dev(tensor.zeros(3, {dtype = d}))}
  dist.all_to_all(ao, {dev(tensor.from({1, 0, 1}, {dtype = d}))})
  print(string.format("all_to_all %-7s %s", d, tostring(host(ao[1]))))
  local aso = dev(tensor.zeros(4, {dtype = d}))
  dist.all_to_all_single(aso, dev(tensor.from({2, 4, 6, 8}, {dtype = d})))
  print(string.format("all_to_all_single %-7s %s", d, tostring(host(aso))))
end
dist.barrier()
print("barrier passed")
