--- title: Fixed: wait() before using what a non-blocking call touches
--- world: 2
--- expect: ok

-- forgot_wait.lua with the waits it lacked. wait() is the point from which
-- a received buffer may be read and a sent one changed; every isend and
-- irecv needs one (or dist.wait_all, or is_completed() returning true).

if rank == 0 then
    local data = tensor.from({7, 8, 9})
    local w = dist.isend(data, 1)
    local reply = tensor.zeros(1)
    dist.recv(reply, 1)
    w:wait()                              -- from here on, data may change
    print("rank 1 replied " .. tostring(reply) .. "; isend completed: " ..
          tostring(w:is_completed()))
elseif rank == 1 then
    local inbox = tensor.zeros(3)
    local w = dist.irecv(inbox, 0)
    w:wait()                              -- from here on, inbox holds the message
    local first = inbox[0]                -- safe now: 7
    print(string.format("after wait(): %s, first value %g", tostring(inbox), first))
    dist.send(tensor.from({inbox:sum()}), 0)
end
