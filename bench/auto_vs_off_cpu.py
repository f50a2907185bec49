#!/usr/bin/env python3
"""Host CPU of `--split auto` against `--split off` (docs/benchmarks.md): one ldmsim build runs each network in
both modes alternately (the order reversed every other round), each run timed whole (user + system of the child);
prints per network and arch the median CPU seconds of each mode, the median of the auto / off pair ratios, and the
median `placement_host_seconds` (the cost-aware search) from the auto runs' host_times.json.

The models are bench/placement_bench.py's exports (run it once with the same --models and --out to make them).
Usage: /usr/bin/python3 bench/auto_vs_off_cpu.py --ldmsim build/tools/ldmsim --models-dir DIR [--rounds 5]
       [--arch sw26010 sw26010pro] [--models resnet18 ...]
"""
import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from child_usage import run_child  # noqa: E402

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1")


def run(ldmsim, model, input_file, arch, mode, out):
    """CPU seconds (user + system) of one whole run."""
    return run_child([ldmsim, "run", model, "--input", f"input={input_file}", "--arch", arch, "--split", mode,
                      "--threads", "1", "--no-trace", "--out", out])[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--models-dir", required=True, help="bench/placement_bench.py's --out (NAME.onnx, input.npy)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    args = parser.parse_args()
    models_dir = Path(args.models_dir)
    input_file = models_dir / "input.npy"
    print("| network | arch | off CPU s | auto CPU s | auto / off | placement search |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models:
            model = models_dir / f"{name}.onnx"
            for arch in args.arch:
                cpu = {"off": [], "auto": []}
                placement = []
                for r in range(args.rounds):
                    for mode in ("off", "auto") if r % 2 == 0 else ("auto", "off"):
                        out = Path(scratch) / mode
                        cpu[mode].append(run(args.ldmsim, model, input_file, arch, mode, out))
                        if mode == "auto":
                            times = json.loads((out / "host_times.json").read_text())
                            placement.append(times["placement_host_seconds"])
                ratio = statistics.median(a / o for a, o in zip(cpu["auto"], cpu["off"]))
                print(f"| {name} | {arch} | {statistics.median(cpu['off']):.3f} | {statistics.median(cpu['auto']):.3f} "
                      f"| {ratio:.2f} | {statistics.median(placement) * 1000:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
