--- title: Pitfall: receiving from the wrong rank
--- world: 3
--- expect: deadlock

-- Ranks 1 and 2 each compute a partial result and send it to rank 0, which
-- collects them. The bug is a copy-paste slip on rank 0: its second receive
-- still names rank 1. Rank 1 sends once and finishes; rank 0 waits for a
-- second message from rank 1 that will never come, and rank 2 waits in its
-- send for a receive of rank 2's message that rank 0 never posts.
--
-- A receive matches only a send from the rank it names (and with the same
-- tag). A message from another rank does not satisfy it, however long it
-- waits. commsim reports the wait and that its source has already finished.

if rank == 0 then
    local from1 = tensor.zeros(2)
    local from2 = tensor.zeros(2)
    dist.recv(from1, 1)
    print("partial from rank 1: " .. tostring(from1))
    dist.recv(from2, 1)                     -- BUG: should be rank 2
    print("partial from rank 2: " .. tostring(from2))
    print("total: " .. tostring(from1 + from2))
elseif rank == 1 or rank == 2 then
    local partial = tensor.ones(2) * (10 * rank)
    print("sending " .. tostring(partial) .. " to rank 0")
    dist.send(partial, 0)
end

-- Fix it: name rank 2 in the second receive. Or receive from any source,
-- dist.recv(buf), which returns the sender: then the two partials may
-- arrive in either order, and the code must not assume which comes first.
