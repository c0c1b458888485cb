--- title: computes for longer than the timeout allows
--- world: 2
dist.compute(600000)
