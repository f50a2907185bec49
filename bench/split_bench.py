#!/usr/bin/env python3
"""Tag-directed splitting (docs/splitting.md): each workload or ONNX model run with the split off and on on each
arch, in one invocation, through the Python bindings. Prints a markdown table of simulated cycles, local and remote
DMA bytes of both runs, their ratios, and whether the outputs agree (bit-identical, or the largest difference
relative to the largest output when an inner-dimension split changes the summation order). Simulated numbers only
(deterministic); an ONNX model takes its input files as MODEL.onnx:NAME=FILE.npy.

  PYTHONPATH=build/python /usr/bin/python3 bench/split_bench.py \
      bench/workloads/r50_conv3x3.json ... [--arch sw26010 sw26010pro] [--fusion off] [--packs]

With --packs, both runs are split and differ in their constant packs (off, on): cycles, DMA requests, the cores
that fetched a pack and the packs' bytes.
"""
import argparse
from pathlib import Path

import numpy as np

import ldmsim


def run(target, arch, split, fusion, packs=True):
    """(stats, outputs as float32 arrays) of one run of `target` (MODEL[:NAME=FILE...])."""
    model, *inputs = target.split(":")
    session = ldmsim.Session(arch=arch, split=split, fusion=fusion == "on", constant_packs=packs)
    result = session.run(session.load(model, input_files=dict(given.partition("=")[::2] for given in inputs)))
    return result.stats, {name: np.asarray(values, dtype=np.float32) for name, values in result.outputs.items()}


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
    for target in args.workloads:
        for arch in args.arch:
            runs = {}
            for side in ("off", "on"):
                if args.packs:
                    runs[side] = run(target, arch, True, args.fusion, packs=side == "on")
                else:
                    runs[side] = run(target, arch, side == "on", args.fusion)
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
