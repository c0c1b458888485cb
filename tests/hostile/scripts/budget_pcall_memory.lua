--- title: a memory error caught by pcall on the last line (item 6)
--- world: 1
print(pcall(string.rep, "x", 300 * 1024 * 1024))
