#!/usr/bin/env python3
"""Fits the placement estimate's calibration (graph/src/passes/placement_calibration.cpp) to simulated runs: runs
the benchmark networks of bench/placement_bench.py, and a sweep of unfused element-wise ops from 16 KiB to 4 MiB
(SWEEP_SHAPES), with `--split auto` and `--split on` on each arch (the rule's
placements, which the choice seldom takes, so that the fit is not made only of placements the estimate already
favoured), reads each op's roofline terms (stats.json `placement.terms`: compute, local DMA, remote DMA, launch,
exchange; uncalibrated) and simulated cycles, and fits per arch, by least squares on log(simulated / estimated) with
non-negative factors, the estimate

    cycles = launch_f * launch + max(compute_f * compute, local_f * local, remote_f * remote) + exchange_f * exchange

with one set of four factors per cost class (conv, conv-1x1, vector-conv, fused, pool, concat, other, elementwise; matrix and attention ops keep their own estimates, unscaled) and one
exchange factor. Prints the fit as the C++ rows to paste, the median simulated / estimated ratio and the share of
ops within 25% before (as the run estimated) and after, and the same for each network left out of the fit.

Needs Debian's python3-torch, python3-torchvision and python3-scipy.
Usage: /usr/bin/python3 bench/placement_calibrate.py --ldmsim build/tools/ldmsim [--out DIR] [--arch ...]
       [--models ...] [--modes auto on] [--reuse] [--also DIR ...] [--classes pool concat]   (--modes: the
       placements whose runs join the fit; --reuse: read the runs already in DIR; --also: fit the ops of earlier
       auto runs too, which chose other placements; --classes: fit only those classes, the others' factors and the
       exchange factor staying as graph/src/passes/placement_calibration.cpp has them)
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, str(Path(__file__).resolve().parent))
import placement_bench  # noqa: E402

CLASSES = ("conv", "conv-1x1", "vector-conv", "fused", "pool", "concat", "other", "elementwise")
EXCHANGE = 4 * len(CLASSES)  # the index of the exchange factor


def ops_of(stats):
    """(class, terms, simulated, estimated) of every op the run estimated and that took cycles."""
    for op in stats["ops"]:
        p = op.get("placement")
        if p and op["cycles"] > 0 and "terms" in p:
            yield p["cost_class"], p["terms"], op["cycles"], max(1, p["estimated_cycles"]), op["name"]


# Element-wise ops of the sizes the networks lack: outside fused kernels their element-wise ops are a few small
# ones (EfficientNet-B0's squeeze-excitation sigmoids and scales), which alone leave the class's DMA factors
# undetermined. Each size runs an add, a relu, a sigmoid and a mul by a per-channel [1, C, 1, 1], unfused.
SWEEP_SHAPES = ([1, 8, 32, 32], [1, 32, 32, 32], [1, 32, 64, 64], [1, 64, 64, 128], [1, 128, 128, 128])
SWEEP = "element-wise sweep"


def sweep_workloads(out):
    """The sweep's workload JSON files, written once in `out`."""
    paths = []
    for shape in SWEEP_SHAPES:
        path = out / f"elementwise_{'x'.join(map(str, shape))}.json"
        if not path.exists():
            tensor = lambda dims, seed: {"shape": dims, "init": {"normal": [0, 1], "seed": seed}}  # noqa: E731
            workload = {
                "name": path.stem,
                "tensors": {"x": tensor(shape, 1), "y": tensor(shape, 2), "c": tensor([1, shape[1], 1, 1], 3)},
                "ops": [{"type": "add", "inputs": ["x", "y"], "outputs": ["a"]},
                        {"type": "relu", "inputs": ["a"], "outputs": ["r"]},
                        {"type": "sigmoid", "inputs": ["r"], "outputs": ["s"]},
                        {"type": "mul", "inputs": ["s", "c"], "outputs": ["m"]}],
                "outputs": ["m"],
            }
            path.write_text(json.dumps(workload))
        paths.append(path)
    return paths


def run_workload(ldmsim, workload, arch, mode, out):
    """Runs a workload JSON unfused; returns its stats."""
    subprocess.run([ldmsim, "run", str(workload), "--arch", arch, "--split", mode, "--fusion", "off", "--no-trace",
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "stats.json").read_text())


def predict(x, cls, t):
    if cls not in CLASSES:  # the plain roofline
        return t["launch"] + max(t["compute"], t["local"], t["remote"]) + t["exchange"]
    f = x[4 * CLASSES.index(cls):4 * CLASSES.index(cls) + 4]
    return (f[3] * t["launch"] + max(f[0] * t["compute"], f[1] * t["local"], f[2] * t["remote"]) +
            x[EXCHANGE] * t["exchange"])


