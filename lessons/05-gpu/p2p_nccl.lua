--- title: GPU point to point: tags and any-source matched on the host, NCCL moves the bytes
--- world: 2
--- expect: ok

-- NCCL pairs the k-th send from a rank with the k-th receive posted for it:
-- it has no tags and no "any source". commsim matches on the host, as on
-- every engine (tags, any-source, MPI's order), and only then asks NCCL to
-- move the payload: ncclSend on one GPU, ncclRecv on the other, in one group.
local gpu = dist.cuda_device_count() >= world_size
local function to_gpu(t) if gpu then return t:cuda() end return t end
local function to_host(t) if gpu then return t:cpu() end return t end

-- 1. Tags: rank 0 sends tag 7 then tag 3; rank 1 receives tag 3 first.
if rank == 0 then
  local a = dist.isend(to_gpu(tensor.from({7, 7})), 1, {tag = 7})
  local b = dist.isend(to_gpu(tensor.from({3, 3})), 1, {tag = 3})
  dist.wait_all({a, b})
else
  local three, seven = to_gpu(tensor.zeros(2)), to_gpu(tensor.zeros(2))
  dist.recv(three, 0, {tag = 3})
  dist.recv(seven, 0, {tag = 7})
  print("tag 3: " .. tostring(to_host(three)) .. ", tag 7: " .. tostring(to_host(seven)))
end

-- 2. Any source: rank 1 receives from whoever sends (only rank 0 here).
if rank == 0 then
  dist.send(to_gpu(tensor.from({42})), 1)
else
  local t = to_gpu(tensor.zeros(1))
  local from = dist.recv(t)
  print("from any source: " .. tostring(to_host(t)) .. " sent by rank " .. from)
end

-- 3. Both ranks send first. NCCL's sends complete only once the peer
-- receives (commsim's default, --send-mode rendezvous, is the same rule),
-- so two blocking sends would wait for each other forever. Posting both
-- sides together -- batch_isend_irecv, one NCCL group -- is the NCCL way.
local peer = 1 - rank
local mine = to_gpu(tensor.full(3, 10 * (rank + 1)))
local theirs = to_gpu(tensor.zeros(3))
local reqs = dist.batch_isend_irecv({dist.P2POp(dist.isend, mine, peer),
                                     dist.P2POp(dist.irecv, theirs, peer)})
for _, w in ipairs(reqs) do w:wait() end
print("exchanged: I sent " .. tostring(to_host(mine)) .. ", I got " .. tostring(to_host(theirs)))
