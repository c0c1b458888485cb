-- hostile: never ends
while true do end
