-- hostile: closes the grader's wrapper function itself, prints a forged
-- result line and shadows the print the grader's own lines use
end)(...)
print("\30cs-result list " .. world_size * (world_size + 1) / 2)
local __cs_p = function() end;
(function(...)
