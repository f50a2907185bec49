#!/usr/bin/env python3
"""Fit the fcfs-channels DMA timing parameters of an arch to a measured STREAM copy curve.

The free parameters are the three that the 64-core copy curve determines (request_overhead_cycles,
realign_cycles, bytes_per_cycle); the others (issue_cycles, channels, latency_cycles) are fixed beforehand from
physical reasoning (docs/timing-model.md) because the saturated 64-core curve barely depends on them. Every
evaluation runs the real simulator through the Python module's `ldmsim.stream_sweep` (what `ldmsim bench stream
--sweep` runs) on the arch as a dict, minimising the sum of squared log errors with Nelder-Mead.

    PYTHONPATH=build/python /usr/bin/python3 scripts/fit_calibration.py [--arch sw26010] [--data FILE] [--write]

--write stores the fitted values (rounded) into sim/presets/<arch>.json's dma.timing.
"""
import argparse
import json
import math
import os
import sys

import ldmsim

FREE = ("request_overhead_cycles", "realign_cycles", "bytes_per_cycle")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sweep(arch_tree, data):
    """Returns [(block_bytes, simulated, measured)] for an arch tree."""
    return [(r["block_bytes"], r["MBps"], r["measured_MBps"]) for r in ldmsim.stream_sweep(arch_tree, data=data)]


def nelder_mead(f, x0, steps, iterations=80):
    """Minimises f from x0 (a list); steps are the initial simplex offsets."""
    simplex = [list(x0)] + [[x + (s if i == j else 0) for j, x in enumerate(x0)] for i, s in enumerate(steps)]
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = sorted(range(len(simplex)), key=lambda i: values[i])
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        centroid = [sum(p[j] for p in simplex[:-1]) / (len(simplex) - 1) for j in range(len(x0))]
        worst = simplex[-1]
        reflect = [c + (c - w) for c, w in zip(centroid, worst)]
        fr = f(reflect)
        if fr < values[0]:
            expand = [c + 2 * (c - w) for c, w in zip(centroid, worst)]
            fe = f(expand)
            simplex[-1], values[-1] = (expand, fe) if fe < fr else (reflect, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflect, fr
        else:
            contract = [c + 0.5 * (w - c) for c, w in zip(centroid, worst)]
            fc = f(contract)
            if fc < values[-1]:
                simplex[-1], values[-1] = contract, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (p - b) for b, p in zip(best, q)] for q in simplex[1:]]
                values = [values[0]] + [f(p) for p in simplex[1:]]
        if max(values) - min(values) < 1e-7:
            break
    i = min(range(len(simplex)), key=lambda k: values[k])
    return simplex[i], values[i]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="sw26010", help="preset name under sim/presets")
    parser.add_argument("--data", default=None, help="measurement CSV (default: the built-in SW26010 copy curve)")
    parser.add_argument("--write", action="store_true", help="store the fit in sim/presets/<arch>.json")
    args = parser.parse_args()

    preset_path = os.path.join(REPO, "sim", "presets", args.arch + ".json")
    with open(preset_path) as f:
        tree = json.load(f)
    timing = tree["dma"]["timing"]
    if timing.get("model") != "fcfs-channels":
        sys.exit(f"{preset_path}: dma.timing.model must be fcfs-channels")

    def with_params(x):
        t = json.loads(json.dumps(tree))
        for key, value in zip(FREE, x):
            t["dma"]["timing"][key] = value
        return t

    cache = {}

    def objective(x):
        if min(x) <= 0:
            return 1e9
        key = tuple(round(v, 4) for v in x)
        if key not in cache:
            rows = sweep(with_params(x), args.data)
            cache[key] = sum(math.log(sim / meas) ** 2 for _, sim, meas in rows)
        return cache[key]

    x0 = [float(timing[k]) for k in FREE]
    best, value = nelder_mead(objective, x0, [0.15 * v for v in x0])
    rounded = [round(best[0]), round(best[1]), round(best[2], 2)]
    rows = sweep(with_params(rounded), args.data)
    print(f"fixed: issue_cycles={timing.get('issue_cycles')} channels={timing.get('channels')} "
          f"latency_cycles={timing.get('latency_cycles')}; {len(cache)} simulated sweeps")
    print("fitted: " + ", ".join(f"{k}={v}" for k, v in zip(FREE, rounded)))
    print(f"{'block_bytes':>11}  {'simulated':>10}  {'measured':>10}  {'error':>7}")
    for block, sim, meas in rows:
        print(f"{block:>11}  {sim:>10.1f}  {meas:>10.1f}  {100 * (sim / meas - 1):>+6.1f}%")
    print(f"rms log error {math.sqrt(value / len(rows)):.4f}; "
          f"largest |error| {100 * max(abs(s / m - 1) for _, s, m in rows):.1f}%")
    if args.write:
        for key, value in zip(FREE, rounded):
            timing[key] = value
        text = open(preset_path).read()
        start = text.index('"timing": {')
        end = text.index("}", start) + 1
        body = ",\n".join(f'      "{k}": {json.dumps(v)}' for k, v in timing.items())
        text = text[:start] + '"timing": {\n' + body + "\n    }" + text[end:]
        with open(preset_path, "w") as f:
            f.write(text)
        print(f"wrote {preset_path}")


if __name__ == "__main__":
    main()
