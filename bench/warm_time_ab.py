#!/usr/bin/env python3
"""Warm-run host time of two (or more) builds of the Python module, side by side: each round starts one child
process per build (in reverse order every other round), which loads the model, runs it once (cold, not counted)
and then `--runs` more times in the same Session; the round's figure for a build is the median of those warm runs,
and the result is the median over rounds of each build's figure divided by the first build's. Ratios taken within
a round cancel the drift of a VM's speed, as bench/host_time_ab.py does for whole processes.

Usage: bench/warm_time_ab.py --rounds 9 --runs 4 BUILD_A/python BUILD_B/python -- MODEL.onnx X.npy
       [--arch sw26010pro] [--threads 1] [--split auto]
Each build is a directory holding the `ldmsim` package (a build tree's `python/`), put first on PYTHONPATH.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, sys, time, numpy as np, ldmsim
model_file, x_file, arch, threads, split, runs = sys.argv[1:7]
session = ldmsim.Session(arch=arch, threads=int(threads), **({"split": split} if split else {}))
model = session.load(model_file)
inputs = {model.inputs[0]["name"]: np.load(x_file)}  # the model's first run-time input
session.run(model, inputs)
times = []
for _ in range(int(runs)):
    start = time.perf_counter()
    session.run(model, inputs)
    times.append(time.perf_counter() - start)
print(json.dumps({"module": ldmsim.__file__, "times": times}))
"""


def warm_median(package_dir, args, runs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_dir, os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", CHILD, args.model, args.input, args.arch, str(args.threads),
                           args.split or "", str(runs)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{package_dir}: the warm runs failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if not os.path.realpath(result["module"]).startswith(os.path.realpath(package_dir)):
        sys.exit(f"{package_dir}: imported ldmsim from {result['module']}, not from this build")
    return statistics.median(result["times"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--runs", type=int, default=4, help="warm runs per child after the first")
    parser.add_argument("builds", nargs="+", help="directories holding the ldmsim package; the first is the reference")
    if "--" not in sys.argv:
        parser.error("give MODEL.onnx X.npy [--arch A] [--threads T] [--split S] after --")
    split_at = sys.argv.index("--")
    args = parser.parse_args(sys.argv[1:split_at])
    run_parser = argparse.ArgumentParser(prog="warm_time_ab.py ... --")
    run_parser.add_argument("model")
    run_parser.add_argument("input")
    run_parser.add_argument("--arch", default="sw26010pro")
    run_parser.add_argument("--threads", type=int, default=1)
    run_parser.add_argument("--split", default=None)
    run_args = run_parser.parse_args(sys.argv[split_at + 1:])
    for name in ("rounds", "runs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    seconds = {b: [] for b in args.builds}
    for round_index in range(args.rounds):
        order = args.builds if round_index % 2 == 0 else list(reversed(args.builds))
        for build in order:
            seconds[build].append(warm_median(build, run_args, args.runs))
    median = statistics.median
    reference = args.builds[0]
    for build in args.builds:
        line = f"{build}: warm run {median(seconds[build]) * 1e3:.1f} ms"
        if build != reference:
            ratios = [s / r for s, r in zip(seconds[build], seconds[reference])]
            line += f"; / first build, median of {args.rounds} rounds: {median(ratios):.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
