#!/usr/bin/env python3
"""The matrix engine's blocking choice (kernels/src/ops/matrix_multiply.cpp): convolutions and matmuls of ResNet-50
and split-sized pieces of them, each run on whole presets and on one core group of each, through the Python bindings
of one build, optionally beside the results of another build saved before. Prints a markdown table of each build's
simulated cycles, the blocking's own estimate and the blocking (dealt as, block rows x columns, k chunk), the ratio of
the builds' cycles, and their geometric mean per arch kind. Simulated numbers only (deterministic).

  PYTHONPATH=OLD/build/python /usr/bin/python3 bench/blocking_bench.py --save old.json
  PYTHONPATH=build/python /usr/bin/python3 bench/blocking_bench.py [--baseline old.json]
"""
import argparse
import json
import math
from pathlib import Path

import ldmsim

ARCHES = ["sw26010", "sw26010pro"]


def conv(n, c, h, w, k, r, stride=1, pad=0):
    return {"tensors": {"x": {"shape": [n, c, h, w], "init": {"normal": [0, 1], "seed": 1}},
                        "w": {"shape": [k, c, r, r], "init": {"uniform": [-0.05, 0.05], "seed": 2}}},
            "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"stride": stride, "pad": pad}}],
            "outputs": ["y"]}


def matmul(m, k, n):
    return {"tensors": {"a": {"shape": [m, k], "init": {"normal": [0, 1], "seed": 1}},
                        "b": {"shape": [k, n], "init": {"uniform": [-0.05, 0.05], "seed": 2}}},
            "ops": [{"type": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}], "outputs": ["y"]}


# Whole layers, and the row pieces --split on gives one group (4, 5 and 12 of 28 or 56 rows; 3 of 14).
CASES = {
    "conv1x1 128x28x28->512": conv(1, 128, 28, 28, 512, 1),
    "conv1x1 128x4x28->512": conv(1, 128, 4, 28, 512, 1),
    "conv1x1 128x5x28->512": conv(1, 128, 5, 28, 512, 1),
    "conv1x1 64x56x56->256": conv(1, 64, 56, 56, 256, 1),
    "conv1x1 256x56x56->64": conv(1, 256, 56, 56, 64, 1),
    "conv1x1 512x7x7->2048": conv(1, 512, 7, 7, 2048, 1),
    "conv1x1 1024x14x14->256": conv(1, 1024, 14, 14, 256, 1),
    "conv1x1 1024x3x14->256": conv(1, 1024, 3, 14, 256, 1),
    "conv3x3 64x56x56->64": conv(1, 64, 56, 56, 64, 3, 1, 1),
    "conv3x3 64x12x56->64": conv(1, 64, 12, 56, 64, 3, 1, 1),
    "conv3x3 128x28x28->128": conv(1, 128, 28, 28, 128, 3, 1, 1),
    "conv3x3 256x14x14->256": conv(1, 256, 14, 14, 256, 3, 1, 1),
    "conv3x3 batch 8 64x56x56->64": conv(8, 64, 56, 56, 64, 3, 1, 1),
    "conv7x7/2 3x224x224->64": conv(1, 3, 224, 224, 64, 7, 2, 3),
    "matmul 1x1024x1024": matmul(1, 1024, 1024),
    "matmul 1x2048x1000": matmul(1, 2048, 1000),
    "matmul 64x512x512": matmul(64, 512, 512),
    "matmul 200x300x100": matmul(200, 300, 100),
    "matmul 512x1024x1024": matmul(512, 1024, 1024),
}


def one_group_arch(preset):
    arch = ldmsim.arch(preset)
    arch["name"] = f"{preset}/1cg"
    arch["core_groups"]["count"] = 1
    return arch


def run(workload, arch):
    """(cycles, the blocking's estimate, the blocking as text) of one run."""
    session = ldmsim.Session(arch=arch)
    stats = session.run(session.load(workload)).stats
    blocking = stats["ops"][0]["metrics"]["blocking"]
    shape = f"{blocking['dealt_as']} {blocking['block_rows']}x{blocking['block_columns']} k{blocking['k_chunk']}"
    return stats["cycles"], blocking["estimated_cycles"], shape


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", help="results of another build, saved by its --save, to compare with")
    parser.add_argument("--save", help="write this build's results to this JSON file")
    args = parser.parse_args()
    baseline = json.loads(Path(args.baseline).read_text()) if args.baseline else None
    builds = 2 if baseline else 1
    header = "| case | arch |" + " cycles | estimate | blocking |" * builds
    print(header + (" new / baseline |" if baseline else ""))
    print("|---|---|" + "---:|---:|---|" * builds + ("---:|" if baseline else ""))
    ratios, saved = {}, {}
    arches = [(a, a, "whole") for a in ARCHES]
    arches += [(f"{a} one group", one_group_arch(a), "one group") for a in ARCHES]
    for name, workload in CASES.items():
        for label, arch, kind in arches:
            key = f"{name} | {label}"
            saved[key] = run({"name": name.replace(" ", "_"), **workload}, arch)
            results = ([baseline[key]] if baseline else []) + [saved[key]]
            row = f"| {name} | {label} |" + "".join(f" {c} | {estimate} | {shape} |" for c, estimate, shape in results)
            if baseline:
                ratio = results[1][0] / results[0][0]
                ratios.setdefault(kind, []).append(ratio)
                row += f" {ratio:.2f} |"
            print(row, flush=True)
    if args.save:
        Path(args.save).write_text(json.dumps(saved, indent=1) + "\n")
    for kind, values in ratios.items():
        mean = math.exp(sum(math.log(r) for r in values) / len(values))
        print(f"\ngeometric mean new / baseline, {kind}: {mean:.3f} over {len(values)} runs "
              f"(best {min(values):.2f}, worst {max(values):.2f})")


if __name__ == "__main__":
    main()
