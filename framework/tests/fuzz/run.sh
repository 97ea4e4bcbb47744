#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the fuzz targets with clang (libFuzzer + ASan + UBSan) and run each
# for a bounded time over a scratch copy of its kept corpus:
#   hwdb     the INI reader, budget bounds, map patterns, sample decoders
#   event    the event-string parser (single events and lists), against a
#            fixture sysfs tree
#   ring     the ring-buffer reader's arithmetic (data_head/data_tail, wraps)
#   results  the results-file reader, and writing a case back
#   args     the command line's string parsers (--tolerance specs, budget
#            names), escaping for messages, the INI reader's keep-going mode
#   history  `history --db=`: PostgreSQL URIs and keyword strings, what of
#            them may be printed, and passwords scrubbed from messages
# New inputs that increase coverage are not written back: add them to
# framework/tests/fuzz/corpus/TARGET/ by hand when they are worth keeping
# (the corpora replay as ctest cases fuzz.replay_TARGET in every build).
# usage: run.sh SOURCE_DIR BUILD_DIR [SECONDS PER TARGET]
set -euo pipefail
src=$1 build=$2 seconds=${3:-30}
command -v clang >/dev/null || { echo "fuzz: clang not installed (ci/setup installs it)"; exit 77; }
mkdir -p "$build"
flags="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined"
# <pmcheck/version.h> is written from the CMake project's version.
cmake -DOUT="$build/include" -P "$src/cmake/PmcheckVersion.cmake"
inc=(-I"$src/framework/include" -I"$build/include" -I"$src/framework/src")
for room in . case runner results gate; do inc+=(-I"$src/framework/src/harness/$room"); done
objs=() hobjs=()
# libpfm4 is opened by its soname (src/core/event_pmu.c), as the CMake build finds it.
pfm_lib=$(clang -print-file-name=libpfm.so)
pfm_soname=$(objdump -p "$pfm_lib" | awk '$1 == "SONAME" { print $2 }')
[ -n "$pfm_soname" ] || { echo "fuzz: no soname in $pfm_lib (install libpfm4-dev)"; exit 1; }
# Every source of the counting core, and the harness's (for the results reader).
for path in "$src"/framework/src/{util,core,sim,hwdb}/*.c; do
	f=$(basename "$(dirname "$path")")_$(basename "$path")
	clang $flags -fsanitize=fuzzer-no-link -std=gnu11 "${inc[@]}" \
		-DPMCHECK_LIBPFM_SONAME="\"$pfm_soname\"" -c "$path" -o "$build/${f%.c}.o"
	objs+=("$build/${f%.c}.o")
done
for path in "$src"/framework/src/harness/*/*.c; do
	f=$(basename "$path")
	[ "$f" = main.c ] && continue
	clang $flags -fsanitize=fuzzer-no-link -std=gnu11 "${inc[@]}" $(pkg-config --cflags jansson) \
		-c "$path" -o "$build/harness_${f%.c}.o"
	hobjs+=("$build/harness_${f%.c}.o")
done
libs=(-ldl -lpthread -lm)
for t in hwdb event ring results args; do
	extra=()
	[ "$t" = results ] || [ "$t" = args ] && extra=("${hobjs[@]}" $(pkg-config --libs jansson))
	clang $flags -fsanitize=fuzzer -std=gnu11 "${inc[@]}" "$src/framework/tests/fuzz/fuzz_$t.c" \
		"${objs[@]}" "${extra[@]}" -o "$build/fuzz_$t" "${libs[@]}"
done
clang $flags -fsanitize=fuzzer -std=gnu11 "$src/framework/tests/fuzz/fuzz_history.c" \
	"$src/framework/tools/history/target.c" -o "$build/fuzz_history"
cd "$build"
status=0
for t in hwdb event ring results args history; do
	rm -rf "corpus-$t" && cp -r "$src/framework/tests/fuzz/corpus/$t" "corpus-$t"
	echo "== fuzz_$t: $seconds s"
	if ! ./"fuzz_$t" -max_total_time="$seconds" -timeout=10 -max_len=4096 -print_final_stats=1 \
		"corpus-$t" >"fuzz_$t.log" 2>&1; then
		status=1
		tail -40 "fuzz_$t.log"
	fi
	grep -E "^stat::number_of_executed_units|^stat::new_units_added|cov: " "fuzz_$t.log" | tail -3
done
exit $status
