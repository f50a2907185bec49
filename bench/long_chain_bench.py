#!/usr/bin/env python3
"""Host time of `ldmsim` on chains of N relu ops on a [4] tensor, as a workload and as an ONNX model, for several N.

Every pass over the graph (fusion's grouping, layouts, liveness, schedule, --dump-graph, the ONNX import) must be
O(n log n) or better in the number of ops, so the time per op must not grow with N. The script prints the seconds
and the microseconds per op of each command at each N, and exits 1 when the largest N takes longer than --budget
seconds for any command (the check of docs/benchmarks.md "Long chains"):

  python3 bench/long_chain_bench.py build/tools/ldmsim                     # N = 25k, 50k, 100k; budget 120 s
  python3 bench/long_chain_bench.py build/tools/ldmsim --ops 1000 2000 --budget 10

Commands: `run` (fusion on: the chain becomes one fused kernel), `run --fusion off` (one launch per op),
`run --dump-graph` (fusion on, the dump to /dev/null), `plan`, and `run` of the ONNX model (written here in
protobuf's wire format, no python3-onnx needed). Runs use --arch tiny, --no-trace and --threads 1.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile


def cpu_seconds_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def workload(n):
    ops = [{"type": "relu", "inputs": ["x" if i == 0 else f"t{i - 1}"], "outputs": [f"t{i}"]} for i in range(n)]
    return {"name": f"chain{n}", "tensors": {"x": {"shape": [4], "init": {"uniform": [-1, 1], "seed": 1}}},
            "ops": ops, "outputs": [f"t{n - 1}"]}


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def onnx_chain(n):
    """ModelProto (ir_version 8, opset 13) of y = Relu(...Relu(x)) with x, y of shape [1, 4]."""
    def value_info(name):
        shape = field(1, varint(1 << 3) + varint(1)) + field(1, varint(1 << 3) + varint(4))
        return field(1, name.encode()) + field(2, field(1, varint(1 << 3) + varint(1) + field(2, shape)))
    nodes = b"".join(
        field(1, field(1, (b"x" if i == 0 else f"t{i - 1}".encode())) + field(2, f"t{i}".encode()) + field(4, b"Relu"))
        for i in range(n))
    graph = nodes + field(2, b"g") + field(11, value_info("x")) + field(12, value_info(f"t{n - 1}"))
    return varint(1 << 3) + varint(8) + field(8, varint(2 << 3) + varint(13)) + field(7, graph)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", help="the ldmsim executable")
    parser.add_argument("--ops", type=int, nargs="+", default=[25000, 50000, 100000])
    parser.add_argument("--budget", type=float, default=120.0, help="seconds any command may take at the largest N")
    args = parser.parse_args()
    over = []
    with tempfile.TemporaryDirectory() as tmp:
        print("| ops | command | CPU s | us per op |")
        print("|---:|---|---:|---:|")
        for n in args.ops:
            w = os.path.join(tmp, f"chain{n}.json")
            with open(w, "w") as f:
                json.dump(workload(n), f)
            m = os.path.join(tmp, f"chain{n}.onnx")
            with open(m, "wb") as f:
                f.write(onnx_chain(n))
            out = os.path.join(tmp, "out")
            common = ["--arch", "tiny", "--no-trace", "--threads", "1", "--out", out]
            commands = {
                "run": [args.binary, "run", w, *common],
                "run --fusion off": [args.binary, "run", w, "--fusion", "off", *common],
                "run --dump-graph": [args.binary, "run", w, "--dump-graph", *common],
                "plan": [args.binary, "plan", w, "--arch", "tiny"],
                "run MODEL.onnx": [args.binary, "run", m, *common],
            }
            for name, cmd in commands.items():
                seconds = cpu_seconds_of(cmd)
                print(f"| {n} | {name} | {seconds:.2f} | {seconds / n * 1e6:.1f} |", flush=True)
                if n == max(args.ops) and seconds > args.budget:
                    over.append(f"{name} at {n} ops: {seconds:.1f} s > {args.budget:g} s")
    for line in over:
        print(f"over budget: {line}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
