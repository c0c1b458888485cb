--- title: a launched run that lasts a few seconds, for strangers to knock on its port (tests)
--- world: 2
if rank == 0 then dist.compute(3000) end
dist.barrier()
print("done")
