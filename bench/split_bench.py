#!/usr/bin/env python3
"""Tag-directed splitting (docs/splitting.md): each workload or ONNX model run with `--split off` and `--split on`
on each arch, in one invocation. Prints a markdown table of simulated cycles, local and remote DMA bytes of both
runs, their ratios, and whether the outputs agree (bit-identical, or the largest difference relative to the
largest output when an inner-dimension split changes the summation order). Simulated numbers only
(deterministic); an ONNX model takes `--input NAME=FILE.npy` through MODEL.onnx:NAME=FILE.npy.

  /usr/bin/python3 bench/split_bench.py --ldmsim build/tools/ldmsim \
      bench/workloads/r50_conv3x3.json ... [--arch sw26010 sw26010pro] [--fusion off] [--packs]

With --packs, both runs are split and differ in --constant-packs (off, on): cycles, DMA requests, the cores that
fetched a pack and the packs' bytes.
"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np


def run(ldmsim, target, arch, split, fusion, out, packs="on"):
    model, *inputs = target.split(":")
    cmd = [ldmsim, "run", model, "--arch", arch, "--split", split, "--fusion", fusion, "--constant-packs", packs,
           "--no-trace", "--out", str(out)]
    for given in inputs:
        cmd += ["--input", given]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    stats = json.loads((out / "stats.json").read_text())
    outputs = {p.name: np.load(p).astype(np.float32) for p in sorted(out.glob("*.npy"))}
    return stats, outputs


def agreement(a, b):
    worst = 0.0
    for name, x in a.items():
        y = b[name]
        if not np.array_equal(x, y):
            scale = float(np.abs(x).max()) or 1.0
            worst = max(worst, float(np.abs(x - y).max()) / scale)
    return "identical" if worst == 0 else f"{100 * worst:.3f}% of max"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", required=True)
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--fusion", default="on", choices=["on", "off"])
    parser.add_argument("--packs", action="store_true",
                        help="compare split runs with --constant-packs off (\"off\") and on (\"on\") instead")
    parser.add_argument("workloads", nargs="+")
    args = parser.parse_args()
    if args.packs:
        print("| workload | arch | cycles packs off | cycles packs on | speedup | DMA requests off | DMA requests on | "
              "cores with a pack | pack bytes | outputs |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    else:
        print("| workload | arch | cycles off | cycles on | speedup | remote bytes off | remote bytes on | "
              "local bytes off | local bytes on | ops split | outputs |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.workloads:
            for arch in args.arch:
                runs = {}
                for side in ("off", "on"):
                    out = Path(tmp) / f"{Path(target.split(':')[0]).stem}-{arch}-{side}"
                    if args.packs:
                        runs[side] = run(args.ldmsim, target, arch, "on", args.fusion, out, side)
                    else:
                        runs[side] = run(args.ldmsim, target, arch, side, args.fusion, out)
                if args.packs:
                    print_packs(target, arch, runs)
                    continue
                (off, off_out), (on, on_out) = runs["off"], runs["on"]
                m_off, m_on = off["machine"], on["machine"]
                print(f"| {Path(target.split(':')[0]).stem} | {arch} | {off['cycles']} | {on['cycles']} | "
                      f"{off['cycles'] / on['cycles']:.2f}x | {m_off['dma_remote_bytes']} | {m_on['dma_remote_bytes']} | "
                      f"{m_off['dma_local_bytes']} | {m_on['dma_local_bytes']} | {on['split']['ops_split']} of "
                      f"{len(on['ops'])} | {agreement(off_out, on_out)} |", flush=True)


def print_packs(target, arch, runs):
    (off, off_out), (on, on_out) = runs["off"], runs["on"]
    packs = [op["constant_packs"] for op in on["ops"] if "constant_packs" in op]
    print(f"| {Path(target.split(':')[0]).stem} | {arch} | {off['cycles']} | {on['cycles']} | "
          f"{off['cycles'] / on['cycles']:.2f}x | {off['dma_requests']} | {on['dma_requests']} | "
          f"{sum(p['cores'] for p in packs)} | {sum(p['bytes'] for p in packs)} | {agreement(off_out, on_out)} |",
          flush=True)


if __name__ == "__main__":
    main()
