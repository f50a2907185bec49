#!/usr/bin/env python3
"""Reads a trace into numpy with ldmsim.Trace(path).events() and prints one JSON object: events, wall and CPU
seconds (the process's, user + system: what the read costs on a shared host), the array's bytes, the process's resident memory before the read and its peak during it (VmHWM, reset just before
the read through /proc/self/clear_refs), and the peak's growth over the array's bytes.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_trace_read.py TRACE [--reps N]
A 10 M-event trace: build/bench/large_trace_run --requests 10000000 --out large.ldmtrace
"""
import argparse
import json
import time

import numpy as np  # noqa: F401  (imported before the baseline, as a user's script has it)

import ldmsim


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--reps", type=int, default=1, help="reads (the fastest is reported; memory of the first)")
    args = parser.parse_args()
    trace = ldmsim.Trace(args.trace)
    before = status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    seconds, cpu = [], []
    for rep in range(args.reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        events = trace.events()
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if rep == 0:
            peak = status_kib("VmHWM")
            nbytes = events.nbytes
            count = len(events)
        del events
    growth = (peak - before) * 1024
    print(json.dumps({"events": count, "seconds": min(seconds), "cpu_seconds": min(cpu), "array_bytes": nbytes,
                      "rss_before_mib": before / 1024, "peak_rss_mib": peak / 1024,
                      "peak_growth_bytes": growth, "growth_over_array": growth / nbytes}))


if __name__ == "__main__":
    main()
