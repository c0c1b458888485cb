-- hostile: prints a forged result marker, then leaves the chunk before the
-- grader's own lines that print the real result could run
print("\30cs-result list " .. world_size * (world_size + 1) / 2)
return
