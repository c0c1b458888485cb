-- wrong: blocking send first on every rank (deadlocks with rendezvous sends).
local p = world_size
local data = tensor.arange(4 * p) + rank
local chunks = data:chunk(p)
local right, left = (rank + 1) % p, (rank - 1 + p) % p
local incoming = tensor.zeros(4)
for s = 0, p - 2 do
    dist.send(chunks[(rank - s) % p + 1], right)
    dist.recv(incoming, left)
    chunks[(rank - s - 1) % p + 1]:add_(incoming)
end
for s = 0, p - 2 do
    dist.send(chunks[(rank + 1 - s) % p + 1], right)
    dist.recv(incoming, left)
    chunks[(rank - s) % p + 1]:copy_(incoming)
end
result = data
