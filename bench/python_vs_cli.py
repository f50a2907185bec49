#!/usr/bin/env python3
"""Host time of a Python-driven run (bench/python_run.py, the ldmsim module) against `ldmsim run` on the same model,
in turn (CLI, Python, CLI, ...), each in a fresh process. Per run it reads host_times.json, which both write by the
same session code: the phases the run spends (import, load, fusion, execute, writing outputs) are compared pair by
pair, apart from the whole process (interpreter start and `import numpy, ldmsim` included).

Usage: bench/python_vs_cli.py --ldmsim build/tools/ldmsim --pythonpath build/python MODEL [--input NAME=FILE ...]
       [--arch sw26010pro] [--threads 1] [--reps 11] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = ["import_seconds", "load_seconds", "fusion_seconds", "execute_seconds", "write_outputs_seconds"]


def timed(cmd, env=None):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def phases(run_dir):
    p = json.loads((run_dir / "host_times.json").read_text())["phases"]
    return [p.get(k, 0.0) for k in PHASES]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--pythonpath", default="build/python")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="ldmsim-python-vs-cli-"))
    inputs = [a for item in args.input for a in ("--input", item)]
    common = ["--arch", args.arch, "--threads", str(args.threads)]
    cli = [args.ldmsim, "run", args.model, *inputs, *common, "--no-trace", "--out", str(out / "cli")]
    python = [sys.executable, str(Path(__file__).with_name("python_run.py")), args.model, *inputs, *common,
              "--out", str(out / "python")]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.pythonpath))
    timed(cli), timed(python, env)  # warm-up: page cache, ccache-like effects of the first run
    rows = []
    for _ in range(args.reps):
        cli_wall = timed(cli)
        cli_phases = phases(out / "cli")
        py_wall = timed(python, env)
        py_phases = phases(out / "python")
        rows.append((sum(cli_phases), sum(py_phases), cli_wall, py_wall, cli_phases, py_phases))
    median = statistics.median
    print(json.dumps({
        "reps": args.reps,
        "cli_phases_s": median(r[0] for r in rows), "python_phases_s": median(r[1] for r in rows),
        "ratio_phases": median(r[1] / r[0] for r in rows),
        "per_phase_cli_s": {k: median(r[4][i] for r in rows) for i, k in enumerate(PHASES)},
        "per_phase_python_s": {k: median(r[5][i] for r in rows) for i, k in enumerate(PHASES)},
        "cli_wall_s": median(r[2] for r in rows), "python_wall_s": median(r[3] for r in rows),
        "ratio_wall": median(r[3] / r[2] for r in rows),
        "same_stats": (out / "cli" / "stats.json").read_bytes() == (out / "python" / "stats.json").read_bytes(),
    }, indent=1))


if __name__ == "__main__":
    main()
