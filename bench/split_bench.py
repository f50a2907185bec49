#!/usr/bin/env python3
"""Tag-directed splitting (docs/splitting.md): each workload or ONNX model run with `--split off` and `--split on`
on each arch, in one invocation. Prints a markdown table of simulated cycles, local and remote DMA bytes of both
runs, their ratios, and whether the outputs agree (bit-identical, or the largest difference relative to the
largest output when an inner-dimension split changes the summation order). Simulated numbers only
(deterministic); an ONNX model takes `--input NAME=FILE.npy` through MODEL.onnx:NAME=FILE.npy.

  /usr/bin/python3 bench/split_bench.py --ldmsim build/tools/ldmsim \
      bench/workloads/r50_conv3x3.json ... [--arch sw26010 sw26010pro] [--fusion off]
"""
import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np


def run(ldmsim, target, arch, split, fusion, out):
    model, *inputs = target.split(":")
    cmd = [ldmsim, "run", model, "--arch", arch, "--split", split, "--fusion", fusion, "--no-trace", "--out", str(out)]
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
    parser.add_argument("workloads", nargs="+")
    args = parser.parse_args()
    print("| workload | arch | cycles off | cycles on | speedup | remote bytes off | remote bytes on | "
          "local bytes off | local bytes on | ops split | outputs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.workloads:
            for arch in args.arch:
                runs = {}
                for split in ("off", "on"):
                    out = Path(tmp) / f"{Path(target.split(':')[0]).stem}-{arch}-{split}"
                    runs[split] = run(args.ldmsim, target, arch, split, args.fusion, out)
                (off, off_out), (on, on_out) = runs["off"], runs["on"]
                m_off, m_on = off["machine"], on["machine"]
                print(f"| {Path(target.split(':')[0]).stem} | {arch} | {off['cycles']} | {on['cycles']} | "
                      f"{off['cycles'] / on['cycles']:.2f}x | {m_off['dma_remote_bytes']} | {m_on['dma_remote_bytes']} | "
                      f"{m_off['dma_local_bytes']} | {m_on['dma_local_bytes']} | {on['split']['ops_split']} of "
                      f"{len(on['ops'])} | {agreement(off_out, on_out)} |", flush=True)


if __name__ == "__main__":
    main()
