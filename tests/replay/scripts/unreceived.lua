--- title: messages nobody receives (tests; run with --send-mode eager)
--- world: 2
if rank == 0 then
  for i = 1, 3 do dist.send(tensor.ones(2), 1, {tag = 7}) end
end
