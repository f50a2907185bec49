#!/usr/bin/env python3
"""`ldmsim run MODEL --input NAME=FILE --out DIR` through the Python bindings: loads the model, runs it with the
inputs read by numpy and writes the same run directory. Times the Python-driven path against the CLI's as whole
processes (docs/benchmarks.md, "Python bindings").

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_run.py MODEL [--input NAME=FILE ...] [--arch A]
       [--threads T] [--fusion on|off] [--trace] --out DIR
"""
import argparse

import numpy as np

import ldmsim


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--arch")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--fusion", choices=["on", "off"], default="on")
    parser.add_argument("--trace", action="store_true", help="record and write the trace (off by default)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    inputs = {}
    for item in args.input:
        name, _, file = item.partition("=")
        inputs[name] = np.load(file)
    session = ldmsim.Session(arch=args.arch, threads=args.threads, fusion=args.fusion == "on", trace=args.trace)
    result = session.run(session.load(args.model), inputs, out=args.out)
    print(f"{result.stats['workload']}: {result.cycles} cycles ({result.seconds * 1e3:.3f} ms simulated)")


if __name__ == "__main__":
    main()
