#!/bin/sh
# run_fuzz.sh BUILD -- `make fuzz`: build every tests/fuzz/fuzz_*.c against a
# commsim library compiled for fuzzing, and run each for $FUZZ_SECONDS (60).
#
# BUILD/src is a copy of the sources (make distdir); the library is built in
# BUILD/obj-ENGINE. With clang and libFuzzer the harnesses are coverage-guided
# (-fsanitize=fuzzer), what they find is kept in BUILD/found_NAME and crashes
# are written as BUILD/crash-*; without clang, tests/fuzz/driver.c feeds the
# seeds and random mutations of them under ASan+UBSan from $CC
# (FUZZ_ENGINE=driver chooses it where clang is present too).
set -eu
b=$(cd "$1" && pwd)
src=$b/src
secs=${FUZZ_SECONDS:-60}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$b/probe.c"
if [ "${FUZZ_ENGINE:-}" != driver ] && clang -fsanitize=fuzzer "$b/probe.c" -o "$b/probe" 2>/dev/null; then
  engine=libFuzzer cc=clang libflags="$san -fsanitize=fuzzer-no-link" linkflags="$san -fsanitize=fuzzer"
else
  engine=driver cc=${CC:-cc} libflags=$san linkflags=$san
fi
rm -f "$b/probe.c" "$b/probe"
echo "fuzz: $engine ($cc), $secs s per harness"
obj=$b/obj-$engine

mkdir -p "$obj"
cd "$obj"
# Without CUDA: no harness reaches a GPU, and their link lines carry no CUDA
# or NCCL libraries (the nccl engine's objects would need them).
if [ ! -f Makefile ]; then
  "$src/configure" --without-cuda CC="$cc" CFLAGS="-g -O1 $libflags" >configure.log ||
    { tail -20 configure.log; exit 1; }
fi
make -s src/libcommsim.a
libs=$(sed -n 's/^\(LUA\|NCURSES\|JANSSON\)_LIBS = //p' Makefile | tr '\n' ' ')
incs=$(sed -n 's/^LUA_CFLAGS = //p' Makefile) # fuzz_pattern calls Lua's own library

cd "$b"
status=0
for f in "$src"/tests/fuzz/fuzz_*.c; do
  name=$(basename "$f" .c)
  seeds=$src/tests/fuzz/corpus_${name#fuzz_}
  if [ "$engine" = libFuzzer ]; then
    $cc -g -O1 $linkflags -D_GNU_SOURCE -I"$src/src" $incs "$f" "$obj/src/libcommsim.a" $libs -lm -pthread -o "$name"
    mkdir -p "found_$name"
    echo "== $name: ./$name -max_total_time=$secs found_$name $seeds"
    ./"$name" -max_total_time="$secs" -print_final_stats=0 "found_$name" "$seeds" 2>"$name.log" ||
      { status=1; tail -40 "$name.log"; }
    tail -2 "$name.log"
  else
    $cc -g -O1 $linkflags -D_GNU_SOURCE -I"$src/src" $incs "$f" "$src/tests/fuzz/driver.c" \
        "$obj/src/libcommsim.a" $libs -lm -pthread -o "$name"
    echo "== $name: ./$name $secs $seeds"
    ./"$name" "$secs" "$seeds" || status=1
  fi
done
exit $status
