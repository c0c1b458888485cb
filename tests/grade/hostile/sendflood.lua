-- hostile: pairs of ranks send to each other without end, eager: each
-- send is a few events in the trace, gigabytes of it before the time limit
local t = tensor.zeros(1)
local peer = rank ~ 1
while true do
    if rank % 2 == 0 then dist.send(t, peer) else dist.recv(t, peer) end
end