def table_row(arch):
    """Every value of placement_calibration.cpp's row for `arch`: the classes' factors, the exchange factor, and a
    reduction tree level's link share (measured from traces, not fitted here)."""
    source = (Path(__file__).resolve().parent.parent / "graph/src/passes/placement_calibration.cpp").read_text()
    match = re.search(r'arch_name == "' + re.escape(arch) + r'"\)\s*return PlacementCalibration\{(.*?)\};', source,
                      re.S)
    if not match:
        sys.exit(f"placement_calibration.cpp has no row for {arch}")
    values = [float(v) for v in re.findall(r"[-+0-9.e]+", match.group(1))]
    if len(values) != EXCHANGE + 2:
        sys.exit(f"placement_calibration.cpp's row for {arch} has {len(values)} values, not {EXCHANGE + 2}")
    return values


def table_factors(arch):
    """The factors placement_calibration.cpp holds for `arch`, in fit order (classes' four each, then exchange)."""
    return np.array(table_row(arch)[:EXCHANGE + 1])


def fit(rows, fixed=None, classes=CLASSES):
    """Every factor, or with `fixed` (the table's factors) only those of `classes`, over their ops alone."""
    free = [i for k, c in enumerate(CLASSES) if c in classes for i in range(4 * k, 4 * k + 4)]
    if fixed is None:
        free.append(EXCHANGE)
    else:
        rows = [r for r in rows if r[0] in classes]
    base = np.ones(EXCHANGE + 1) if fixed is None else fixed.copy()

    def full(y):
        x = base.copy()
        x[free] = y
        return x

    residuals = lambda y: [np.log(max(1e-9, predict(full(y), c, t)) / sim) for c, t, sim, _, _ in rows]  # noqa: E731
    # The max makes the fit non-smooth: start from several scales and keep the best.
    fits = [least_squares(residuals, np.full(len(free), start), bounds=(0, np.inf)) for start in (1.0, 2.0, 4.0)]
    return full(min(fits, key=lambda f: f.cost).x)


def summary(ratios):
    r = np.array(ratios)
    return f"median {np.median(r):.2f}, within 25% {np.mean((r >= 0.8) & (r <= 4 / 3)):.0%} of {len(r)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--out", default="placement-out")
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--models", nargs="+", default=list(placement_bench.MODELS))
    parser.add_argument("--modes", nargs="+", choices=("auto", "on"), default=["auto", "on"],
                        help="the --split modes whose runs join the fit (both: the rule's pieces and the choice's)")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--also", nargs="*", default=[],
                        help="directories of earlier auto runs (other placements) whose ops join the fit")
    parser.add_argument("--classes", nargs="+", choices=CLASSES,
                        help="fit only these classes' factors, over their ops; the rest stay as the table has them")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for arch in args.arch:
        per_model = {}
        for name in args.models:
            per_model[name] = []
            for mode in args.modes:
                run_dir = out / f"{name}-{arch}-{mode}"
                if args.reuse and (run_dir / "stats.json").exists():
                    stats = json.loads((run_dir / "stats.json").read_text())
                else:
                    model = placement_bench.export(name, out)
                    stats, _ = placement_bench.run(args.ldmsim, model, placement_bench.input_for(name, out), arch,
                                                   mode, run_dir)
                per_model[name] += list(ops_of(stats))
            for other in args.also:
                earlier = Path(other) / f"{name}-{arch}-auto" / "stats.json"
                if earlier.exists():
                    per_model[name] += list(ops_of(json.loads(earlier.read_text())))
        per_model[SWEEP] = []
        for workload in sweep_workloads(out) if not args.classes or "elementwise" in args.classes else []:
            for mode in args.modes:
                run_dir = out / f"{workload.stem}-{arch}-{mode}"
                if args.reuse and (run_dir / "stats.json").exists():
                    stats = json.loads((run_dir / "stats.json").read_text())
                else:
                    stats = run_workload(args.ldmsim, workload, arch, mode, run_dir)
                per_model[SWEEP] += list(ops_of(stats))
        rows = [r for rs in per_model.values() for r in rs]
        fixed = table_factors(arch) if args.classes else None
        classes = args.classes or CLASSES
        x = fit(rows, fixed, classes)
        print(f"## {arch}")
        print(f"as run: {summary([sim / est for _, _, sim, est, _ in rows])}")
        print(f"fitted: {summary([sim / predict(x, c, t) for c, t, sim, _, _ in rows])}")
        for name in [m for m in per_model if per_model[m]]:
            held = fit([r for m, rs in per_model.items() if m != name for r in rs], fixed, classes)
            print(f"  {name} left out of the fit: {summary([sim / predict(held, c, t) for c, t, sim, _, _ in per_model[name]])}")
        rows_cpp = ", ".join("{" + ", ".join(f"{v:.3g}" for v in x[4 * i:4 * i + 4]) + "}" for i in range(len(CLASSES)))
        print(f'  if (arch_name == "{arch}") return PlacementCalibration{{{rows_cpp}, {x[EXCHANGE]:.3g}, '
              f'{table_row(arch)[-1]:.3g}}};')


if __name__ == "__main__":
    main()
