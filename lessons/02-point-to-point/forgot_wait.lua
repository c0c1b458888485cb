--- title: Pitfall: forgetting wait()
--- world: 2
--- expect: ok

-- Both ranks start their transfer and never wait for it. Rank 1 even reads
-- its receive buffer right away: it may hold the old zeros, the message, or
-- part of it. Rank 0 drops its isend's work handle, so nothing ever checks
-- that the send completed. commsim warns about each, with the lines (see
-- the report). The fix is one wait() each: forgot_wait_fixed.lua.

if rank == 0 then
    local data = tensor.from({7, 8, 9})
    dist.isend(data, 1)                   -- BUG: the work handle is dropped
    print("isend posted; not waiting for it")
elseif rank == 1 then
    local inbox = tensor.zeros(3)
    local w = dist.irecv(inbox, 0)
    local first = inbox[0]                -- BUG: read before w:wait()
    -- `first` may be 0 or 7 depending on timing, so it is not printed here.
    print("irecv posted; read the buffer without waiting")
end
-- Rank 1 never calls w:wait() either: the report names that request too.
