#!/usr/bin/env bash
# Fuzzes the user-file readers (the JSON workload loader with op binding and the pass pipeline, the arch loader
# with its timing model, the ONNX importer with the bound of what its parse takes, the .npy reader) and the constant-pack parser with libFuzzer from
# clang-16, ASan and UBSan, for a bounded time. The libraries are built by CMake in BUILD_DIR with clang-16 and the
# sanitizers; seeds are the shipped workloads (examples/, bench/workloads/), the arch presets, the ONNX test
# models, small .npy files and a constant pack. Every input that crashes, leaks, times out or trips a sanitizer is
# copied to tests/fuzz/workload-regressions/ (first byte 'N': a .npy, 'A': an arch file, 'O': an ONNX model, 'P':
# a constant pack's bytes, 'S': a run's stats.json, else a workload), which tests/graph/user_file_corpus_test.cpp replays in every test run.
# Usage: scripts/fuzz_workload.sh [SECONDS=60] [BUILD_DIR=build-fuzz-workload]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=${2:-build-fuzz-workload}
command -v clang++-16 >/dev/null || { echo "clang++-16 is required (apt-get install clang-16 libclang-rt-16-dev)" >&2; exit 2; }
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16 \
  -DCMAKE_CXX_FLAGS="$flags" -DLDMSIM_BUILD_TESTS=OFF -DLDMSIM_BUILD_BENCH=OFF -DLDMSIM_BUILD_TOOLS=OFF \
  -DBUILD_SHARED_LIBS=OFF >/dev/null
cmake --build "$out" -j"${LDMSIM_JOBS:-2}" --target ldmsim_session ldmsim_frontends ldmsim_trace_analysis
libs=()
for lib in session frontends graph kernels runtime trace_analysis trace dma sim; do libs+=("$(find "$out" -name "libldmsim_$lib.a" -print -quit)"); done
clang++-16 -std=c++20 $flags -fsanitize=fuzzer -DONNX_ML=1 -DONNX_NAMESPACE=onnx -Isim/include -Idma/include -Iruntime/include -Ikernels/include \
  -Igraph/include -Ifrontends/include -Isession/include -Itrace/include -Itrace_analysis/include tests/fuzz/workload_fuzz.cpp "${libs[@]}" \
  -lboost_fiber -lboost_context -lspdlog -lfmt -lzstd -lz -lonnx_proto -lprotobuf -lpthread -o "$out/workload_fuzz"

# Seeds: a byte selecting the reader, then the file.
rm -rf "$out/seeds" && mkdir -p "$out/seeds" "$out/corpus" "$out/crashes" tests/fuzz/workload-regressions
for w in examples/*.json bench/workloads/*.json; do { printf 'J'; cat "$w"; } >"$out/seeds/$(basename "$w")"; done
for a in sim/presets/*.json; do { printf 'A'; cat "$a"; } >"$out/seeds/arch-$(basename "$a")"; done
for s in tests/fuzz/workload-regressions/stats-*; do cp "$s" "$out/seeds/"; done
# ONNX seeds: the models of the ONNX tests (python3-onnx builds them; nothing is downloaded).
/usr/bin/python3 tests/onnx/make_models.py "$out/onnx-models" >/dev/null
for m in "$out"/onnx-models/*.onnx; do { printf 'O'; cat "$m"; } >"$out/seeds/onnx-$(basename "$m")"; done
npy_v1() {  # a version-1 .npy header for dtype $1 and shape $2, padded to 64 bytes
  local header="{'descr': '$1', 'fortran_order': False, 'shape': $2, }"
  while [ $(((10 + ${#header} + 1) % 64)) -ne 0 ]; do header+=" "; done
  printf 'N\x93NUMPY\x01\x00'
  printf "\\x$(printf %02x $(((${#header} + 1) % 256)))\\x$(printf %02x $(((${#header} + 1) / 256)))"
  printf '%s\n' "$header"
}
# A constant pack (kernels/constant_pack.hpp): two entries, input 1 from index 3 (4 values) and input 2 (3 values).
/usr/bin/python3 -c "import struct, sys; sys.stdout.buffer.write(b'P' + struct.pack('<15I', 0x4b50444c, 2, 60,
  1, 3, 4, 44, 2, 0, 3, 52, 0x40003c00, 0x44004200, 0xc000bc00, 0x0000c200))" >"$out/seeds/pack.bin"
{ npy_v1 '<f2' '(2, 3)'; head -c 12 /dev/urandom; } >"$out/seeds/f2.npy"
{ npy_v1 '<f4' '(3,)'; head -c 12 /dev/urandom; } >"$out/seeds/f4.npy"
dirs=("$out/corpus" "$out/seeds")
if [ -n "$(find tests/fuzz/workload-regressions -maxdepth 1 -type f ! -name '.*' -print -quit)" ]; then
  dirs+=(tests/fuzz/workload-regressions)
fi
set +e
"$out/workload_fuzz" "${dirs[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$out/crashes/" -print_final_stats=1 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
status=$?
set -e
found=0
for f in "$out"/crashes/*; do
  [ -f "$f" ] || continue
  if [ ! -e "tests/fuzz/workload-regressions/$(basename "$f")" ]; then
    cp "$f" tests/fuzz/workload-regressions/ && found=$((found + 1))
  fi
done
echo "fuzzing finished (exit $status); $found new failing inputs kept in tests/fuzz/workload-regressions/"
exit $status
