#!/usr/bin/env python3
"""Fits the placement estimate's calibration (graph/src/passes/placement_calibration.cpp) to simulated runs: runs
the benchmark networks of bench/placement_bench.py with `--split auto` on each arch, reads each op's roofline terms
(stats.json `placement.terms`: compute, local DMA, remote DMA, launch, exchange; uncalibrated) and simulated cycles,
and fits per arch, by least squares on log(simulated / estimated) with non-negative factors, the estimate

    cycles = launch_f * launch + max(compute_f * compute, local_f * local, remote_f * remote) + exchange_f * exchange

with one set of four factors per cost class (conv, vector-conv, fused, other; matrix ops keep the plain roofline) and one
exchange factor. Prints the fit as the C++ rows to paste, the median simulated / estimated ratio and the share of
ops within 25% before (as the run estimated) and after, and the same for each network left out of the fit.

Needs Debian's python3-torch, python3-torchvision and python3-scipy.
Usage: /usr/bin/python3 bench/placement_calibrate.py --ldmsim build/tools/ldmsim [--out DIR] [--arch ...]
       [--models ...] [--reuse] [--also DIR ...]   (--reuse: read the auto runs already in DIR; --also: fit the
       ops of earlier auto runs too, which chose other placements)
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, str(Path(__file__).resolve().parent))
import placement_bench  # noqa: E402

CLASSES = ("conv", "vector-conv", "fused", "other")


def ops_of(stats):
    """(class, terms, simulated, estimated) of every op the choice estimated and that took cycles."""
    for op in stats["ops"]:
        p = op.get("placement")
        if p and op["cycles"] > 0 and "terms" in p:
            yield p["cost_class"], p["terms"], op["cycles"], max(1, p["estimated_cycles"]), op["name"]


def predict(x, cls, t):
    if cls not in CLASSES:  # the plain roofline
        return t["launch"] + max(t["compute"], t["local"], t["remote"]) + t["exchange"]
    f = x[4 * CLASSES.index(cls):4 * CLASSES.index(cls) + 4]
    return f[3] * t["launch"] + max(f[0] * t["compute"], f[1] * t["local"], f[2] * t["remote"]) + x[16] * t[
        "exchange"]


def fit(rows):
    residuals = lambda x: [np.log(max(1e-9, predict(x, c, t)) / sim) for c, t, sim, _, _ in rows]  # noqa: E731
    # The max makes the fit non-smooth: start from several scales and keep the best.
    fits = [least_squares(residuals, np.full(17, start), bounds=(0, np.inf)) for start in (1.0, 2.0, 4.0)]
    return min(fits, key=lambda f: f.cost).x


def summary(ratios):
    r = np.array(ratios)
    return f"median {np.median(r):.2f}, within 25% {np.mean((r >= 0.8) & (r <= 4 / 3)):.0%} of {len(r)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--out", default="placement-out")
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--models", nargs="+", default=list(placement_bench.MODELS))
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--also", nargs="*", default=[],
                        help="directories of earlier auto runs (other placements) whose ops join the fit")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    input_file = placement_bench.make_input(out)
    for arch in args.arch:
        per_model = {}
        for name in args.models:
            run_dir = out / f"{name}-{arch}-auto"
            if args.reuse and (run_dir / "stats.json").exists():
                stats = json.loads((run_dir / "stats.json").read_text())
            else:
                model = placement_bench.export(name, out)
                stats, _ = placement_bench.run(args.ldmsim, model, input_file, arch, "auto", run_dir)
            per_model[name] = list(ops_of(stats))
            for other in args.also:
                earlier = Path(other) / f"{name}-{arch}-auto" / "stats.json"
                if earlier.exists():
                    per_model[name] += list(ops_of(json.loads(earlier.read_text())))
        rows = [r for rs in per_model.values() for r in rs]
        x = fit(rows)
        print(f"## {arch}")
        print(f"as run: {summary([sim / est for _, _, sim, est, _ in rows])}")
        print(f"fitted: {summary([sim / predict(x, c, t) for c, t, sim, _, _ in rows])}")
        for name in args.models:
            held = fit([r for m, rs in per_model.items() if m != name for r in rs])
            print(f"  {name} left out of the fit: {summary([sim / predict(held, c, t) for c, t, sim, _, _ in per_model[name]])}")
        rows_cpp = ", ".join("{" + ", ".join(f"{v:.3g}" for v in x[4 * i:4 * i + 4]) + "}" for i in range(4))
        print(f'  if (arch_name == "{arch}") return PlacementCalibration{{{rows_cpp}, {x[16]:.3g}}};')


if __name__ == "__main__":
    main()
