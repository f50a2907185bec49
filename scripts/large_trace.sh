#!/usr/bin/env bash
# Issue 4, "large traces": a simulated run with N DMA requests (default 10 M) records and writes its trace, then
# `ldmsim trace summary`, `trace export` (chrome, csv) and `report` process it. Prints a markdown table of wall
# time, events per second and peak resident memory per step, for N/10 and N requests side by side, so a reader
# can see that memory stays flat while the run grows tenfold.
#
# Usage: scripts/large_trace.sh [REQUESTS]
# Environment: LDMSIM_BENCH_BUILD_DIR (default build/), LDMSIM_LARGE_TRACE_DIR (scratch space, default a mktemp
# dir under TMPDIR; the N = 10 M exports need about 3.5 GB there).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${LDMSIM_BENCH_BUILD_DIR:-$root/build}
requests=${1:-10000000}
if [[ "$build_dir" == "$root/build" ]]; then (cd "$root" && cmake --preset default >/dev/null); fi
cmake --build "$build_dir" --target large_trace_run ldmsim_cli -j "${LDMSIM_BENCH_JOBS:-2}" >&2

scratch=${LDMSIM_LARGE_TRACE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/ldmsim-large-trace.XXXXXX")}
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT

# Runs a command, prints "seconds peak_rss_mib" of it (the child's own peak).
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
if done.returncode != 0:
    sys.exit(f"large_trace.sh: {' '.join(sys.argv[1:])} exited {done.returncode}")
print(f"{time.monotonic() - start:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f}")
PY
}

ldmsim="$build_dir/tools/ldmsim"
echo "| requests | step | wall s | events/s | peak RSS MiB | note |"
echo "|---:|---|---:|---:|---:|---|"
for n in $((requests / 10)) "$requests"; do
  trace="$scratch/run-$n.ldmtrace"
  json=$("$build_dir/bench/large_trace_run" --requests "$n" --out "$trace")
  python3 - "$json" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
n = r["requests"]
print(f"| {n:,} | simulate + record ({r['arch']}, {r['threads']} threads) | {r['simulate_s']:.2f} | "
      f"{r['simulate_events_per_s'] / 1e6:.1f} M | {r['simulate_peak_rss_mib']:.1f} | whole process: machine, memory, trace |")
print(f"| {n:,} | write trace (zstd) | {r['write_s']:.2f} | {r['write_events_per_s'] / 1e6:.1f} M | "
      f"{r['write_peak_rss_mib']:.1f} | {r['trace_bytes_per_event']:.2f} bytes/event on disk |")
PY
  events=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["requests"])' "$json")
  for step in summary chrome csv report; do
    case $step in
      summary) cmd=("$ldmsim" trace summary "$trace") ;;
      chrome) cmd=("$ldmsim" trace export "$trace" --format chrome -o "$scratch/out.json") ;;
      csv) cmd=("$ldmsim" trace export "$trace" --format csv -o "$scratch/out.csv") ;;
      report) cmd=("$ldmsim" report "$trace" -o "$scratch/report.html") ;;
    esac
    read -r seconds rss < <(measure "${cmd[@]}")
    size=""
    case $step in
      chrome) size="$(du -m "$scratch/out.json" | cut -f1) MB of JSON" ;;
      csv) size="$(du -m "$scratch/out.csv" | cut -f1) MB of CSV" ;;
    esac
    python3 -c "import sys; n, s = int(sys.argv[1]), float(sys.argv[2]); print(f'| {n:,} | ldmsim {sys.argv[3]} | {s:.2f} | {n / s / 1e6:.1f} M | {sys.argv[4]} | {sys.argv[5]} |')" \
      "$events" "$seconds" "$step" "$rss" "$size"
    rm -f "$scratch/out.json" "$scratch/out.csv"
  done
  rm -f "$trace"
done
