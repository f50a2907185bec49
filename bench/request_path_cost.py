#!/usr/bin/env python3
"""Host time per simulated DMA request, split by where it goes (docs/benchmarks.md), for models exported by
bench/speed_targets.py (NAME.onnx and NAME_input.npy in --models-dir):

- whole: the execute phase's host time (host_times.json) over the run's DMA requests (stats.json), as
  speed_targets.py prints it;
- request path: the share of the process's samples under `ldmsim::Core::dma` and `ldmsim::Core::wait` (issue,
  validation, the timing model, the engine's copy, the wait's bookkeeping; everything a kernel's request costs the
  simulator from the call to its return) times the process's CPU time, over the requests;
- of which the copy: the samples in a memory copy under the engine's execute, with the page faults it takes (the
  bytes moved between main memory and a local store).

The shares come from `perf record --call-graph dwarf` (Debian's linux-perf) over --runs runs of
`ldmsim run M.onnx --threads 1 --no-trace`; the CPU time from the same number of runs without perf (user + system
of the child, median), so that the sampling's own cost is not counted. A fiber switch inside a wait is not under
Core::wait in the sampled stack (the next fiber's frames are), so the path is the simulator's own work per request.
Usage: /usr/bin/python3 bench/request_path_cost.py --ldmsim build/tools/ldmsim --models-dir DIR [--runs 5]
       [--arch sw26010pro] [--models resnet18 ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from child_usage import run_child  # noqa: E402

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1", "googlenet",
          "bert_base_layer")
PATH_SYMBOLS = ("ldmsim::Core::dma", "ldmsim::Core::wait")
COPY_PREFIX = "ldmsim::DmaEngine::execute"


def command(ldmsim, model, x_file, arch, out):
    return [ldmsim, "run", str(model), "--input", f"input={x_file}", "--arch", arch, "--threads", "1",
            "--no-trace", "--out", str(out)]


def symbol(frame):
    """A frame's function name without its parameters or a compiler clone's suffix, as perf may print them."""
    return frame.split("(")[0].split(" [clone")[0].strip()


def sample_shares(perf_data, comm):
    """Fractions of the process's samples (a sample: its stack, leaf first; `comm`: the process's name as perf
    records it) under the request path, and under a memory copy the engine's execute called (with the page faults
    it took), from perf script (inlined frames folded into their callers)."""
    script = subprocess.run(["perf", "script", "-i", str(perf_data), "--no-inline", "-F", "comm,ip,sym"],
                            capture_output=True, text=True, check=True).stdout
    samples = path = copy = 0
    for block in script.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or lines[0].strip() != comm:
            continue
        frames = [symbol(line.split(None, 1)[1]) if len(line.split(None, 1)) == 2 else "" for line in lines[1:]]
        samples += 1
        if any(f in PATH_SYMBOLS for f in frames):
            path += 1
            engine = next((i for i, f in enumerate(frames) if f.startswith(COPY_PREFIX)), None)
            if engine is not None and any("memmove" in f or "memcpy" in f for f in frames[:engine]):
                copy += 1
    if samples == 0:
        raise SystemExit(f"{perf_data}: no samples of a process named {comm}")
    return path / samples, copy / samples


def require_kernel_samples():
    """The shares multiply user and system CPU time, so the samples must include the kernel's (page faults)."""
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    if os.geteuid() != 0 and paranoid.exists() and int(paranoid.read_text()) > 1:
        raise SystemExit("perf would sample user space only: run as root or set kernel.perf_event_paranoid to 1")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--models-dir", required=True, help="bench/speed_targets.py's --out")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--frequency", type=int, default=4000, help="perf's samples per second")
    args = parser.parse_args()
    require_kernel_samples()
    comm = Path(args.ldmsim).name[:15]  # perf records a process by the first 15 bytes of its name
    models_dir = Path(args.models_dir)
    print("| network | DMA requests | whole: execute / requests | request path / request | of which the copy |"
          " request path share of the process |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = {"requests": 0, "execute": 0.0, "path": 0.0, "copy": 0.0}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for name in args.models:
            model, x_file = models_dir / f"{name}.onnx", models_dir / f"{name}_input.npy"
            argv = command(args.ldmsim, model, x_file, args.arch, scratch / "out")
            cpu, execute = [], []
            for _ in range(args.runs):
                cpu.append(run_child(argv)[1])
                execute.append(json.loads((scratch / "out" / "host_times.json").read_text())["phases"]
                               ["execute_seconds"])
            requests = json.loads((scratch / "out" / "stats.json").read_text())["dma_requests"]
            perf_data = scratch / "perf.data"
            script = scratch / "runs.sh"
            script.write_text("#!/bin/sh\n" + "\n".join(" ".join(f"'{a}'" for a in argv) + " >/dev/null 2>&1"
                                                       for _ in range(args.runs)) + "\n")
            subprocess.run(["perf", "record", "-q", "-F", str(args.frequency), "--call-graph", "dwarf,16384", "-o",
                            str(perf_data), "sh", str(script)], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            path_share, copy_share = sample_shares(perf_data, comm)
            if path_share == 0:
                raise SystemExit(f"{name}: no samples under {' or '.join(PATH_SYMBOLS)} (a build without symbols?)")
            process_cpu = statistics.median(cpu)
            path, copy = path_share * process_cpu, copy_share * process_cpu
            whole = statistics.median(execute)
            totals["requests"] += requests
            totals["execute"] += whole
            totals["path"] += path
            totals["copy"] += copy
            print(f"| {name} | {requests} | {whole / requests * 1e9:.0f} ns | {path / requests * 1e9:.0f} ns "
                  f"| {copy / requests * 1e9:.0f} ns | {path_share * 100:.1f}% |", flush=True)
    n = totals["requests"]
    print(f"\namortized over the networks: whole {totals['execute'] / n * 1e9:.0f} ns per request, request path "
          f"{totals['path'] / n * 1e9:.0f} ns (the copy {totals['copy'] / n * 1e9:.0f} ns)")


if __name__ == "__main__":
    main()
