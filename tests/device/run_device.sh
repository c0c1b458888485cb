#!/usr/bin/env bash
# run_device.sh -- device tensors where no GPU can be used (this machine and
# CI: a build with or without CUDA, no usable device). Asking for one is a
# script error naming the file and line, "no CUDA device available: " and the
# reason, on both engines, with the usual status for a script error (2) and
# nothing worse; everything on the host keeps working. On a machine with a
# GPU the no-device cases are skipped (tests/gpu/ covers that machine).
. "$(dirname "$0")/../lib.sh"
dir="$top_srcdir/tests/device/scripts"
nodev="no CUDA device available: "

"$bin" run "$dir/host.lua" -n 1 --no-tui >"$tmp/probe" 2>&1
if grep -q "^\[rank 0\] cpu	0$" "$tmp/probe"; then gpu=0; else gpu=1; fi

# ---- the host side of the device API works everywhere
expect "t.device and the device count"  0 "[rank 0] cpu	$([ $gpu = 0 ] && echo 0)" -- run "$dir/host.lua" -n 1
expect "t:cpu() prints as torch does"   0 "[rank 0]         [3, 4]], dtype=torch.int32)	true" -- run "$dir/host.lua" -n 1
expect "t:to(\"cpu\", dtype)"           0 "[rank 0]         [3., 4.]], dtype=torch.float64)" -- run "$dir/host.lua" -n 1
expect "a view moved is contiguous"     0 "[rank 0] true" -- run "$dir/host.lua" -n 1
expect "an unknown device"              0 "host.lua:7: tensor.zeros: unknown device 'gpu' (cpu, cuda or cuda:N)" -- run "$dir/host.lua" -n 1
expect "cuda('cpu') is refused"         0 "host.lua:9: cuda: 'cpu' is not a CUDA device" -- run "$dir/host.lua" -n 1

if [ $gpu = 1 ]; then
  skip "no-device errors" "a CUDA device is present here"
  finish
fi

# ---- without a device: a script error at the line that asked, status 2
for engine in thread tcp; do
  expect "a device tensor stops the script ($engine)" 2 "] error: zeros_cuda.lua:3: $nodev" -- run "$dir/zeros_cuda.lua" -n 2 --engine $engine
  expect "nothing after it runs ($engine)" 2 "verdict: error (exit status 2)" -- run "$dir/zeros_cuda.lua" -n 2 --engine $engine
  if grep -q "not reached" "$tmp/out" "$tmp/err"; then bad "the failing line ends the rank ($engine)"; else ok "the failing line ends the rank ($engine)"; fi
  expect "a rank falls back to the host ($engine)" 0 "[rank 1] false	cpu	tensor([1., 1., 1.])" -- run "$dir/recover.lua" -n 2 --engine $engine
done
# the reason is the runtime's (a build with CUDA) or the build's (without)
"$bin" run "$dir/zeros_cuda.lua" -n 1 >"$tmp/out" 2>"$tmp/err"
if grep -qE "zeros_cuda.lua:3: $nodev[a-zA-Z].{10,}" "$tmp/out" "$tmp/err"; then
  ok "the message gives a reason"
else
  bad "the message gives a reason"
fi

# every factory and every move, each on its own line
expect "factories and moves" 0 "" -- run "$dir/factories.lua" -n 1
for line in 3 4 5 6 7 8 10 11 12 13; do
  count_lines "factories.lua:$line fails with the device's message" 1 "[rank 0] false	factories.lua:$line: $nodev"
done
count_lines "no factory succeeds" 0 "[rank 0] true"
count_lines "the host tensor is untouched" 1 "[rank 0] tensor([0., 1., 2., 3., 4., 5.])	cpu	15"

# the structured report carries the same message
expect "--report json" 2 "\"zeros_cuda.lua:3: $nodev" -- run "$dir/zeros_cuda.lua" -n 1 --report json

finish
