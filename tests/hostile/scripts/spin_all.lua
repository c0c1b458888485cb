-- Every rank runs on and on, in barriers (tests/hostile/run_tcp.sh stops or
-- kills one of them).
while true do dist.barrier() end
