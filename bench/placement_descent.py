#!/usr/bin/env python3
"""How far the cost-aware placement (`--split auto`) is from a plan judged by simulation: a coordinate descent over
`--place` pins. Op by op in schedule order, each placement the op is offered (but whole on one group) is pinned and
the model run; a pin is kept when the run's simulated cycles fall. Prints every kept move and, per pass, the cycles
against the unpinned run. Simulated cycles only: deterministic, whatever the host is doing. Each trial is a whole
run, so a pass costs (ops x placements) runs: minutes for MobileNet-V2, an hour for EfficientNet-B0.

  /usr/bin/python3 bench/placement_descent.py --ldmsim build/tools/ldmsim --model M.onnx --input input=X.npy \\
      --arch sw26010 [--passes 1] [--out DIR] [--save pins.json]

The pins it saves replay the plan: `ldmsim run M.onnx --split auto --place NAME=PLACEMENT ...` (one --place per
entry). Trials run in DIR/trial (--out DIR; default a temporary directory).
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PLACEMENT_LINE = re.compile(r"^  (.*): (.*), estimated \d+ cycles")
OFFERED = re.compile(r"its placements here: (.*)$")


def place_args(pins):
    return [arg for name, label in pins.items() for arg in ("--place", f"{name}={label}")]


def plan_args(args):
    return [args.model, "--arch", args.arch, "--split", "auto"] + args.model_args


def placements(args, pins):
    """{op name: placement} of the plan under `pins`, as `ldmsim plan` lists them."""
    r = subprocess.run([args.ldmsim, "plan"] + plan_args(args) + place_args(pins), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ldmsim plan failed: {r.stderr.strip()}")
    return dict(m.groups() for m in map(PLACEMENT_LINE.match, r.stdout.splitlines()) if m)


def offered(args, name):
    """The placements op `name` is offered, read off the error a pin to none of them gives."""
    r = subprocess.run([args.ldmsim, "plan"] + plan_args(args) + ["--place", f"{name}=?"], capture_output=True,
                       text=True)
    lines = r.stderr.strip().splitlines()
    m = OFFERED.search(lines[-1]) if lines else None
    return re.findall(r"'([^']*)'", m.group(1)) if m else []


def cycles(args, pins):
    """Simulated cycles of a run with `pins`, or None when the run fails."""
    r = subprocess.run([args.ldmsim, "run"] + plan_args(args) + ["--no-trace", "--threads", "1", "--out", str(args.out)] +
                       place_args(pins), capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        print(f"  (a trial failed: {lines[-1] if lines else 'exit ' + str(r.returncode)})", flush=True)
        return None
    return json.loads((args.out / "stats.json").read_text())["cycles"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy, as `ldmsim run --input`")
    parser.add_argument("--arch", default="sw26010")
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--out", help="run directory of the trials (default: a temporary one)")
    parser.add_argument("--save", help="write the pins kept as a JSON object {op: placement}")
    args = parser.parse_args()
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    args.model_args = [arg for spec in args.input for arg in ("--input", spec)]
    scratch = tempfile.TemporaryDirectory() if args.out is None else None
    args.out = Path(args.out if args.out is not None else scratch.name) / "trial"

    base = cycles(args, {})
    if base is None:
        sys.exit("the unpinned run failed")
    print(f"auto: {base:,} cycles", flush=True)
    ops = list(placements(args, {}))
    if not ops:
        sys.exit("the plan lists no placements (a model of one op kind, or an arch of one core group?)")
    pins, best = {}, base
    for p in range(args.passes):
        moved = False
        for name in ops:
            current = pins.get(name) or placements(args, pins).get(name)  # other pins may have moved it
            for label in offered(args, name):
                if label == current or label.startswith("whole on cg"):
                    continue
                trial = dict(pins, **{name: label})
                c = cycles(args, trial)
                if c is not None and c < best:
                    print(f"  {name}: {current} -> {label}: {best:,} -> {c:,}", flush=True)
                    pins, best, current, moved = trial, c, label, True
        print(f"pass {p + 1}: {best:,} cycles, {best / base:.4f} of auto, {len(pins)} pin(s)", flush=True)
        if not moved:
            break
    if args.save:
        Path(args.save).write_text(json.dumps(pins, indent=1) + "\n")


if __name__ == "__main__":
    main()
