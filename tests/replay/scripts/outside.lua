--- title: a receive from a rank outside the world (tests)
--- world: 2
dist.recv(tensor.zeros(2), 5)
