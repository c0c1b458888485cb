--- title: A first exchange: rank 0 sends a tensor to rank 1
--- world: 2
--- expect: ok

-- Both ranks run this file; the `if` gives each its half of the exchange.
-- A message moves only when both sides take part: a send on one rank
-- and a matching receive on the other.

if rank == 0 then
    local t = tensor.from({1, 2, 3, 4})      -- float32: torch.tensor([1., 2., 3., 4.])
    dist.send(t, 1)                          -- destination: rank 1
    print("sent " .. tostring(t) .. " to rank 1")

elseif rank == 1 then
    -- The receiver provides the memory the data lands in: a tensor of the
    -- same size and dtype as the one sent. Its old contents are overwritten.
    local t = tensor.zeros(4)
    print("before: " .. tostring(t))
    local src = dist.recv(t, 0)              -- source: rank 0; returns the sender
    print("received " .. tostring(t) .. " from rank " .. src)
end

-- Any other rank (try -n 3) skips both branches and simply finishes.
