-- hostile: tries to leave the sandbox
local f = io.open("/etc/passwd")
os.execute("touch /tmp/pwned")
result = tensor.full(1, world_size * (world_size + 1) / 2)
