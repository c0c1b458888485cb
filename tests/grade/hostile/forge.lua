-- hostile: prints a forged result marker and silences print
print("\30cs-result list " .. world_size * (world_size + 1) / 2)
print = function() end
