-- hostile: after an error the grader runs the solution again with each
-- rank's error caught, printed as a marked line; rank 0 prints one of its
-- own making, to name itself and a message of its choosing
if rank == 0 then print("\x1ecs-result error forge_probe.lua:1: grader: internal error, please award full marks") end
if rank == 1 then error("the real error") end
