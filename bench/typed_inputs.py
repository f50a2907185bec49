#!/usr/bin/env python3
"""Transformers fed token ids and padding masks at run time, as people export them: an embedding lookup by int64
ids (runtime gather), a torch.nn.TransformerEncoder with a bool key-padding mask given as a graph input, and a
HF-style additive mask from an int64 attention mask (Unsqueeze, Cast, (1 - m) * -10000), and RoBERTa-style position
ids computed from the ids (`cumsum(mask) * mask + padding_idx`: integer Mul and Add at run time) with a top-5 of the
output logits (TopK). Each is exported by
torch.onnx at opsets 13 and 17 with seeded fp16-rounded weights, run with `ldmsim run` and compared with torch's
fp32 output on the same inputs (relative L2 <= 5%, same argmax). Needs python3-torch (not in CI).

Usage: bench/typed_inputs.py --ldmsim build/tools/ldmsim [--arch sw26010pro] [--opsets 13 17] [--out DIR]"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torchvision_models import round_to_fp16  # noqa: E402

TOLERANCE = 0.05


class TokenEncoder(torch.nn.Module):
    """Embeddings (word + position) and a post-norm TransformerEncoder with a bool key-padding mask input."""

    def __init__(self, vocab=1000, hidden=64, heads=4, layers=2, seq=16):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0, activation="gelu",
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids, pad):
        return self.encoder(self.word(ids) + self.position, src_key_padding_mask=pad)


class AdditiveMaskEncoder(torch.nn.Module):
    """HF-style: an int64 attention mask (1 = attend) made additive, added to hand-written attention scores."""

    def __init__(self, vocab=1000, hidden=64, heads=4, seq=16):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, hidden)
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.norm = torch.nn.LayerNorm(hidden)

    def forward(self, ids, attention_mask):
        x = self.word(ids)
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=-1)
        split = lambda t: t.reshape(b, s, self.heads, h // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        scores = q @ k.transpose(-1, -2) / (h // self.heads) ** 0.5 + additive
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h)
        return self.norm(x + self.out(y))


class PositionIdEncoder(torch.nn.Module):
    """RoBERTa-style: position ids made from the ids at run time (padding id 1), a LayerNorm, a vocabulary head and
    the top 5 logits of each token."""

    def __init__(self, vocab=1000, hidden=64, seq=16):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Embedding(seq + 2, hidden)
        self.norm = torch.nn.LayerNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, ids):
        mask = ids.ne(1).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1
        logits = self.head(self.norm(self.word(ids) + self.position(positions)))
        return torch.topk(logits, 5, dim=-1).values


def inputs_of(name, seq=16, vocab=1000):
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(1, vocab, (2, seq), generator=g)
    ids[0, seq - 4:] = 0
    if name == "token_encoder":
        return {"ids": ids, "pad": ids == 0}
    if name == "position_id_encoder":
        return {"ids": torch.where(ids == 0, torch.ones_like(ids), ids)}
    return {"ids": ids, "attention_mask": (ids != 0).long()}


MODELS = {"token_encoder": TokenEncoder, "additive_mask_encoder": AdditiveMaskEncoder,
          "position_id_encoder": PositionIdEncoder}


def run(args, name, opset, out):
    torch.manual_seed(7)
    model = round_to_fp16(MODELS[name]()).eval()
    inputs = inputs_of(name)
    with torch.no_grad():
        expected = model(*inputs.values()).numpy()
    onnx_file = out / f"{name}_opset{opset}.onnx"
    torch.onnx.export(model, tuple(inputs.values()), str(onnx_file), opset_version=opset,
                      input_names=list(inputs), output_names=["output"])
    command = [args.ldmsim, "run", str(onnx_file), "--arch", args.arch, "--no-trace", "--threads", "1"]
    for key, value in inputs.items():
        np.save(out / f"{name}_{key}.npy", value.numpy())
        command += ["--input", f"{key}={out / f'{name}_{key}.npy'}"]
    run_dir = out / f"{name}_opset{opset}"
    proc = subprocess.run(command + ["--out", str(run_dir)], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"model": name, "opset": opset, "status": f"exit {proc.returncode}",
                "errors": (proc.stderr or proc.stdout).strip().splitlines()[:20]}
    got = np.load(run_dir / "output.npy").astype(np.float32).reshape(expected.shape)
    rel = float(np.linalg.norm(got - expected) / np.linalg.norm(expected))
    same_argmax = bool(np.argmax(got) == np.argmax(expected))
    stats = json.loads((run_dir / "stats.json").read_text())
    typed = {"gather", "where", "cast", "equal", "not", "cumsum", "top_k"}
    runtime_typed = sorted({op["type"] for op in stats["ops"]} & typed)
    return {"model": name, "opset": opset, "status": "ok" if rel <= TOLERANCE and same_argmax else "MISMATCH",
            "relative_l2": rel, "same_argmax": same_argmax, "cycles": stats["cycles"], "typed_ops": runtime_typed}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", required=True)
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--opsets", nargs="+", type=int, default=[13, 17])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="typed_inputs_"))
    out.mkdir(parents=True, exist_ok=True)
    failed = False
    for name in MODELS:
        for opset in args.opsets:
            result = run(args, name, opset, out)
            failed |= result["status"] != "ok"
            print(json.dumps(result))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
