#!/usr/bin/env bash
# Build the hwdb fuzz target with clang (libFuzzer + ASan + UBSan) and run
# it for a bounded time over a scratch copy of the kept corpus.  New inputs
# that increase coverage are printed, not written back: add them to
# framework/tests/fuzz/corpus/ by hand when they are worth keeping.
# usage: run.sh SOURCE_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$1 build=$2 seconds=${3:-30}
command -v clang >/dev/null || { echo "fuzz: clang not installed (ci/setup installs it)"; exit 77; }
mkdir -p "$build"
flags="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined"
objs=()
# Every source of the counting core (framework/src/*.c, not the harness).
for path in "$src"/framework/src/*.c; do
	f=$(basename "$path")
	clang $flags -fsanitize=fuzzer-no-link -std=gnu11 -I"$src/framework/include" -I"$src/framework/src" \
		-DPMCHECK_HAVE_LIBCPUID=1 -c "$path" -o "$build/${f%.c}.o"
	objs+=("$build/${f%.c}.o")
done
clang $flags -fsanitize=fuzzer -std=gnu11 -I"$src/framework/include" -I"$src/framework/src" \
	"$src/framework/tests/fuzz/fuzz_hwdb.c" "${objs[@]}" -o "$build/fuzz_hwdb" \
	-lpfm -linih -lcpuid -ldl -lpthread -lm
rm -rf "$build/corpus" && cp -r "$src/framework/tests/fuzz/corpus" "$build/corpus"
cd "$build"
./fuzz_hwdb -max_total_time="$seconds" -timeout=10 -max_len=4096 -print_final_stats=1 corpus 2>&1 | tail -15
