#!/usr/bin/env python3
"""The cost-aware placement (`--split auto`, docs/splitting.md) against `--split off` and `--split on`: exports
ResNet-18, ResNet-50, MobileNet-V2, EfficientNet-B0 and SqueezeNet 1.1 (seeded random weights, batch-norm statistics
calibrated, rounded to fp16, as bench/torchvision_models.py does) and the BERT-base encoder layer (hidden 768, 12
heads, sequence 128, as bench/speed_targets.py exports it), runs each with the three settings on each arch and
prints two markdown tables: whole-network cycles, layers where auto is over min(off, on) + 3% (by the op's own cycles
and by its share of the makespan), host CPU seconds; and
per op, simulated over estimated cycles of the auto run.

Needs Debian's python3-torch and python3-torchvision.
Usage: /usr/bin/python3 bench/placement_bench.py --ldmsim build/tools/ldmsim [--out DIR] [--arch sw26010 sw26010pro]
       [--models resnet18 ...]
"""
import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import torchvision

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torchvision_models  # noqa: E402

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
    "squeezenet1_1": torchvision.models.squeezenet1_1,
}
MODES = ("off", "on", "auto")


# Exported by bench/speed_targets.py with an input of their own.
SPEED_TARGET_MODELS = ("bert_base_layer",)


def export(name, out, seed=2026):
    """The model as bench/torchvision_models.py makes it (seeded weights, calibrated batch norms, fp16), exported;
    a model of SPEED_TARGET_MODELS as bench/speed_targets.py exports it."""
    if name in SPEED_TARGET_MODELS:
        import speed_targets  # noqa: E402 (only these models need it)
        return speed_targets.export(name, out)[2]
    path = out / f"{name}.onnx"
    if not path.exists():
        torchvision_models.MODELS.setdefault(name, lambda: MODELS[name](weights=None))
        torch.onnx.export(torchvision_models.fp16_model(name, seed), torch.zeros(1, 3, 224, 224), str(path),
                          input_names=["input"], output_names=["output"], opset_version=13)
    return path


def input_for(name, out):
    """The input file of model `name` (exported first): its own for SPEED_TARGET_MODELS, else make_input's."""
    return out / f"{name}_input.npy" if name in SPEED_TARGET_MODELS else make_input(out)


def make_input(out):
    """The seeded input image, saved once in `out`."""
    input_file = out / "input.npy"
    if not input_file.exists():
        torch.manual_seed(2027)
        np.save(input_file, torch.randn(1, 3, 224, 224).numpy().astype(np.float16))
    return input_file


def run(ldmsim, model, input_file, arch, mode, out):
    """Runs ldmsim; returns (stats, host CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([ldmsim, "run", str(model), "--input", f"input={input_file}", "--arch", arch, "--split", mode,
                    "--no-trace", "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads((out / "stats.json").read_text()), cpu


def makespan_shares(stats):
    """Each op's share of the run's makespan: its end cycle less the latest end before it (the shares sum to the
    run's cycles in every placement)."""
    shares, latest = [], 0
    for op in stats["ops"]:
        shares.append(max(0, op["end_cycle"] - latest))
        latest = max(latest, op["end_cycle"])
    return shares


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", default="build/tools/ldmsim")
    parser.add_argument("--out", default="placement-out")
    parser.add_argument("--arch", nargs="+", default=["sw26010", "sw26010pro"])
    parser.add_argument("--models", nargs="+", default=list(MODELS) + list(SPEED_TARGET_MODELS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for name in args.models:
        model = export(name, out)
        input_file = input_for(name, out)
        for arch in args.arch:
            for mode in MODES:
                runs[name, arch, mode] = run(args.ldmsim, model, input_file, arch, mode, out / f"{name}-{arch}-{mode}")
    print("| network | arch | off cycles | on cycles | auto cycles | off / auto | on / auto | ops split (auto) | "
          "layers where auto > min(off, on) + 3% (op cycles / makespan share) | host CPU s off / on / auto |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for arch in args.arch:
        for name in args.models:
            (off, t_off), (on, t_on), (auto, t_auto) = (runs[name, arch, m] for m in MODES)
            worse = sum(a["cycles"] > min(x["cycles"], y["cycles"]) * 1.03
                        for a, x, y in zip(auto["ops"], off["ops"], on["ops"]))
            # By each op's share of the makespan: what ran between the previous op's end and its own (a consumer's
            # re-layout of its input counts in the consumer under auto and on, but in no op record under off).
            worse_share = sum(a > min(x, y) * 1.03 for a, x, y in zip(*(makespan_shares(r) for r in (auto, off, on))))
            split = sum(a.get("placement", {}).get("placement", "whole") != "whole" for a in auto["ops"])
            print(f"| {name} | {arch} | {off['cycles']:,} | {on['cycles']:,} | {auto['cycles']:,} | "
                  f"{off['cycles'] / auto['cycles']:.2f}x | {on['cycles'] / auto['cycles']:.2f}x | "
                  f"{split} of {len(auto['ops'])} | {worse} / {worse_share} | {t_off:.2f} / {t_on:.2f} / {t_auto:.2f} |")
    print()
    print("| arch | network | ops | estimate within 25% | median simulated / estimated | p10 | p90 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for arch in args.arch:
        for name in args.models + ["all"]:
            ratios = sorted(op["cycles"] / max(1, op["placement"]["estimated_cycles"])
                            for n in (args.models if name == "all" else [name])
                            for op in runs[n, arch, "auto"][0]["ops"] if op.get("placement") and op["cycles"] > 0)
            within = sum(0.8 <= r <= 4 / 3 for r in ratios)  # |estimate - simulated| <= 25% of simulated
            at = lambda f: ratios[min(len(ratios) - 1, int(f * len(ratios)))]  # noqa: E731
            print(f"| {arch} | {name} | {len(ratios)} | {within} ({100 * within / len(ratios):.0f}%) | "
                  f"{at(0.5):.2f} | {at(0.1):.2f} | {at(0.9):.2f} |")


if __name__ == "__main__":
    main()
