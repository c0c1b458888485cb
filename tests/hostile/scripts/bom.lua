#!/usr/bin/env commsim
--- world: 3
print("bom", world_size)
