if rank == 0 then
    local data = tensor.arange(N)
    local inflight = {}
    for start = 0, N - 1, CHUNK do
        if #inflight == 4 then
            table.remove(inflight, 1):wait()
        end
        inflight[#inflight + 1] = dist.isend(data:narrow(0, start, math.min(CHUNK, N - start)), 1)
    end
    dist.wait_all(inflight)
else
    local whole = tensor.zeros(N)
    for start = 0, N - 1, CHUNK do
        dist.recv(whole:narrow(0, start, math.min(CHUNK, N - start)), 0)
    end
    result = whole
end
