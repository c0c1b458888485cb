--- world: 1
-- One line longer than an event carries: cut, and the cut said.
print(string.rep("y", 100000) .. "\nafter")
