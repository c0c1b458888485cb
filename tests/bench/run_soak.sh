#!/usr/bin/env bash
# run_soak.sh -- bench/soak.sh, briefly, so that the script cannot rot: a
# short soak on the real commsim ends clean and prints its summary, and its
# hang and orphan detectors fire on a fake commsim that hangs or leaves a
# process behind. Its figures (runs, kills, RSS) are never a verdict.
. "$(dirname "$0")/../lib.sh"
[ -x /usr/bin/time ] || skip_all "GNU time (/usr/bin/time) is not installed"
gen=$top_builddir/tests/gen/gen_p2p
[ -x "$gen" ] || skip_all "tests/gen/gen_p2p is not built"
soak=$top_srcdir/bench/soak.sh

# ---- gen_p2p --print writes one program and names its world
if out=$("$gen" --print 3 "$tmp/p.lua") && [[ "$out" =~ ^[0-9]+\  ]] && grep -q "dist\." "$tmp/p.lua"; then
  ok "gen_p2p --print"
else
  bad "gen_p2p --print: '$out'"
fi
expect_fail=$("$gen" --print 2>&1); [ $? -eq 1 ] && [[ "$expect_fail" == usage:* ]] \
  && ok "gen_p2p refuses a bad option" || bad "gen_p2p bad option: $expect_fail"

# ---- a short soak on the real thing: clean, with its summary
# One or two runs of each program are no basis for a growth verdict (under
# ThreadSanitizer a run's peak RSS varies by half): the figures are printed,
# not judged (SOAK_GROWTH=0); bench/soak.sh's long runs judge them.
COMMSIM=$bin GEN_P2P=$gen SOAK_SECONDS=15 SOAK_SEED=7 SOAK_GROWTH=0 SOAK_KEEP=$tmp/keep \
  guarded "$soak" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st -eq 0 ]; then ok "short soak ends 0"; else bad "short soak: status $st"; evidence; fi
for want in "rounds over" "runs: thread " "kills: " "hangs: 0, orphans: 0, crashes: 0, replay failures: 0, replays that differ: 0" \
            "peak RSS (KiB" " 0 failed"; do
  if grep -qF -- "$want" "$tmp/out"; then ok "summary: $want"; else bad "summary: $want"; evidence; fi
done
if grep -Eq '^runs: thread [1-9][0-9]*, tcp [1-9]' "$tmp/out"; then ok "runs on both engines"; else bad "runs on both engines"; fi
if [ -s "$tmp/err" ]; then bad "soak wrote to stderr"; show "$tmp/err"; else ok "nothing on stderr"; fi

# ---- the detectors fire: a commsim that hangs, one that leaves a child
mkdir -p "$tmp/fake"
printf '#!/usr/bin/env bash\n[ "$1" = run ] && exec -a "$0" sleep 30\nexit 0\n' > "$tmp/fake/hangs"
printf '#!/usr/bin/env bash\n[ "$1" = run ] && (exec -a "$0" sleep 30) &\nexit 0\n' > "$tmp/fake/orphans"
chmod +x "$tmp/fake/hangs" "$tmp/fake/orphans"
COMMSIM=$tmp/fake/hangs GEN_P2P=$gen SOAK_SECONDS=1 SOAK_HANG_S=2 SOAK_KILLS=0 SOAK_KEEP=$tmp/keep-hang \
  guarded "$soak" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q "^FAIL hang: " "$tmp/out" && grep -Eq "^hangs: [1-9]" "$tmp/out" \
   && ls "$tmp"/keep-hang/*-hang/program.lua >/dev/null 2>&1; then
  ok "a hang is found, its program kept"
else
  bad "hang detector: status $st"; evidence
fi
COMMSIM=$tmp/fake/orphans GEN_P2P=$gen SOAK_SECONDS=1 SOAK_ORPHAN_GRACE_S=1 SOAK_KILLS=0 SOAK_KEEP=$tmp/keep-orphan \
  guarded "$soak" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q "^FAIL orphan: " "$tmp/out" && grep -Eq "orphans: [1-9]" "$tmp/out"; then
  ok "an orphan is found"
else
  bad "orphan detector: status $st"; evidence
fi
finish
