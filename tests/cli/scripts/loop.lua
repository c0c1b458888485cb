--- title: an infinite loop
--- world: 2
while true do end
