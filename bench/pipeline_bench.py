#!/usr/bin/env python3
"""Multi-model pipelining (docs/pipelining.md): the method's example of three LSTM models of 2, 3 and 2 time steps,
run one after another and pipelined (`ldmsim run A B C [--concurrent]`), for the examples in examples/pipeline/
(hidden 256, input 256, batch 1) and for variants of them with other sizes. Prints, per variant and arch, the
makespan, busy, idle and switching core-cycles of both schedules, and whether their outputs are bit-identical;
with --pictures DIR, copies each run's schedule.svg there. Simulated numbers only (deterministic).

  python3 bench/pipeline_bench.py --ldmsim build/tools/ldmsim [--arch sw26010 sw26010pro] [--pictures DIR]
"""
import argparse
import filecmp
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "pipeline"
MODELS = ["lstm_a", "lstm_b", "lstm_c"]
VARIANTS = [("hidden 256, batch 1 (the examples)", 256, 1), ("hidden 64, batch 4", 64, 4), ("hidden 256, batch 16", 256, 16)]


def variant(out, hidden, batch):
    files = []
    for name in MODELS:
        w = json.loads((EXAMPLES / f"{name}.json").read_text())
        seq = w["tensors"]["x"]["shape"][0]
        w["tensors"]["x"]["shape"] = [seq, batch, hidden]
        w["tensors"]["w"]["shape"] = [1, 4 * hidden, hidden]
        w["tensors"]["r"]["shape"] = [1, 4 * hidden, hidden]
        w["tensors"]["b"]["shape"] = [1, 8 * hidden]
        path = out / f"{name}.json"
        path.write_text(json.dumps(w))
        files.append(str(path))
    return files


def run(ldmsim, files, arch, out, concurrent):
    cmd = [ldmsim, "run", *files, "--arch", arch, "--no-trace", "--out", str(out)] + (["--concurrent"] if concurrent else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "stats.json").read_text())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", required=True)
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--pictures", help="directory for the schedule pictures")
    args = parser.parse_args()
    print("| models | arch | schedule | makespan | busy core-cycles | idle core-cycles | idle share | switches (cycles) "
          "| outputs |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, hidden, batch in VARIANTS:
            base = Path(tmp) / f"h{hidden}b{batch}"
            base.mkdir()
            files = variant(base, hidden, batch)
            for arch in args.arch:
                runs = {}
                for schedule, concurrent in (("sequential", False), ("pipelined", True)):
                    out = base / f"{arch}-{schedule}"
                    runs[schedule] = (out, run(args.ldmsim, files, arch, out, concurrent))
                    if args.pictures:
                        Path(args.pictures).mkdir(parents=True, exist_ok=True)
                        shutil.copy(out / "schedule.svg", Path(args.pictures) / f"h{hidden}b{batch}-{arch}-{schedule}.svg")
                same = all(filecmp.cmp(runs["sequential"][0] / m / f, runs["pipelined"][0] / m / f, shallow=False)
                           for m in MODELS for f in ("y.npy", "y_h.npy"))
                for schedule, (_, stats) in runs.items():
                    m = stats["machine"]
                    cores = m["busy_core_cycles"] + m["idle_core_cycles"] + m["switch_cycles"]
                    print(f"| {label} | {arch} | {schedule} | {m['makespan_cycles']} | {m['busy_core_cycles']} | "
                          f"{m['idle_core_cycles']} | {100 * m['idle_core_cycles'] / cores:.1f}% | "
                          f"{m['switches']} ({m['switch_cycles']}) | {'identical' if same else 'DIFFER'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
