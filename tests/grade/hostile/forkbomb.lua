-- hostile: tries to start processes (no os in the sandbox)
for i = 1, 100 do os.execute("sleep 100 &") end
