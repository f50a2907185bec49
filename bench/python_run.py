#!/usr/bin/env python3
"""`ldmsim run MODEL --input NAME=FILE --out DIR` through the Python bindings: loads the model with its input files
(or, with --values, gives run() the arrays numpy reads from them) and writes the same run directory. Times the Python-driven path against the CLI's as whole
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
    parser.add_argument("--values", action="store_true",
                        help="read the inputs with numpy and give the arrays to run() (default: the files to load())")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    inputs = dict(item.partition("=")[::2] for item in args.input)
    session = ldmsim.Session(arch=args.arch, threads=args.threads, fusion=args.fusion == "on", trace=args.trace)
    if args.values:  # the arrays given to run() instead of the files to load()
        result = session.run(session.load(args.model), {n: np.load(f) for n, f in inputs.items()}, out=args.out)
    else:
        result = session.run(session.load(args.model, input_files=inputs), out=args.out)
    print(f"{result.stats['workload']}: {result.cycles} cycles ({result.seconds * 1e3:.3f} ms simulated)")


if __name__ == "__main__":
    main()
