#!/usr/bin/env python3
"""Host time of two (or more) ldmsim builds on the same `ldmsim run`, side by side: each round runs every build
once, in turn (in reverse order every other round), and the result is the median over rounds of each build's time
divided by the first build's in the same round. On a VM whose speed drifts (1.3x within minutes on the machines measured), a ratio taken within
a round cancels the drift; medians of absolute times do not.

Usage: bench/host_time_ab.py --rounds 15 BUILD_A/tools/ldmsim BUILD_B/tools/ldmsim -- run MODEL.onnx
       --input input=X.npy --arch sw26010pro --no-trace --threads 2
Everything after `--` is passed to each build; `--out` is added (a scratch directory per build). Also prints
the median import and execute phases from each run's host_times.json, and the median CPU time (user + system).

`--pause SECONDS` sleeps before every run. On a VM that hands freed guest memory back to its host (free page
reporting, a 2 s delay in Linux), a run started right after another reuses memory the host still backs, and
first touches cost several times less than in a run started after the machine sat idle, as a user's run usually
is; `--pause 3` measures that case.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from child_usage import run_child  # noqa: E402


def run_once(build, args, out):
    """Wall seconds, CPU seconds and host_times.json phases of one run."""
    wall, cpu = run_child([build, *args, "--out", str(out)])
    phases = json.loads((Path(out) / "host_times.json").read_text()).get("phases", {})
    return wall, cpu, phases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds to sleep before every run")
    parser.add_argument("builds", nargs="+", help="ldmsim binaries; the first is the reference")
    if "--" not in sys.argv:
        parser.error("give the ldmsim arguments after --")
    split = sys.argv.index("--")
    args = parser.parse_args(sys.argv[1:split])
    if args.pause < 0:
        parser.error("--pause must be 0 or more seconds")
    run_args = sys.argv[split + 1:]
    if any(a == "--out" or a.startswith("--out=") for a in run_args):
        parser.error("--out is chosen by this script")
    wall = {b: [] for b in args.builds}
    cpu = {b: [] for b in args.builds}
    phases = {b: {} for b in args.builds}
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.rounds):
            # Every other round in reverse order: a run leaves the host warmer for the next (freed huge pages,
            # caches), which favoured the second build by ~4% when two copies of one build were compared.
            order = list(enumerate(args.builds))
            for k, build in order if round_index % 2 == 0 else reversed(order):
                time.sleep(args.pause)
                w, c, p = run_once(build, run_args, Path(scratch) / str(k))
                wall[build].append(w)
                cpu[build].append(c)
                for name, seconds in p.items():
                    phases[build].setdefault(name, []).append(seconds)
    median = statistics.median
    reference = args.builds[0]
    for build in args.builds:
        line = (f"{build}: wall {median(wall[build]) * 1e3:.1f} ms, cpu {median(cpu[build]) * 1e3:.1f} ms, "
                + ", ".join(f"{name.replace('_seconds', '')} {median(v) * 1e3:.1f} ms"
                            for name, v in sorted(phases[build].items())))
        if build != reference:
            ratios = [w / r for w, r in zip(wall[build], wall[reference])]
            line += f"; wall / first build, median of {args.rounds} rounds: {median(ratios):.3f}"
            execute = phases[build].get("execute_seconds"), phases[reference].get("execute_seconds")
            if all(execute) and len(execute[0]) == len(execute[1]):
                # The execute phase alone: the import's first touches vary most from run to run on these VMs.
                line += f" (execute phase {median(e / r for e, r in zip(*execute)):.3f})"
        print(line, flush=True)


if __name__ == "__main__":
    main()
