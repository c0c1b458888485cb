--- title: collectives touching buffers that unfinished requests own (tests)
--- world: 2
local t = tensor.full(4, rank)
local peer = 1 - rank
local w = dist.isend(t, peer)
local r = tensor.zeros(4)
dist.recv(r, peer)
dist.all_reduce(t)                -- writes what the isend sends
w:wait()
local u = tensor.zeros(4)
local wr = dist.irecv(u, peer)
dist.send(tensor.ones(4), peer)
dist.broadcast(u, 0)              -- root reads, the other writes, the irecv's buffer
wr:wait()
local a = dist.all_reduce(t, ReduceOp.SUM, {async_op = true})
dist.all_gather({tensor.zeros(4), tensor.zeros(4)}, t)   -- reads what the async all_reduce writes
a:wait()
local s = dist.isend(t, peer)
dist.recv(r, peer)
dist.all_gather({tensor.zeros(4), tensor.zeros(4)}, t)   -- reads what an isend sends: fine
s:wait()
