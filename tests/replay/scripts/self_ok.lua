--- title: a receive from itself that an earlier isend satisfies (tests)
--- world: 1
local w = dist.isend(tensor.ones(2), 0)
local t = tensor.zeros(2)
dist.recv(t, 0)
w:wait()
print(t)
