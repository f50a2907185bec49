#!/usr/bin/env python3
"""What stands between a run and a fraction of the arch's peak, layer by layer.

Runs an ONNX model (or reads a run directory's stats.json) and prints, for every op of the run, its simulated time
against three floors at the arch's peak rates (stats.json "roofline"): its flops at peak compute, the DMA bytes it
really moved at peak bandwidth, and the bytes it cannot avoid moving (each external input, weight and output read or
written once, fp16) at peak bandwidth. The ratios name the gap: re-reads (bytes moved over bytes needed) and
streaming (time over the time its own traffic needs at peak bandwidth). The totals say what fraction of peak the
whole network would reach if every op ran at each floor.

Needs Debian's python3-onnx (shapes come from its shape inference).
Usage: /usr/bin/python3 bench/peak_gap.py --ldmsim build/tools/ldmsim --model M.onnx --input input=X.npy
       [--arch sw26010pro] [--out DIR] [--run-dir DIR] [-- extra ldmsim run arguments]
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

import onnx
from onnx import shape_inference

FP16_BYTES = 2


def element_counts(model):
    """Elements of every named value (initializers, inputs, outputs, intermediates) with a static shape."""
    inferred = shape_inference.infer_shapes(model)
    counts = {}
    graph = inferred.graph
    for init in graph.initializer:
        n = 1
        for d in init.dims:
            n *= d
        counts[init.name] = n
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        dims = value.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            n = 1
            for d in dims:
                n *= d.dim_value
            counts.setdefault(value.name, n)
    return counts


def compulsory_bytes(nodes, counts, consumers, graph_outputs):
    """fp16 bytes an op made of `nodes` cannot avoid moving: inputs produced outside it, outputs used outside it."""
    produced = {out for node in nodes for out in node.output}
    names = {node.name for node in nodes}
    inputs = {name for node in nodes for name in node.input if name and name not in produced}
    outputs = {
        out
        for node in nodes
        for out in node.output
        if out in graph_outputs or any(user not in names for user in consumers.get(out, ()))
    }
    return FP16_BYTES * sum(counts.get(name, 0) for name in inputs | outputs)


def read_regular(path, what, max_bytes):
    """The bytes of `path`, or exit with a message naming it: not a regular file (a FIFO, /dev/zero, a directory),
    missing, or larger than `max_bytes`."""
    path = Path(path)
    if not path.is_file():
        sys.exit(f"peak_gap.py: {what} {path} is not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        sys.exit(f"peak_gap.py: {what} {path} is {size} bytes, more than {max_bytes}")
    return path.read_bytes()


def run(args):
    out = Path(args.out)
    command = [args.ldmsim, "run", args.model, "--arch", args.arch, "--threads", "1", "--no-trace", "--out", str(out)]
    for given in args.input:
        command += ["--input", given]
    subprocess.run(command + args.extra, check=True, stdout=subprocess.DEVNULL)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy, as for ldmsim run")
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--out", default="/tmp/peak-gap")
    parser.add_argument("--run-dir", help="read this run's stats.json instead of running the model")
    parser.add_argument("--target", type=float, default=0.20, help="the fraction of peak to measure against")
    parser.add_argument("extra", nargs="*", help="more ldmsim run arguments, after --")
    args = parser.parse_args()

    run_dir = Path(args.run_dir) if args.run_dir else run(args)
    try:
        stats = json.loads(read_regular(run_dir / "stats.json", "stats file", 1 << 30))
        for key in ("roofline", "ops", "seconds", "cycles", "workload", "arch"):
            if key not in stats:
                sys.exit(f"peak_gap.py: {run_dir / 'stats.json'} has no \"{key}\": not an ldmsim run's stats")
    except (ValueError, UnicodeDecodeError) as error:
        sys.exit(f"peak_gap.py: {run_dir / 'stats.json'} is not JSON: {error}")
    try:
        model = onnx.load_from_string(read_regular(args.model, "model", 4 << 30))
    except Exception as error:  # protobuf's DecodeError and onnx's own: the file is not an ONNX model
        sys.exit(f"peak_gap.py: {args.model} is not an ONNX model: {error}")
    counts = element_counts(model)
    by_name = {node.name: node for node in model.graph.node}
    consumers = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, set()).add(node.name)
    graph_outputs = {value.name for value in model.graph.output}

    peak_flops = stats["roofline"]["peak_flops_per_second"]
    peak_bytes = stats["roofline"]["peak_dma_bytes_per_second"]
    seconds = stats["seconds"]
    rows = []
    unknown = []  # ops whose needed bytes cannot be told: no ONNX node found, or a value without a static shape
    totals = {"flops": 0, "moved": 0, "needed": 0, "at_moved": 0.0, "at_needed": 0.0, "compute": 0.0}
    for op in stats["ops"]:
        if op["cycles"] == 0:
            continue
        layers = op.get("source_layers", [op["name"]])
        nodes = [by_name[name] for name in layers if name in by_name]
        values = {name for node in nodes for name in list(node.input) + list(node.output) if name}
        if len(nodes) != len(layers) or any(name not in counts for name in values):
            unknown.append(op["name"])
        needed = compulsory_bytes(nodes, counts, consumers, graph_outputs)
        op_seconds = op["seconds"]
        compute = op["flops"] / peak_flops
        at_moved = max(compute, op["dma_bytes"] / peak_bytes)
        at_needed = max(compute, needed / peak_bytes)
        totals["flops"] += op["flops"]
        totals["moved"] += op["dma_bytes"]
        totals["needed"] += needed
        totals["at_moved"] += at_moved
        totals["at_needed"] += at_needed
        totals["compute"] += compute
        rows.append((op, op_seconds, needed, at_moved, at_needed))

    def fraction(at):
        return totals["flops"] / (at * peak_flops) if at > 0 else 0.0

    print(f"{stats['workload']} on {stats['arch']}: {stats['cycles']:,} cycles ({seconds * 1e3:.3f} ms), "
          f"{totals['flops'] / 1e9:.2f} GFLOP, {fraction(seconds):.1%} of peak; {args.target:.0%} of peak is "
          f"{totals['flops'] / (args.target * peak_flops) * 1e3:.3f} ms")
    print(f"- every op at the DMA floor of the bytes it moved ({totals['moved'] / 1e6:.1f} MB): "
          f"{totals['at_moved'] * 1e3:.3f} ms, {fraction(totals['at_moved']):.1%} of peak")
    print(f"- every op at the floor of the bytes it needs ({totals['needed'] / 1e6:.1f} MB): "
          f"{totals['at_needed'] * 1e3:.3f} ms, {fraction(totals['at_needed']):.1%} of peak")
    print(f"- every op at peak compute: {totals['compute'] * 1e3:.3f} ms")
    if unknown:
        print(f"- needed bytes undercounted for {len(unknown)} op(s) (no ONNX node or no static shape): "
              f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}")
    print()
    print("| op | type | placement | cycles | share | peak | MB moved | MB needed | re-read | time / moved floor | "
          "floor |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for op, op_seconds, needed, at_moved, at_needed in rows:
        placement = op.get("placement", {})
        label = placement.get("placement", "") if isinstance(placement, dict) else ""
        floor = "compute" if op["flops"] / peak_flops >= needed / peak_bytes else "dma"
        reread = op["dma_bytes"] / needed if needed else float("nan")
        print(f"| {op['name'][-48:]} | {op['type']} | {label} | {op['cycles']:,} | {op_seconds / seconds:.1%} | "
              f"{op['peak_fraction']:.1%} | {op['dma_bytes'] / 1e6:.2f} | {needed / 1e6:.2f} | {reread:.1f}x | "
              f"{op_seconds / at_moved:.1f}x | {floor} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
