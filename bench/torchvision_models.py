#!/usr/bin/env python3
"""Real networks end to end: exports torchvision's ResNet-18, MobileNet-V2 and SqueezeNet 1.1 (weights=None,
seeded random weights rounded to fp16, eval mode) to ONNX, runs each with `ldmsim run` and compares the logits
with torch's fp32 output on the same fp16-rounded input. Also times both on the host (same thread count) and
reports ldmsim's peak host memory and the simulated time per layer. Two host-time ratios: the simulation (the
execute phase of `ldmsim run`, model already imported) against torch's warm forward pass, which is the issue's
measure, and the whole `ldmsim run` process (start, ONNX import, output files and exit included).

Needs Debian's python3-torch and python3-torchvision (too heavy for CI; docs/benchmarks.md has the results).
Usage: bench/torchvision_models.py --ldmsim build/tools/ldmsim [--out DIR] [--arch sw26010pro] [--models ...]
       [--threads 1] [--reps 3] [--fusion on|off]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torchvision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_blas import blas_note  # noqa: E402

# Logits agree within this fraction of the largest |logit|: every layer's output is stored as fp16 (relative
# error up to 2^-11 per rounding), and a ReLU network of ~50 layers compounds those roundings.
TOLERANCE = 0.02

MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(weights=None),
    "squeezenet1_1": lambda: torchvision.models.squeezenet1_1(weights=None),
}


def fp16_model(name, seed):
    """The model with seeded random weights, its batch-norm statistics calibrated, everything rounded to fp16.

    Calibration: with default init and batch norm's initial running statistics (mean 0, variance 1), MobileNet-V2's
    activations shrink block after block to logits near 1e-9, below fp16's smallest subnormal (6e-8), so any fp16
    machine returns zeros. One pass in training mode over a seeded random batch (cumulative averages) gives every
    batch norm the statistics of its actual input, as a trained network has, and logits of order 1."""
    torch.manual_seed(seed)
    model = MODELS[name]()
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.momentum = None
    model.train()
    with torch.no_grad():
        model(torch.randn(8, 3, 224, 224, generator=torch.Generator().manual_seed(seed + 2)))
    return round_to_fp16(model)


def round_to_fp16(model):
    """Puts `model` in eval mode with every float parameter and buffer rounded to fp16 (what ldmsim stores)."""
    model.eval()
    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            if tensor.is_floating_point():
                tensor.copy_(tensor.half().float())
    return model


def run_ldmsim(ldmsim, model_file, input_file, out, arch, threads, fusion="on"):
    """Runs ldmsim once; returns (wall seconds of the whole process, seconds of its execute phase, stdout)."""
    cmd = [ldmsim, "run", str(model_file), "--input", f"input={input_file}", "--arch", arch, "--no-trace",
           "--threads", str(threads), "--fusion", fusion, "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"ldmsim failed ({proc.returncode}): {' '.join(cmd)}\n{stdout}\n{stderr}")
    # The execute phase: staging, blocking searches and every launch, with the model already imported; what
    # torch's timed forward pass also leaves out is the process start, the model's load and the output files.
    execute = json.loads((out / "host_times.json").read_text())["phases"]["execute_seconds"]
    return wall, execute, stdout


def peak_rss_kib(ldmsim, model_file, input_file, out, arch, threads, fusion="on"):
    cmd = ["/usr/bin/time", "-f", "%M", ldmsim, "run", str(model_file), "--input", f"input={input_file}", "--arch",
           arch, "--no-trace", "--threads", str(threads), "--fusion", fusion, "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return int(proc.stderr.strip().splitlines()[-1])


def layer_rows(stats, clock_hz):
    rows = []
    for op in stats["ops"]:
        rows.append((op["name"], op["type"], op["cycles"], op["bound"], op["peak_fraction"], op["dma_bytes"]))
    return rows


def layer_tables(out, summary, archs):
    """Markdown: per model, one row per layer with cycles, bound and fraction of peak on every arch."""
    text = []
    for name in summary:
        stats = {arch: json.loads((out / f"{name}-{arch}" / "stats.json").read_text()) for arch in archs}
        text.append(f"#### {name}\n")
        text.append("| layer | type | " + " | ".join(f"{a} cycles | bound | peak" for a in archs) + " |")
        text.append("|---|---|" + "---:|---|---:|" * len(archs))
        for k, op in enumerate(stats[archs[0]]["ops"]):
            cells = []
            for arch in archs:
                o = stats[arch]["ops"][k]
                cells.append(f"{o['cycles']} | {o['bound']} | {100 * o['peak_fraction']:.1f}%")
            text.append(f"| {op['name']} | {op['type']} | " + " | ".join(cells) + " |")
        totals = [f"{stats[a]['cycles']} ({stats[a]['seconds'] * 1e3:.3f} ms) | | " for a in archs]
        text.append("| **total** | | " + " | ".join(totals) + " |\n")
    return "\n".join(text) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--out", default="torchvision-out")
    parser.add_argument("--arch", nargs="+", default=["sw26010pro", "sw26010"])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--fusion", choices=["on", "off"], default="on",
                        help="ldmsim run --fusion: fuse memory-intensive subgraphs (docs/fusion.md)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name in args.models:
        model = fp16_model(name, args.seed)
        generator = torch.Generator().manual_seed(args.seed + 1)
        x = torch.randn(1, 3, 224, 224, generator=generator).half().float()
        np.save(out / f"{name}_input.npy", x.numpy())
        with torch.no_grad():
            reference = model(x).numpy()

        def torch_seconds():
            """The median of three forward passes (warm: the model has run before)."""
            times = []
            with torch.no_grad():
                for _ in range(3):
                    start = time.perf_counter()
                    model(x)
                    times.append(time.perf_counter() - start)
            return statistics.median(times)

        model_file = out / f"{name}.onnx"
        torch.onnx.export(model, x, str(model_file), input_names=["input"], output_names=["logits"],
                          opset_version=13, do_constant_folding=True)
        result = {"archs": {}}
        for arch in args.arch:
            run_dir = out / f"{name}-{arch}"
            # Rounds of torch then ldmsim, side by side: this host's speed drifts, so ratios are taken per round.
            torch_times, runs = [], []
            for _ in range(args.reps if arch == args.arch[0] else 1):
                if arch == args.arch[0]:  # the other archs' runs are not timed against torch
                    torch_times.append(torch_seconds())
                runs.append(run_ldmsim(args.ldmsim, model_file, out / f"{name}_input.npy", run_dir, arch,
                                       args.threads, args.fusion))
            if arch == args.arch[0]:
                result["torch_seconds"] = statistics.median(torch_times)
                result["ratio_whole_process"] = statistics.median(r[0] / t for r, t in zip(runs, torch_times))
                result["ratio_execute"] = statistics.median(r[1] / t for r, t in zip(runs, torch_times))
            stats = json.loads((run_dir / "stats.json").read_text())
            logits = np.load(run_dir / "logits.npy").astype(np.float32)
            scale = float(np.abs(reference).max())
            error = float(np.abs(logits - reference).max())
            ops = stats["ops"]
            slowest = sorted(ops, key=lambda op: -op["cycles"])[:3]
            result["archs"][arch] = {
                "ldmsim_seconds": statistics.median(run[0] for run in runs),
                "ldmsim_execute_seconds": statistics.median(run[1] for run in runs),
                "simulated_seconds": stats["seconds"],
                "cycles": stats["cycles"],
                "max_abs_error": error,
                "max_abs_logit": scale,
                "relative_error": error / scale,
                "top1_agrees": bool(np.argmax(logits) == np.argmax(reference)),
                "layers": len(ops),
                "dma_bound_layers": sum(op["bound"] == "dma" for op in ops),
                "slowest": [{k: op[k] for k in ("name", "type", "cycles", "bound", "peak_fraction")}
                            for op in slowest],
                "flops": sum(op["flops"] for op in ops),
            }
            if arch == args.arch[0]:
                result["peak_rss_kib"] = peak_rss_kib(args.ldmsim, model_file, out / f"{name}_input.npy", run_dir,
                                                      arch, args.threads, args.fusion)
        summary[name] = result
        a = result["archs"][args.arch[0]]
        print(f"{name}: max |logit| {a['max_abs_logit']:.3g}, max error {a['max_abs_error']:.3g} "
              f"({100 * a['relative_error']:.2f}%), top-1 {'agrees' if a['top1_agrees'] else 'DIFFERS'}; "
              f"host {a['ldmsim_seconds']:.3f} s whole process, {a['ldmsim_execute_seconds'] * 1e3:.1f} ms executing, "
              f"vs torch {result['torch_seconds'] * 1e3:.1f} ms (medians of {args.reps} rounds; per-round ratios: "
              f"simulation {result['ratio_execute']:.1f}x, whole process {result['ratio_whole_process']:.1f}x), "
              f"peak RSS {result['peak_rss_kib'] / 1024:.0f} MiB",
              flush=True)
        for arch, a in result["archs"].items():
            print(f"  {arch}: {a['simulated_seconds'] * 1e3:.3f} ms simulated, {a['layers']} layers, "
                  f"{a['dma_bound_layers']} DMA-bound; slowest: "
                  + "; ".join(f"{s['name']} ({s['type']}) {s['cycles']} cycles {s['bound']}-bound "
                              f"{100 * s['peak_fraction']:.1f}% of peak" for s in a["slowest"]), flush=True)
    print(blas_note())
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "layers.md").write_text(layer_tables(out, summary, args.arch))
    failed = [n for n, r in summary.items() if r["archs"][args.arch[0]]["relative_error"] > TOLERANCE]
    if failed:
        sys.exit(f"logits differ from torch by more than {TOLERANCE:.0%} of the largest logit: {', '.join(failed)}")


if __name__ == "__main__":
    main()
