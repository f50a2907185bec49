#!/usr/bin/env python3
"""Host time of `ldmsim run` on a workload for one or more ldmsim binaries, side by side in one run.

Runs are interleaved (A, B, A, B, ...) so both see the same machine load; the figure is the process's CPU time
(user + sys of the child, from getrusage), whose median over --reps runs is printed with the ratio to the
first binary. Used for the "10-op chain" table of docs/benchmarks.md:

  python3 bench/chain_bench.py --workload bench/workloads/chain10.json OLD/ldmsim build/tools/ldmsim

A binary may carry extra `run` arguments, quoted as one: "build/tools/ldmsim --concurrent".
"""
import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile


def cpu_seconds_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="ldmsim executables to compare (the first is the baseline)")
    parser.add_argument("--workload", required=True)
    parser.add_argument("--arch", default="sw26010")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    times = {b: [] for b in args.binaries}
    with tempfile.TemporaryDirectory() as out:
        for rep in range(args.reps + 1):  # rep 0 warms the page cache
            for b in args.binaries:
                t = cpu_seconds_of([*shlex.split(b)[:1], "run", args.workload, *shlex.split(b)[1:], "--arch", args.arch, "--no-trace", "--threads", "1",
                                    "--out", os.path.join(out, str(args.binaries.index(b)))])
                if rep > 0:
                    times[b].append(t)
    base = statistics.median(times[args.binaries[0]])
    print(f"| binary | median CPU s ({args.reps} runs) | min | max | vs first |")
    print("|---|---:|---:|---:|---:|")
    for b in args.binaries:
        m = statistics.median(times[b])
        print(f"| {b} | {m:.3f} | {min(times[b]):.3f} | {max(times[b]):.3f} | {m / base:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
