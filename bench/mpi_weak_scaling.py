#!/usr/bin/env python3
"""Weak scaling of the MPI + athread halo stencil (tests/athread/mpi/halo): 64 x 64 points per rank at 1, 2, 4, 8
and 16 ranks on one host (oversubscribed), each rank one simulated sw26010 chip. Prints a Markdown table: the
simulated cycles per step (rank 0's own measure, from athread_host_cycles), the wall seconds of the whole mpirun
and the host seconds rank 0 measured from MPI_Init to its check.

Usage: bench/mpi_weak_scaling.py BUILD_DIR [--steps N] [--ranks 1 2 4 8 16]
"""
import argparse
import re
import subprocess
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", help="the build directory (holds tests/athread/mpi/athread_mpi_halo)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    args = parser.parse_args()
    program = f"{args.build}/tests/athread/mpi/athread_mpi_halo"
    print("| ranks | grid | simulated cycles per step | MPI cycles of rank 0 (waiting) | wall s (mpirun) | host s (rank 0) |")
    print("|---:|---|---:|---:|---:|---:|")
    for ranks in args.ranks:
        start = time.monotonic()
        run = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks), program,
                              str(args.steps)], capture_output=True, text=True, check=True)
        wall = time.monotonic() - start
        out = run.stdout + run.stderr
        halo = re.search(r"halo ok: 0 mismatches on a (\d+) x (\d+) grid.*?([0-9.]+) simulated cycles per step, "
                         r"([0-9.]+) host seconds", out)
        if halo is None:
            raise SystemExit(f"{ranks} ranks: no 'halo ok' line in:\n{out}")
        mpi = re.search(r"rank 0 of \d+: \d+ simulated cycles.*?MPI: \d+ calls, (\d+) cycles in them \((\d+) waiting\)",
                        out)
        print(f"| {ranks} | {halo.group(1)} x {halo.group(2)} | {float(halo.group(3)):.1f} | "
              f"{mpi.group(1)} ({mpi.group(2)}) | {wall:.2f} | {float(halo.group(4)):.2f} |")


if __name__ == "__main__":
    main()
