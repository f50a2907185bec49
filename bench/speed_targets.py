#!/usr/bin/env python3
"""Simulation speed against PyTorch on the networks people run, with every figure the speed targets name:

- cold: the whole `ldmsim run M.onnx --threads 1 --no-trace` process against torch fp32's warm forward pass with
  `torch.set_num_threads(1)` (model in memory, median of 5 passes per round); rounds alternate the two sides;
- warm: the second and later `Session.run` of the same loaded model in one Python process (`ldmsim` module), same
  torch figure;
- the 2-layer LSTM's total host time (whole process);
- two host threads against one on ResNet-50 (whole process, and its execute phase; simulated cycles compared), and
  what this machine allows: two one-thread processes of the same run started together against one alone (2 x
  alone / together, the throughput of its CPUs on this work);
- peak RSS of each cold run (`/usr/bin/time -f %M`);
- host time per simulated DMA request (execute phase / requests, amortized over the networks) and the fixed cost
  of an empty launch on all 384 cores of sw26010pro, from the control core as `execute` launches and from the
  caller's thread, with and without a trace (bench/launch_bench, if built).

Needs Debian's python3-torch and python3-torchvision (too heavy for CI; docs/benchmarks.md has the results).
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/speed_targets.py --ldmsim build/tools/ldmsim
       [--out DIR] [--rounds 5] [--models resnet18 ...] [--arch sw26010pro] [--split auto|on|off] [--pause 3]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torchvision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from modern_networks import BertLayer, fp16_model  # noqa: E402
from torch_blas import blas_note  # noqa: E402


class Lstm2(torch.nn.Module):
    """The small recurrent model of the speed targets: 2 layers, hidden 95, 17 steps, batch 1."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(32, 95, num_layers=2)

    def forward(self, x):
        return self.rnn(x)[0]


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), (1, 3, 224, 224)),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), (1, 3, 224, 224)),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True),
                  (1, 3, 224, 224)),
    "bert_encoder": (BertLayer, (1, 16, 64)),
    "bert_base_layer": (lambda: BertLayer(hidden=768, heads=12, layers=1, seq=128), (1, 128, 768)),
    "lstm2_h95": (Lstm2, (17, 1, 32)),
}


def export(name, out):
    """The model (seeded fp16 weights), its ONNX file and input file; cached in `out`."""
    make, shape = MODELS[name]
    model = fp16_model(make, shape, 7)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(11)).half().float()
    onnx_file, x_file = out / f"{name}.onnx", out / f"{name}_input.npy"
    if not onnx_file.exists():
        torch.onnx.export(model, (x,), str(onnx_file), opset_version=17, input_names=["input"],
                          output_names=["output"])
        np.save(x_file, x.numpy())
    return model, x, onnx_file, x_file


def median(values):
    return statistics.median(values)


SPLIT = []  # extra `ldmsim run` arguments for --split (none: the tool's default)


def ldmsim_run(ldmsim, onnx_file, x_file, arch, threads, run_dir):
    """Whole-process wall seconds, peak RSS KiB, stats and host phases of one `ldmsim run`."""
    cmd = ["/usr/bin/time", "-f", "%M", ldmsim, "run", str(onnx_file), "--input", f"input={x_file}", "--arch",
           arch, "--no-trace", "--threads", str(threads), "--out", str(run_dir), *SPLIT]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"ldmsim failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    rss = int(proc.stderr.strip().splitlines()[-1])
    stats = json.loads((run_dir / "stats.json").read_text())
    phases = json.loads((run_dir / "host_times.json").read_text())["phases"]
    return wall, rss, stats, phases


def two_processes_seconds(ldmsim, onnx_file, x_file, arch, scratch):
    """Wall seconds of two one-thread `ldmsim run` processes of the same run started together, until both end."""
    procs = []
    start = time.perf_counter()
    for i in range(2):
        cmd = [ldmsim, "run", str(onnx_file), "--input", f"input={x_file}", "--arch", arch, "--no-trace",
               "--threads", "1", "--out", str(Path(scratch) / f"together{i}"), *SPLIT]
        err = Path(scratch) / f"together{i}.stderr"  # a file, not a pipe: neither process can block on its output
        with open(err, "w") as err_file:
            procs.append((cmd, err, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file)))
    for cmd, err, proc in procs:
        if proc.wait() != 0:
            sys.exit(f"ldmsim failed ({proc.returncode}): {' '.join(cmd)}\n{err.read_text()}")
    return time.perf_counter() - start


def torch_seconds(model, x):
    passes = []
    with torch.no_grad():
        for _ in range(5):
            start = time.perf_counter()
            model(x)
            passes.append(time.perf_counter() - start)
    return median(passes)


