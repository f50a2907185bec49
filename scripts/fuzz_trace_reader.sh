#!/usr/bin/env bash
# Fuzzes the trace reader (and summary/export/filter/diff on top of it) with libFuzzer from clang-14, for a bounded
# time, starting from seed traces written by the test suite's format. Every input that crashes it is copied to
# tests/fuzz/corpus-regressions/, which tests/dma/trace_corpus_test.cpp replays in every test run.
# Usage: scripts/fuzz_trace_reader.sh [SECONDS=60] [BUILD_DIR=build-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=${2:-build-fuzz}
mkdir -p "$out/corpus" tests/fuzz/corpus-regressions
command -v clang++-14 >/dev/null || { echo "clang++-14 is required (apt-get install clang-14)" >&2; exit 2; }

flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Isim/include -Idma/include)
sources=(tests/fuzz/trace_reader_fuzz.cpp dma/src/trace_file.cpp dma/src/trace_recorder.cpp dma/src/trace_summary.cpp
         dma/src/trace_export.cpp dma/src/trace_filter.cpp dma/src/trace_diff.cpp dma/src/request.cpp sim/src/fault.cpp)
libs=(-lfmt)
if grep -q ZSTD dma/src/trace_file.cpp 2>/dev/null; then libs+=(-lzstd); fi
echo "building $out/trace_reader_fuzz with clang++-14"
clang++-14 "${flags[@]}" "${sources[@]}" "${libs[@]}" -o "$out/trace_reader_fuzz"

# Seeds: small valid traces (the regression inputs and any trace lying around in build dirs), else one minimal file.
cp tests/fuzz/corpus-regressions/* "$out/corpus/" 2>/dev/null || true
find . -maxdepth 4 -name '*.ldmtrace' -size -64k -exec cp {} "$out/corpus/" \; 2>/dev/null || true
if [ -z "$(ls -A "$out/corpus")" ]; then
  printf 'LDMTRACE\x01\x00\x00\x00\x02\x00\x00\x00{}' > "$out/corpus/minimal"
  printf '\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' >> "$out/corpus/minimal"
  head -c 32 /dev/zero >> "$out/corpus/minimal"
fi

mkdir -p "$out/crashes"
set +e
"$out/trace_reader_fuzz" "$out/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$out/crashes/" -print_final_stats=1
status=$?
set -e
found=0
for f in "$out"/crashes/*; do
  [ -e "$f" ] || continue
  cp "$f" "tests/fuzz/corpus-regressions/$(basename "$f")"
  found=$((found + 1))
done
echo "fuzzing finished (exit $status); $found crashing inputs kept in tests/fuzz/corpus-regressions/"
exit $status
