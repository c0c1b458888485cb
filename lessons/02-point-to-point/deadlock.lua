--- title: Deadlock: both ranks send first
--- world: 2
--- expect: deadlock

-- Both ranks want to swap tensors and both start with a send. With
-- rendezvous sends (the default here, and how NCCL behaves) a send returns
-- only once the other side has posted the matching receive. Rank 0 waits in
-- send for rank 1 to receive; rank 1 waits in send for rank 0 to receive.
-- Neither reaches its receive: a deadlock. With -n 4 the cycle grows: each
-- rank sends to its right neighbour and waits for it to receive. Try also
-- commsim run deadlock.lua --send-mode eager: sends then complete as soon
-- as the data is buffered, and it finishes. Do not rely on that: real
-- systems buffer only small messages.

local right, left = (rank + 1) % world_size, (rank - 1) % world_size
local outgoing = tensor.ones(4) * (rank + 1)
local incoming = tensor.zeros(4)
if world_size < 2 then error("a deadlock needs at least 2 ranks: run with -n 2 or more") end
dist.send(outgoing, right)
dist.recv(incoming, left)

print("received " .. tostring(incoming) .. " from rank " .. left)
