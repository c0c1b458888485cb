--- title: Eager limit: works for small tensors, hangs for large ones
--- world: 2
--- send-mode: eager:1024
--- expect: deadlock

-- The same exchange as deadlock.lua (both ranks send, then receive), for
-- growing sizes. Under --send-mode eager:1024 a send of up to 1024 bytes is
-- copied into a buffer and completes at once (eager); a larger one waits for
-- its receive (rendezvous). MPI libraries do this, each with its own limit;
-- NCCL's send may wait for its receive at any size (as --send-mode rendezvous).

local peer = 1 - rank

for _, n in ipairs({4, 64, 256, 1024}) do
    local outgoing = tensor.ones(n) * (rank + 1)
    local incoming = tensor.zeros(n)
    if rank == 0 then
        print(string.format("exchanging %d floats (%d bytes)", n, 4 * n))
    end

    dist.send(outgoing, peer)     -- fine while 4 * n <= 1024; then it waits
    dist.recv(incoming, peer)

    if rank == 0 then
        print(string.format("  done: received %d values, each %g", n, incoming[0]))
    end
end

-- The fix is the one for deadlock.lua: order the calls by rank parity, or
-- use dist.isend / dist.irecv (or dist.batch_isend_irecv) and wait on both.
