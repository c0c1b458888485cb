# lib.sh -- what the shell test suites share. Source it first thing:
#   . "$(dirname "$0")/../lib.sh"
#
# It sets:
#   top_srcdir, top_builddir  the trees (make check sets them; by default the
#                             tree this file is in, so a suite runs by hand
#                             from anywhere)
#   bin                       src/commsim, an absolute path (ip netns exec and
#                             tmux sessions run it from elsewhere); the suite
#                             is skipped (77) when it is not built
#   tmp                       a scratch directory, removed on exit
# and gives the suite its verdicts (ok, bad, skip, finish), one way to run
# commsim and check the result (expect), one way to wait for a condition
# (wait_until), and skip_all.
#
# Every suite ends with finish: its last line is exactly "N passed, M failed"
# (.ci/run greps and sums those lines) and its status is 0 only when nothing
# failed. Exit status 77 means the whole suite was skipped (automake's rule).
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# Absolute, so that a suite may run commsim from another directory (make
# passes relative paths, and distcheck builds out of the source tree).
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=$(cd "$top_builddir" && pwd)

# skip_all WHY: the suite cannot run here; automake counts 77 as a skip.
skip_all() {
  echo "skip: $1"
  exit 77
}

bin=$top_builddir/src/commsim
[ -x "$bin" ] || skip_all "$bin not built"
bin=$(cd "$top_builddir/src" && pwd)/commsim

# A suite with more to undo at exit than $tmp (processes it started, network
# namespaces) defines on_exit; it runs before $tmp goes, so it may still read it.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commsim-$(basename "$0" .sh).XXXXXX") || exit 1
trap 'if declare -F on_exit >/dev/null; then on_exit; fi; rm -rf "$tmp"' EXIT

pass=0 fail=0 skipped=0

ok() {
  pass=$((pass + 1))
  echo "ok - $1"
}

# show FILES...: a failed case's evidence, indented, at most 40 lines so that
# one failure does not bury the others.
show() { sed 's/^/    | /' "$@" 2>/dev/null | head -40; }

# evidence: what a failed case prints after its FAIL line. By default the last
# run's output (expect writes it to $tmp/out and $tmp/err); a suite whose
# cases look elsewhere redefines it.
evidence() { show "$tmp/out" "$tmp/err"; }

# bad NAME [WHY]: a failed case, with why (when given) and the evidence.
bad() {
  fail_line "$@"
  evidence
}

# bad_showing FILE NAME [WHY]: the same, for a case whose evidence is FILE
# (a trace, say) rather than the last run's output.
bad_showing() {
  local file=$1
  shift
  fail_line "$@"
  show "$file"
}

fail_line() {
  fail=$((fail + 1))
  echo "FAIL - $1${2:+: $2}"
}

# skip NAME WHY...: one case cannot run on this build; the rest of the suite
# does. WHY may come in several words, joined by spaces.
skip() {
  local name=$1
  shift
  skipped=$((skipped + 1))
  echo "skip - $name: $*"
}

# guarded CMD...: a hung run must fail its case, not hang make check.
# commsim's own --timeout (default 60 s) should end it first; this is the
# backstop.
guarded() { timeout -k 5 120 "$@"; }

# wait_until SECONDS CMD...: run CMD every 0.05 s until it succeeds; status 1
# when it has not within about SECONDS (CMD runs once more at the end). For a
# condition another process makes true (a screen, a file, a process): give a
# generous bound, so that a slow machine makes the suite slower, never wrong.
wait_until() {
  local end=$((SECONDS + $1))
  shift
  while [ "$SECONDS" -lt "$end" ]; do
    "$@" && return 0
    sleep 0.05
  done
  "$@"
}

# expect NAME STATUS PATTERN -- ARGS...: run commsim ARGS (no terminal, output
# to $tmp/out and $tmp/err); the exit status must be STATUS and stdout or
# stderr must contain PATTERN (a fixed string; "" for none).
expect() {
  local name=$1 want=$2 pattern=$3
  shift 4
  guarded "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  if [ "$got" != "$want" ]; then
    bad "$name" "exit status $got, expected $want"
  elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$tmp/out" "$tmp/err"; then
    bad "$name" "output lacks: $pattern"
  else
    ok "$name"
  fi
}

# replay_same NAME ARGS...: run ARGS with --trace, replay the trace, and
# require the same exit status, standard output and report, byte for byte.
replay_same() {
  local name=$1
  shift
  guarded "$bin" run "$@" --trace "$tmp/t.jsonl" >"$tmp/live.out" 2>"$tmp/live.err" </dev/null
  local live=$?
  guarded "$bin" replay "$tmp/t.jsonl" --no-tui >"$tmp/out" 2>"$tmp/err" </dev/null
  local rep=$?
  if [ "$live" != "$rep" ]; then
    bad "replay = live: $name" "live status $live, replay status $rep"
  elif ! cmp -s "$tmp/live.out" "$tmp/out" || ! cmp -s "$tmp/live.err" "$tmp/err"; then
    diff "$tmp/live.out" "$tmp/out" | head -20
    diff "$tmp/live.err" "$tmp/err" | head -20
    bad "replay = live: $name"
  else
    ok "replay = live: $name (status $live)"
  fi
}

# count_lines NAME N PATTERN: the last run's output (stdout and stderr) holds
# the fixed string PATTERN on exactly N lines.
count_lines() {
  local got
  got=$(cat "$tmp/out" "$tmp/err" | grep -cF -- "$3")
  if [ "$got" = "$2" ]; then ok "$1"; else bad "$1" "$got lines, expected $2"; fi
}

# hand RANK SCRIPT [ARGS...]: start rank RANK of the tcp job whose master
# listens on $port (with $world ranks and job token $token), as a user would
# by hand; its output in $tmp/rRANK, its pid in $hand and added to $helpers.
hand() {
  local r=$1 script=$2
  shift 2
  "$bin" run "$script" --engine tcp --master "127.0.0.1:$port" --rank "$r" --world "$world" \
    --token "$token" "$@" </dev/null >"$tmp/r$r" 2>&1 &
  hand=$!
  helpers="${helpers:-} $hand"
}

# finish: the closing line, and the suite's status (0 only when all passed).
finish() {
  [ "$skipped" = 0 ] || echo "# $skipped skipped"
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ] && exit 0
  exit 1
}
