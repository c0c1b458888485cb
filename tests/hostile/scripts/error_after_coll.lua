--- world: 2
-- a collective, then every rank raises: a trace that ends in an error
dist.all_reduce(tensor.ones(2))
error("boom")
