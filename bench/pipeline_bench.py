#!/usr/bin/env python3
"""Multi-model pipelining (docs/pipelining.md): the method's example of three LSTM models of 2, 3 and 2 time steps,
run one after another and pipelined (Session.run_together, as `ldmsim run A B C [--concurrent]` does), for the
examples in examples/pipeline/ (hidden 256, input 256, batch 1) and for variants of them with other sizes, through
the Python bindings. Prints, per variant and arch, the makespan, busy, idle and switching core-cycles of both
schedules, and whether their outputs are bit-identical; with --pictures DIR, writes each run's schedule.svg there.
Simulated numbers only (deterministic).

  PYTHONPATH=build/python /usr/bin/python3 bench/pipeline_bench.py [--arch sw26010 sw26010pro] [--pictures DIR]
"""
import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

import ldmsim

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "pipeline"
MODELS = ["lstm_a", "lstm_b", "lstm_c"]
VARIANTS = [("hidden 256, batch 1 (the examples)", 256, 1), ("hidden 64, batch 4", 64, 4), ("hidden 256, batch 16", 256, 16)]


def variant(hidden, batch):
    """The three example workloads as dicts, resized."""
    workloads = []
    for name in MODELS:
        w = json.loads((EXAMPLES / f"{name}.json").read_text())
        seq = w["tensors"]["x"]["shape"][0]
        w["tensors"]["x"]["shape"] = [seq, batch, hidden]
        w["tensors"]["w"]["shape"] = [1, 4 * hidden, hidden]
        w["tensors"]["r"]["shape"] = [1, 4 * hidden, hidden]
        w["tensors"]["b"]["shape"] = [1, 8 * hidden]
        workloads.append(w)
    return workloads


def same_outputs(a, b):
    return all(np.array_equal(x.outputs[name], y.outputs[name], equal_nan=True)
               for x, y in zip(a.results, b.results) for name in x.outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--pictures", help="directory for the schedule pictures")
    args = parser.parse_args()
    print("| models | arch | schedule | makespan | busy core-cycles | idle core-cycles | idle share | switches (cycles) "
          "| outputs |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, hidden, batch in VARIANTS:
            workloads = variant(hidden, batch)
            for arch in args.arch:
                session = ldmsim.Session(arch=arch)
                models = [session.load(w, base_dir=EXAMPLES, contexts=len(workloads)) for w in workloads]
                runs = {}
                for schedule in ("sequential", "pipelined"):
                    out = Path(tmp) / f"h{hidden}b{batch}-{arch}-{schedule}" if args.pictures else None
                    runs[schedule] = session.run_together(models, schedule=schedule, out=out, dtype="float16")
                    runs[schedule].raise_first()
                    if args.pictures:
                        Path(args.pictures).mkdir(parents=True, exist_ok=True)
                        shutil.copy(out / "schedule.svg", Path(args.pictures) / f"{out.name}.svg")
                same = same_outputs(runs["sequential"], runs["pipelined"])
                for schedule, together in runs.items():
                    m = together.stats["machine"]
                    cores = m["busy_core_cycles"] + m["idle_core_cycles"] + m["switch_cycles"]
                    print(f"| {label} | {arch} | {schedule} | {m['makespan_cycles']} | {m['busy_core_cycles']} | "
                          f"{m['idle_core_cycles']} | {100 * m['idle_core_cycles'] / cores:.1f}% | "
                          f"{m['switches']} ({m['switch_cycles']}) | {'identical' if same else 'DIFFER'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
