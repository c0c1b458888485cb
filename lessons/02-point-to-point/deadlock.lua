--- title: Deadlock: both ranks send first
--- world: 2
--- expect: deadlock

-- Both ranks want to swap tensors and both start with a send. With
-- rendezvous sends (the default here, and how NCCL behaves) a send returns
-- only once the other side has posted the matching receive. Rank 0 waits in
-- send for rank 1 to receive; rank 1 waits in send for rank 0 to receive.
-- Neither reaches its receive: a deadlock. commsim detects it and names both.
--
-- Try:  commsim run deadlock.lua --send-mode eager
-- Sends then complete as soon as the data is buffered, and it finishes.
-- Do not rely on that: real systems buffer only small messages.

local peer = 1 - rank
local outgoing = tensor.ones(4) * (rank + 1)
local incoming = tensor.zeros(4)

dist.send(outgoing, peer)
dist.recv(incoming, peer)

print("received " .. tostring(incoming) .. " from rank " .. peer)
