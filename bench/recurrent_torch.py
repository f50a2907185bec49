#!/usr/bin/env python3
"""PyTorch's LSTM and GRU through ONNX on the simulated machine: a 2-layer LSTM (hidden 512, input 512, seq 64,
batch 8; the issue's host-time case) and a bidirectional GRU (hidden 256, batch 1), with seeded random weights
rounded to fp16, exported with torch.onnx (opset 13) and run with `ldmsim run`. Compares ldmsim's outputs with
torch's fp32 outputs on the same fp16-rounded input, and times both on the host with the same thread count
(medians of --reps runs; ldmsim's time is the whole `ldmsim run` process: import, staging, the EP/VP search and
the simulation). Also prints the simulated time and each layer's EP/VP choice.

Needs Debian's python3-torch (too heavy for CI; docs/benchmarks.md has the results).
Usage: bench/recurrent_torch.py --ldmsim build/tools/ldmsim [--out DIR] [--arch sw26010pro] [--threads 2] [--reps 3]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_blas import blas_note  # noqa: E402

# Outputs agree within this absolute error: every value is a squashed activation in (-1, 1) stored as fp16
# (2^-11 relative) between layers, and the state is carried in fp32 on both sides.
TOLERANCE = 5e-3


class Lstm2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(512, 512, num_layers=2)

    def forward(self, x):
        return self.rnn(x)[0]


class BiGru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(128, 256, bidirectional=True)

    def forward(self, x):
        y, h = self.rnn(x)
        return y, h


CASES = {
    "lstm2_h512_seq64_b8": (Lstm2, (64, 8, 512)),
    "bigru_h256_seq32_b1": (BiGru, (32, 1, 128)),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ldmsim", required=True)
    parser.add_argument("--out", default="/tmp/ldmsim-recurrent")
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    for name, (make, shape) in CASES.items():
        model = make().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.half().float())
            x = torch.randn(*shape).half().float()
            expected = model(x)
            expected = expected if isinstance(expected, tuple) else (expected,)
            times = []
            for _ in range(args.reps):
                start = time.perf_counter()
                model(x)
                times.append(time.perf_counter() - start)
        names = [f"out{i}" for i in range(len(expected))]
        onnx_file = out / f"{name}.onnx"
        torch.onnx.export(model, (x,), str(onnx_file), opset_version=13, input_names=["x"], output_names=names)
        np.save(out / f"{name}_x.npy", x.numpy())
        run_dir = out / name
        cmd = [args.ldmsim, "run", str(onnx_file), "--input", f"x={out / f'{name}_x.npy'}", "--arch", args.arch,
               "--no-trace", "--explain", "--threads", str(args.threads), "--out", str(run_dir)]
        walls = []
        for _ in range(args.reps):
            start = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            if proc.returncode != 0:
                sys.exit(f"ldmsim failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
        worst = 0.0
        for i, n in enumerate(names):
            got = np.load(run_dir / f"{n}.npy").astype(np.float32)
            worst = max(worst, float(np.abs(got - expected[i].numpy()).max()))
        stats = json.loads((run_dir / "stats.json").read_text())
        chosen = [line.strip() for line in proc.stdout.splitlines() if "<- chosen" in line]
        print(f"{name} on {args.arch}: max |ldmsim - torch| {worst:.2e} (tolerance {TOLERANCE}); "
              f"host {statistics.median(walls):.2f} s vs torch {statistics.median(times) * 1e3:.1f} ms "
              f"({statistics.median(walls) / statistics.median(times):.0f}x, {args.threads} threads); "
              f"simulated {stats['seconds'] * 1e3:.3f} ms")
        for line in chosen:
            print(f"  {line}")
        if worst > TOLERANCE:
            sys.exit(f"{name}: outputs differ from torch by {worst}")
    print(blas_note())


if __name__ == "__main__":
    main()
