--- title: Non-blocking: isend/irecv overlap communication with computation
--- world: 2
--- expect: ok

-- Ranks 0 and 1 swap tensors (with more ranks: 2 and 3, 4 and 5, ...).
-- isend and irecv only *start* the transfer and return a work handle at
-- once; the rank goes on computing while the engine moves the data.

local peer = (rank % 2 == 0) and rank + 1 or rank - 1
if peer >= world_size then
    print("no partner with an odd world size; nothing to do")
    return
end

local mine = tensor.ones(3) * (rank + 1)
local theirs = tensor.zeros(3)

-- Both ranks send first, yet this cannot deadlock even with rendezvous
-- sends: neither call blocks, so both receives get posted.
local send_work = dist.isend(mine, peer)
local recv_work = dist.irecv(theirs, peer)

-- Useful work that touches neither buffer. Until the waits below, `mine`
-- still belongs to the send and `theirs` to the receive: writing to `mine`
-- or reading `theirs` here would be a bug (a race on a real network).
dist.compute(50)

recv_work:wait()                     -- now `theirs` holds the data
print("received " .. tostring(theirs) .. " from rank " .. peer)
print("mine + theirs = " .. tostring(mine + theirs))

send_work:wait()                     -- now `mine` may be changed again
print("send completed: " .. tostring(send_work:is_completed()))
