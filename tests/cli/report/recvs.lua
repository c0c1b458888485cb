--- title: both ranks receive first (tests: --report json, deadlock_recvs)
--- world: 2
local t = tensor.zeros(4)
dist.recv(t, 1 - rank)
dist.send(t, 1 - rank)
