--- title: a header with a bad world
--- world: many
print("never")
