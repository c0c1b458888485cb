-- the issue's reproducer: all_to_all copied a rank's own input block into a
-- smaller output block (a heap overflow on the thread engine, a dead rank on tcp)
dist.all_to_all({tensor.zeros(1)}, {tensor.zeros(100000)})
