dist.barrier({grup = 1})
