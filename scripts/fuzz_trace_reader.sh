#!/usr/bin/env bash
# Fuzzes the trace reader (and summary/export/filter/diff on top of it) with libFuzzer from clang-16, ASan and
# UBSan, for a bounded time, starting from seed traces that tests/fuzz/make_seeds.cpp writes with the library's
# own writer (version 2 with zstd and raw DMA blocks, both in one file, and a version 1 file). Every input that
# crashes, leaks, times out or trips a sanitizer is copied to tests/fuzz/corpus-regressions/, which
# tests/trace/trace_corpus_test.cpp replays in every test run.
# By default the fuzzer keeps going after a crash (libFuzzer's fork mode with one worker), so one bug does not
# end the run; FUZZ_KEEP_GOING=0 runs a single process that stops at the first crash and prints final stats.
# Usage: scripts/fuzz_trace_reader.sh [SECONDS=60] [BUILD_DIR=build-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=${2:-build-fuzz}
keep_going=${FUZZ_KEEP_GOING:-1}
command -v clang++-16 >/dev/null || { echo "clang++-16 is required (apt-get install clang-16 libclang-rt-16-dev)" >&2; exit 2; }
rm -rf "$out/crashes"  # this run's failures only; earlier ones are in tests/fuzz/corpus-regressions/
mkdir -p "$out/obj" "$out/corpus" "$out/crashes" tests/fuzz/corpus-regressions

# The library sources the harness reaches, compiled once (with coverage, ASan and UBSan) and linked into both the
# fuzzer and the seed writer. Globbed, so a new trace source (block codec, spill) is picked up.
common=(-std=c++20 -O1 -g -fno-sanitize-recover=undefined -Isim/include -Idma/include -Itrace/include
        -Itrace_analysis/include)
instrumented=("-fsanitize=fuzzer-no-link,address,undefined")
sources=(trace/src/*.cpp trace_analysis/src/*.cpp dma/src/request.cpp sim/src/fault.cpp sim/src/bytes_text.cpp
         sim/src/input_file.cpp sim/src/output_file.cpp)
libs=(-lfmt)
if grep -q ZSTD_ trace/src/*.cpp; then libs+=(-lzstd); fi
libs+=(-lz -pthread)  # the Perfetto export compresses its packets (zstd or deflate) on a worker thread
echo "building $out/trace_reader_fuzz and $out/make_seeds with clang++-16 (${#sources[@]} library sources)"
rm -f "$out"/obj/*.o
pending=()  # two compilers at a time (the machine has two cores); a failing one stops the script
for src in "${sources[@]}"; do
  clang++-16 "${common[@]}" "${instrumented[@]}" -c "$src" -o "$out/obj/$(basename "$src" .cpp).o" &
  pending+=($!)
  if [ ${#pending[@]} -ge 2 ]; then wait "${pending[0]}"; pending=("${pending[@]:1}"); fi
done
for job in "${pending[@]}"; do wait "$job"; done
objects=("$out"/obj/*.o)
clang++-16 "${common[@]}" -fsanitize=fuzzer,address,undefined tests/fuzz/trace_reader_fuzz.cpp "${objects[@]}" \
  "${libs[@]}" -o "$out/trace_reader_fuzz"
clang++-16 "${common[@]}" "${instrumented[@]}" -Itrace/src tests/fuzz/make_seeds.cpp "${objects[@]}" "${libs[@]}" \
  -o "$out/make_seeds"

# Seeds: fresh from the writer on every run (so they follow the current format), plus the regression inputs and
# what earlier runs kept in $out/corpus (the only directory libFuzzer adds to).
rm -rf "$out/seeds"
"$out/make_seeds" "$out/seeds"
dirs=("$out/corpus" "$out/seeds")
if [ -n "$(find tests/fuzz/corpus-regressions -maxdepth 1 -type f ! -name '.*' -print -quit)" ]; then
  dirs+=(tests/fuzz/corpus-regressions)
fi

options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$out/crashes/"
         -print_final_stats=1)
if [ "$keep_going" = 1 ]; then options+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1); fi
set +e
"$out/trace_reader_fuzz" "${dirs[@]}" "${options[@]}"
status=$?
set -e
# Every failing input is kept. Fork mode finds the same bug again and again, so each one is replayed and grouped
# by its failure: the report line and the first stack frames outside libFuzzer, the sanitizers and the C/C++
# runtime. FUZZ_DEDUP=1 keeps only the smallest input of each group.
signature() {
  ASAN_OPTIONS=dedup_token_length=16 UBSAN_OPTIONS=print_stacktrace=1:dedup_token_length=16 \
    "$out/trace_reader_fuzz" -timeout=10 -rss_limit_mb=2048 "$1" 2>&1 |
    awk '/DEDUP_TOKEN:/ && tok == "" { sub(/^.*DEDUP_TOKEN: /, ""); tok = $0 }
         /SUMMARY:/ && sum == "" { sum = $0 }
         END {
           n = split(tok, f, "--"); sig = ""; kept = 0
           for (i = 1; i <= n && kept < 3; i++) {
             if (f[i] == "" || f[i] ~ /^(fuzzer::|__sanitizer|__interceptor|__asan|__ubsan|__pthread|raise|abort|__gnu_cxx::|__cxxabiv1::|std::terminate|__cxa_|__libc|_start$|main$)/) continue
             sig = sig " | " f[i]; kept++
           }
           print (sig != "" ? sum sig : sum)
         }' || true  # the replay fails, that is the point
}
declare -A seen=()
found=0
failures=0
while IFS= read -r f; do
  failures=$((failures + 1))
  sig="$(basename "$f" | cut -d- -f1) $(signature "$f")"
  echo "failure: $(basename "$f") ($(stat -c %s "$f") bytes): $sig"
  if [ -n "${seen[$sig]:-}" ] && [ "${FUZZ_DEDUP:-0}" = 1 ]; then continue; fi
  seen[$sig]=$f
  if [ ! -e "tests/fuzz/corpus-regressions/$(basename "$f")" ]; then
    cp "$f" "tests/fuzz/corpus-regressions/$(basename "$f")"
    found=$((found + 1))
  fi
done < <(find "$out/crashes" -maxdepth 1 -type f -printf '%s %p\n' | sort -n | cut -d' ' -f2-)
echo "fuzzing finished (exit $status); $failures failing inputs, ${#seen[@]} distinct failures;" \
  "$found new inputs kept in tests/fuzz/corpus-regressions/"
exit $status
