--- title: Pitfall: forgetting wait()
--- world: 2
--- expect: ok

-- Two ways to forget wait(). Rank 0 drops its isend's work handle: nothing
-- ever checks that the send completed, and the buffer may never be reused
-- safely. Rank 1 reads its receive buffer before waiting: it may hold the
-- old zeros, the message, or part of it. commsim warns about both, with the
-- lines (see the report). The fixes: forgot_wait_fixed.lua.

if rank == 0 then
    local data = tensor.from({7, 8, 9})
    dist.isend(data, 1)                   -- BUG: the work handle is dropped
    local reply = tensor.zeros(1)
    dist.recv(reply, 1)
    print("rank 1 replied " .. tostring(reply))
elseif rank == 1 then
    local inbox = tensor.zeros(3)
    local w = dist.irecv(inbox, 0)
    local early = inbox[0]                -- BUG: read before w:wait(): 0 or 7
    w:wait()
    print("after wait(): " .. tostring(inbox))
    dist.send(tensor.from({inbox:sum()}), 0)
end
