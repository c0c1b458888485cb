print("hello from", rank, "of", world_size)
