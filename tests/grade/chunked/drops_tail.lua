-- wrong: only whole chunks, the remainder is never sent.
if rank == 0 then
    local data = tensor.arange(N)
    for start = 0, N - CHUNK, CHUNK do
        dist.send(data:narrow(0, start, CHUNK), 1)
    end
else
    local whole = tensor.zeros(N)
    for start = 0, N - CHUNK, CHUNK do
        dist.recv(whole:narrow(0, start, CHUNK), 0)
    end
    result = whole
end
