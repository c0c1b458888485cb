--- title: Chunking: cut a large transfer into pieces and pipeline them down a chain
--- world: 4
--- net: alpha=10us,bandwidth=1GB/s
--- expect: ok

-- Rank 0 sends 1 MiB to the last rank through the ranks in between (a chain,
-- as a pipeline or a tree broadcast forwards data). In one piece, every hop
-- waits for the whole megabyte before passing it on: with p ranks that is
-- p - 1 hops of (alpha + n beta). Cut into k chunks, a rank forwards chunk 1
-- while chunk 2 is still coming: the hops overlap, and the time becomes
--     T(k) = (k + p - 2) (alpha + (n / k) beta)
-- Each chunk pays alpha again, so there is a best k; the formula's minimum is
-- at k = sqrt((p - 2) n beta / alpha). On 2 ranks (-n 2) there is nothing to
-- overlap: T(k) = k alpha + n beta, and chunking only adds latency.

local n_bytes = 1048576
local alpha, beta = 10e-6, 1e-9     -- the header's model, for the formula
local p, left, right = world_size, rank - 1, rank + 1
local data = tensor.zeros(n_bytes // 4)

-- One transfer in k chunks, every rank of the chain taking part.
local function transfer(k)
    local len = (n_bytes // 4) // k
    local function piece(j) return data:narrow(0, (j - 1) * len, len) end
    if rank == 0 then
        for j = 1, k do dist.send(piece(j), right) end
    else
        -- post the receive of the next chunk before forwarding this one, so
        -- that a rank receives and sends at the same time
        local w = dist.irecv(piece(1), left)
        for j = 1, k do
            w:wait()
            if j < k then w = dist.irecv(piece(j + 1), left) end
            if right < p then dist.send(piece(j), right) end
        end
    end
end

if rank == p - 1 then
    print(string.format("%d bytes from rank 0 to rank %d, over %d hops", n_bytes, p - 1, p - 1))
end
for _, k in ipairs({1, 2, 4, 8, 16, 32, 64}) do
    dist.barrier()            -- every trial starts together, on an idle network
    local t0 = dist.time()
    transfer(k)
    if rank == p - 1 then     -- the last rank stops the clock: all of it has arrived
        local formula = (k + p - 2) * (alpha + n_bytes / k * beta)
        print(string.format("k = %2d chunks of %7d B: %.3f us (formula %.3f us)", k,
                            n_bytes // k, (dist.time() - t0) * 1e6, formula * 1e6))
    end
end
if rank == p - 1 and p > 2 then
    local best = math.sqrt((p - 2) * n_bytes * beta / alpha)
    print(string.format("best k by the formula: sqrt((p - 2) n beta / alpha) = %.1f", best))
elseif rank == p - 1 then
    print("one hop: nothing to overlap, every chunk only adds alpha; one piece is best")
end
