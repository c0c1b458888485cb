--- world: 1
io.open("/etc/passwd")