def warm_seconds(onnx_file, x_file, arch, runs, split):
    """Seconds of each `Session.run` after the first, in one process (a child, so the module's state is fresh)."""
    code = f"""
import json, time, numpy as np, ldmsim
session = ldmsim.Session(arch={arch!r}, threads=1, split={split!r})
model = session.load({str(onnx_file)!r})
x = np.load({str(x_file)!r})
session.run(model, {{"input": x}})
times = []
for _ in range({runs}):
    start = time.perf_counter()
    session.run(model, {{"input": x}})
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"warm runs failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def launch_cost_us(ldmsim):
    """The empty-launch benchmark's wall time per launch with one thread, from bench/launch_bench: {benchmark name:
    us}, a launch from the caller's thread (BM_LaunchJoinEmpty) and from the control core as `execute` launches
    (BM_LaunchJoinEmptyAsControl, and BM_LaunchJoinEmptyAsControlNoTrace on a machine that records no trace)."""
    binary = Path(ldmsim).resolve().parent.parent / "bench" / "launch_bench"
    if not binary.exists():
        return None
    proc = subprocess.run([str(binary), "--benchmark_format=json", "--benchmark_repetitions=5",
                           "--benchmark_report_aggregates_only=true"], capture_output=True, text=True, check=True)
    rows = json.loads(proc.stdout)["benchmarks"]
    costs = {}
    for row in rows:
        if row.get("aggregate_name") == "median" and "threads:1" in row["run_name"].replace("/", ":"):
            costs[row["run_name"].split("/")[0]] = row["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3}[row["time_unit"]]
    return costs or None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--out", default="speed-out")
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--split", choices=["auto", "on", "off"], default=None,
                        help="ldmsim run --split and Session(split=...); default: the tool's own default")
    parser.add_argument("--export-only", action="store_true")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds to sleep before each cold ldmsim run: a VM that hands freed memory back to its "
                             "host after ~2 s makes runs started after a pause (a user's usual case) pay the host's "
                             "faults on every first touch, which back-to-back runs do not (docs/benchmarks.md)")
    args = parser.parse_args()
    if args.pause < 0:
        parser.error("--pause must be 0 or more seconds")
    if args.split:
        SPLIT.extend(["--split", args.split])
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, total_requests, total_execute = [], 0, 0.0
    for name in args.models:
        model, x, onnx_file, x_file = export(name, out)
        if args.export_only:
            continue
        with tempfile.TemporaryDirectory() as scratch:
            run_dir = Path(scratch) / "run"
            with torch.no_grad():
                model(x)
            torch_s, cold_s, rss, execute_s = [], [], [], []
            for r in range(args.rounds):
                sides = ["torch", "ldmsim"] if r % 2 == 0 else ["ldmsim", "torch"]
                for side in sides:
                    if side == "torch":
                        torch_s.append(torch_seconds(model, x))
                    else:
                        time.sleep(args.pause)
                        wall, peak, stats, phases = ldmsim_run(args.ldmsim, onnx_file, x_file, args.arch, 1, run_dir)
                        cold_s.append(wall)
                        rss.append(peak)
                        execute_s.append(phases["execute_seconds"])
            requests = stats["dma_requests"]
            warm = warm_seconds(onnx_file, x_file, args.arch, args.warm_runs, args.split)
            row = {"model": name, "torch_ms": median(torch_s) * 1e3, "cold_ms": median(cold_s) * 1e3,
                   "execute_ms": median(execute_s) * 1e3, "warm_ms": median(warm) * 1e3,
                   "cold_ratio": median(cold_s) / median(torch_s), "warm_ratio": median(warm) / median(torch_s),
                   "peak_rss_mib": max(rss) / 1024, "requests": requests, "cycles": stats["cycles"],
                   "ns_per_request": median(execute_s) / requests * 1e9 if requests else None}
            if name.startswith("resnet50"):
                two, one, two_execute, one_execute, together = [], [], [], [], []
                for r in range(args.rounds):
                    for threads in ([1, 2] if r % 2 == 0 else [2, 1]):
                        time.sleep(args.pause)
                        wall, _, stats_t, phases_t = ldmsim_run(args.ldmsim, onnx_file, x_file, args.arch, threads,
                                                                run_dir)
                        (one if threads == 1 else two).append(wall)
                        (one_execute if threads == 1 else two_execute).append(phases_t["execute_seconds"])
                        if stats_t["cycles"] != stats["cycles"]:
                            sys.exit(f"{name}: {threads} threads simulate {stats_t['cycles']} cycles, not "
                                     f"{stats['cycles']}")
                    time.sleep(args.pause)
                    together.append(two_processes_seconds(args.ldmsim, onnx_file, x_file, args.arch, scratch))
                row["two_thread_speedup"] = median(one) / median(two)
                row["two_thread_execute_speedup"] = median(one_execute) / median(two_execute)
                row["two_process_ceiling"] = 2 * median(one) / median(together)
            total_requests += requests
            total_execute += median(execute_s)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.export_only:
        return
    print("\n| network | torch (1 thread) | ldmsim cold (whole process) | of which execute | cold ratio | warm run "
          "| warm ratio | peak RSS | DMA requests | execute per request |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['torch_ms']:.1f} ms | {r['cold_ms']:.1f} ms | {r['execute_ms']:.1f} ms | "
              f"{r['cold_ratio']:.1f}x | {r['warm_ms']:.1f} ms | {r['warm_ratio']:.1f}x | "
              f"{r['peak_rss_mib']:.0f} MiB | {r['requests']} | {r['ns_per_request']:.0f} ns |")
    for r in rows:  # after the table, which a line inside would cut in two
        if "two_thread_speedup" in r:
            print(f"\n{r['model']}: 2 threads {r['two_thread_speedup']:.2f}x faster than 1 (cycles identical; execute "
                  f"phase {r['two_thread_execute_speedup']:.2f}x); two 1-thread processes at once do "
                  f"{r['two_process_ceiling']:.2f}x the work of one in the same time")
    print(f"\nexecute host time per simulated DMA request, amortized: {total_execute / total_requests * 1e9:.0f} ns")
    print(blas_note())
    launch = launch_cost_us(args.ldmsim)
    if launch is not None:
        print(f"empty launch on all 384 cores of sw26010pro, 1 thread: "
              f"{launch.get('BM_LaunchJoinEmptyAsControl', float('nan')):.1f} us as execute launches (control core; "
              f"{launch.get('BM_LaunchJoinEmptyAsControlNoTrace', float('nan')):.1f} us without a trace, as with "
              f"--no-trace), {launch.get('BM_LaunchJoinEmpty', float('nan')):.1f} us from the caller's thread")


if __name__ == "__main__":
    main()
