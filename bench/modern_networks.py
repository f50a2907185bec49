#!/usr/bin/env python3
"""The networks people bring today, end to end: exports each (seeded random weights rounded to fp16, eval mode) with
torch.onnx.export at the given opsets, runs it with `ldmsim run` and compares the outputs with torch's fp32 output on
the same fp16-rounded input (relative L2 error and argmax). A model ldmsim refuses is reported with its import
errors, so this is also the list of what still blocks each family.

Needs Debian's python3-torch and python3-torchvision (too heavy for CI; docs/benchmarks.md has the results; small
versions of each family built with onnx.helper are in the test suite).
Usage: bench/modern_networks.py --ldmsim build/tools/ldmsim [--out DIR] [--arch sw26010pro] [--opsets 13 17]
       [--models densenet121 ... | bert_base_layer | vit_b_16] [--more] [--fusion-off-too] [--host-rounds N] [--pause 3]
       [--list]
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torchvision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_blas import blas_note  # noqa: E402
from torchvision_models import round_to_fp16  # noqa: E402

# Relative L2 error allowed against torch's fp32 output: every layer's output is stored as fp16.
TOLERANCE = 0.05


class Conv1dStack(torch.nn.Module):
    """A speech-style front end: Conv1d + BatchNorm + ReLU blocks, a max pool, a strided conv, a linear head."""

    def __init__(self):
        super().__init__()
        layers, channels = [], 40
        for out, k, s in [(64, 5, 1), (64, 3, 2), (128, 3, 1)]:
            layers += [torch.nn.Conv1d(channels, out, k, stride=s, padding=k // 2), torch.nn.BatchNorm1d(out),
                       torch.nn.ReLU()]
            channels = out
        layers.insert(3, torch.nn.MaxPool1d(2))
        self.body = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.head(self.body(x).mean(dim=2))


class BertLayer(torch.nn.Module):
    """torch.nn.TransformerEncoder (post-norm, GELU) over token embeddings, with a key-padding mask."""

    def __init__(self, hidden=64, heads=4, layers=2, seq=16):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0, activation="gelu",
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        mask = torch.zeros(1, seq, dtype=torch.bool)
        mask[0, seq - 3:] = True  # the last three tokens are padding
        self.register_buffer("mask", mask)

    def forward(self, x):
        return self.encoder(x, src_key_padding_mask=self.mask)


class GptBlock(torch.nn.Module):
    """A pre-norm decoder block with a causal mask (GPT-style), written out as people do."""

    def __init__(self, hidden=64, heads=4, seq=16):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(hidden), torch.nn.LayerNorm(hidden)
        self.qkv, self.proj = torch.nn.Linear(hidden, 3 * hidden), torch.nn.Linear(hidden, hidden)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(),
                                       torch.nn.Linear(4 * hidden, hidden))
        self.register_buffer("causal", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
        split = lambda t: t.view(b, s, self.heads, h // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        att = (q @ k.transpose(-2, -1)) / (h // self.heads) ** 0.5 + self.causal
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Recurrent(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(24, 32, num_layers=2, bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


class SmallUNet(torch.nn.Module):
    """Two levels down, two up: ConvTranspose on one path, Resize (bilinear) on the other."""

    def __init__(self):
        super().__init__()
        block = lambda i, o: torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.ReLU())  # noqa
        self.d1, self.d2, self.mid = block(3, 16), block(16, 32), block(32, 32)
        self.up1 = torch.nn.ConvTranspose2d(32, 32, 2, stride=2)
        self.u1, self.u2 = block(64, 16), block(32, 8)
        self.out = torch.nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(torch.nn.functional.max_pool2d(a, 2))
        m = self.mid(torch.nn.functional.max_pool2d(b, 2))
        u = self.u1(torch.cat([self.up1(m), b], 1))
        u = torch.nn.functional.interpolate(u, scale_factor=2, mode="bilinear", align_corners=False)
        return self.out(self.u2(torch.cat([u, a], 1)))


class SelfAttention(torch.nn.Module):
    """torch.nn.MultiheadAttention over a sequence, as a model that uses it directly exports it."""

    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class PreNormDecoder(torch.nn.Module):
    """torch.nn.TransformerDecoder (pre-norm, 2 layers) attending to its own input as memory."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerDecoderLayer(32, 4, 64, batch_first=True, norm_first=True)
        self.decoder = torch.nn.TransformerDecoder(layer, 2)

    def forward(self, x):
        return self.decoder(x, x)


class LayerZoo(torch.nn.Module):
    """Layers of post-2018 code that export to ONNX ops beyond the classic CNN set: GroupNorm and InstanceNorm
    (InstanceNormalization), PixelShuffle (DepthToSpace), LeakyReLU, PReLU, ELU, Mish (Softplus), a run-time sine
    embedding (Sin), std (ReduceProd of a shape, folded), F.normalize (ReduceL2), repeat (Tile), log_softmax."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.group_norm = torch.nn.GroupNorm(4, 16)
        self.instance_norm = torch.nn.InstanceNorm2d(16, affine=True)
        self.prelu = torch.nn.PReLU(16)
        self.up = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(2)
        self.head = torch.nn.Linear(8 * 32 * 32 + 8, 10)

    def forward(self, x):
        y = torch.nn.functional.leaky_relu(self.group_norm(self.stem(x)), 0.1)
        y = torch.nn.functional.mish(self.prelu(self.instance_norm(y)))
        y = torch.nn.functional.elu(self.shuffle(self.up(y)))  # [1, 8, 32, 32]
        y = y + torch.sin(y) / (1 + y.std(dim=(2, 3), keepdim=True))
        feature = torch.nn.functional.normalize(y.flatten(1), dim=1)
        pooled = y.mean(dim=(2, 3)).repeat(1, 1)
        return torch.log_softmax(self.head(torch.cat([feature * 30, pooled], 1)), 1)


class HeadZoo(torch.nn.Module):
    """Layers that export to Softmax over a middle axis (ResNeSt's split attention over its radix), ConvTranspose1d
    (an audio decoder's upsampling), CumSum (a running sum along a sequence) and ArgMax (the largest of four channels
    at each position, selected through an Equal mask, so a tie of equal values picks the same value)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.radix = torch.nn.Conv2d(8, 16, 1)
        self.up = torch.nn.ConvTranspose1d(8, 4, 4, stride=2, padding=1)
        self.head = torch.nn.Linear(8, 10)

    def forward(self, x):
        y = torch.relu(self.stem(x))  # [1, 8, 16, 16]
        attention = self.radix(y.mean(dim=(2, 3), keepdim=True)).view(1, 2, 8, 1).softmax(dim=1)
        y = y * attention.sum(dim=1).view(1, 8, 1, 1)
        seq = self.up(y.flatten(2))  # [1, 4, 512]
        run = torch.cumsum(seq, dim=2) / 64
        chosen = run.argmax(dim=1, keepdim=True) == torch.arange(4).view(1, 4, 1)
        top = (run * chosen.float()).sum(dim=1)  # [1, 512]
        return self.head(torch.cat([run.mean(dim=2), top.view(1, 4, 128).mean(dim=2)], dim=1))


class TailZoo(torch.nn.Module):
    """Layers that export to what fewer networks use: torch.roll by 0 on one dim (an empty Slice that Concat drops),
    local_response_norm (an If on the rank, inlined), a cropping F.pad (negative pads), torch.clamp by tensors,
    amax over dims (1, 3) (a reduction over axes that are not adjacent), trilinear upsampling of a volume, a count of
    positive elements and its argmax (ReduceSum and ArgMax of int32 tensors), and BatchNorm1d after a Linear."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.head = torch.nn.Linear(8 + 14 + 2 + 8 + 1, 10)

    def forward(self, x):
        y = torch.relu(self.stem(x))  # [1, 8, 16, 16]
        y = torch.roll(y, shifts=(3, 0), dims=(2, 3))
        y = torch.nn.functional.local_response_norm(y, 3)
        y = torch.nn.functional.pad(y, (-1, 2, 0, -2))  # [1, 8, 14, 17]
        y = torch.clamp(y, min=y.mean() * 0.25, max=y.max() * 0.75)
        peak = y.amax(dim=(1, 3))  # [1, 14]
        up = torch.nn.functional.interpolate(y[:, :, :8, :8].reshape(-1, 2, 4, 8, 8), scale_factor=2,
                                             mode="trilinear")  # [1, 2, 8, 16, 16]
        count = (y.flatten(2) > y.mean()).int().sum(dim=-1)  # [1, 8] int
        top = count.argmax(dim=-1, keepdim=True).float()  # [1, 1]
        pooled = self.bn(self.fc(y.mean(dim=(2, 3))))  # [1, 8]
        return self.head(torch.cat([pooled, peak, up.mean(dim=(2, 3, 4)), count.float() / 64, top / 8], dim=1))


class Segmentation(torch.nn.Module):
    """A torchvision segmentation net's "out" map (its forward returns a dict)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def vit():
    return torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                               hidden_dim=64, mlp_dim=128, num_classes=10)


# name: (constructor, input shape)
MODELS = {
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), (1, 3, 64, 64)),
    "shufflenet_v2": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), (1, 3, 64, 64)),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), (1, 3, 64, 64)),
    "mobilenet_v3_large": (lambda: torchvision.models.mobilenet_v3_large(weights=None), (1, 3, 64, 64)),
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(weights=None), (1, 3, 64, 64)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), (1, 3, 64, 64)),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(weights=None), (1, 3, 64, 64)),
    "vit_small": (vit, (1, 3, 32, 32)),
    "swin_t": (lambda: torchvision.models.swin_t(weights=None), (1, 3, 64, 64)),
    "bert_encoder": (BertLayer, (1, 16, 64)),
    "gpt_block": (GptBlock, (1, 16, 64)),
    "conv1d_stack": (Conv1dStack, (1, 40, 50)),
    "bilstm": (lambda: Recurrent(torch.nn.LSTM), (7, 1, 24)),
    "bigru": (lambda: Recurrent(torch.nn.GRU), (7, 2, 24)),
    "unet_small": (SmallUNet, (1, 3, 32, 32)),
    "maxvit_t": (lambda: torchvision.models.maxvit_t(weights=None), (1, 3, 224, 224)),
    # More of torchvision and torch.nn, not run by default (--models NAME, or --more for all of them).
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(weights=None), (1, 3, 64, 64)),
    "wide_resnet50_2": (lambda: torchvision.models.wide_resnet50_2(weights=None), (1, 3, 64, 64)),
    "mnasnet0_5": (lambda: torchvision.models.mnasnet0_5(weights=None), (1, 3, 64, 64)),
    "efficientnet_v2_s": (lambda: torchvision.models.efficientnet_v2_s(weights=None), (1, 3, 64, 64)),
    "regnet_x_400mf": (lambda: torchvision.models.regnet_x_400mf(weights=None), (1, 3, 64, 64)),
    "shufflenet_v2_x0_5": (lambda: torchvision.models.shufflenet_v2_x0_5(weights=None), (1, 3, 64, 64)),
    "squeezenet1_0": (lambda: torchvision.models.squeezenet1_0(weights=None), (1, 3, 64, 64)),
    "inception_v3": (lambda: torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False),
                     (1, 3, 80, 80)),
    "googlenet_64": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=False),
                     (1, 3, 64, 64)),
    "alexnet": (lambda: torchvision.models.alexnet(weights=None), (1, 3, 224, 224)),
    "vit_b_32_64px": (lambda: torchvision.models.vit_b_32(weights=None, image_size=64), (1, 3, 64, 64)),
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None), (1, 3, 4, 32, 32)),
    "r2plus1d_18": (lambda: torchvision.models.video.r2plus1d_18(weights=None), (1, 3, 4, 32, 32)),
    "fcn_resnet50": (lambda: Segmentation(torchvision.models.segmentation.fcn_resnet50(
        weights=None, weights_backbone=None, aux_loss=False)), (1, 3, 64, 64)),
    "deeplabv3_mobilenet_v3_large": (lambda: Segmentation(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)), (1, 3, 64, 64)),
    "lraspp_mobilenet_v3_large": (lambda: Segmentation(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), (1, 3, 64, 64)),
    "layer_zoo": (LayerZoo, (1, 3, 16, 16)),
    "head_zoo": (HeadZoo, (1, 3, 16, 16)),
    "tail_zoo": (TailZoo, (1, 3, 16, 16)),
    "swin_t_256x192": (lambda: torchvision.models.swin_t(weights=None), (1, 3, 256, 192)),
    "multihead_attention": (SelfAttention, (1, 10, 32)),
    "transformer_decoder": (PreNormDecoder, (1, 10, 32)),
    # Not in the default list (larger): one BERT-base encoder layer, hidden 768, 12 heads, sequence 128; and
    # torchvision's ViT-B/16 at its own 224x224 (86 M weights, a 346 MB file).
    "bert_base_layer": (lambda: BertLayer(hidden=768, heads=12, layers=1, seq=128), (1, 128, 768)),
    "vit_b_16": (lambda: torchvision.models.vit_b_16(weights=None), (1, 3, 224, 224)),
}
MORE_MODELS = list(MODELS)[list(MODELS).index("resnext50_32x4d"):list(MODELS).index("bert_base_layer")]
DEFAULT_MODELS = [m for m in MODELS if m not in ("bert_base_layer", "vit_b_16") and m not in MORE_MODELS]


def fp16_model(make, shape, seed):
    """Seeded weights, batch-norm statistics calibrated on a random batch (else activations vanish below fp16's
    range in deep nets), everything rounded to fp16."""
    torch.manual_seed(seed)
    model = make()
    with torch.no_grad():  # zero-initialised layers (ViT's head) would make every output 0 whatever ran before
        for tensor in model.parameters():
            if tensor.dim() > 1 and not tensor.any():
                tensor.normal_(0, 0.02)
    norms = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)
    if any(isinstance(m, norms) for m in model.modules()):
        for m in model.modules():
            if isinstance(m, norms):
                m.momentum = None
        model.train()
        with torch.no_grad():
            model(torch.randn(4, *shape[1:], generator=torch.Generator().manual_seed(seed + 2)))
    return round_to_fp16(model)


def fp16_storage_output(model, x):
    """torch's output with every leaf module's output rounded to fp16, as ldmsim stores every tensor: how far fp16
    storage alone moves the result from fp32 (a reference for the error, not an exact model of ldmsim's rounding,
    which fuses some ops and rounds inside others)."""
    hooks = [m.register_forward_hook(lambda _m, _i, out: out.half().float() if isinstance(out, torch.Tensor) else out)
             for m in model.modules() if not list(m.children())]
    try:
        return model(x).numpy()
    finally:
        for h in hooks:
            h.remove()


def ldmsim_command(args, onnx_file, x_file, run_dir, fusion="on"):
    return [args.ldmsim, "run", str(onnx_file), "--input", f"input={x_file}", "--arch", args.arch, "--no-trace",
            "--threads", "1", "--fusion", fusion, "--out", str(run_dir)]


def host_times(args, model, x, onnx_file, x_file, run_dir):
    """Medians over alternated rounds: torch's warm forward pass (one thread, model in memory, median of 5 passes
    per round), ldmsim's whole process and its execute phase (a fresh process each round)."""
    torch.set_num_threads(1)
    torch_s, whole_s, execute_s = [], [], []
    with torch.no_grad():
        model(x)
        for _ in range(args.host_rounds):
            passes = []
            for _ in range(5):
                start = time.perf_counter()
                model(x)
                passes.append(time.perf_counter() - start)
            torch_s.append(sorted(passes)[2])
            time.sleep(args.pause)
            start = time.perf_counter()
            subprocess.run(ldmsim_command(args, onnx_file, x_file, run_dir), check=True, capture_output=True)
            whole_s.append(time.perf_counter() - start)
            phases = json.loads((run_dir / "host_times.json").read_text())["phases"]
            execute_s.append(phases["execute_seconds"])
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    return {"torch_ms": med(torch_s) * 1e3, "whole_ms": med(whole_s) * 1e3, "execute_ms": med(execute_s) * 1e3,
            "ratio_whole": med([w / t for w, t in zip(whole_s, torch_s)]),
            "ratio_execute": med([e / t for e, t in zip(execute_s, torch_s)])}


def run(args, name, opset, out):
    make, shape = MODELS[name]
    model = fp16_model(make, shape, 7)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(11)).half().float()
    with torch.no_grad():
        expected = model(x).numpy()
        storage = fp16_storage_output(model, x)
    onnx_file = out / f"{name}_opset{opset}.onnx"
    torch.onnx.export(model, (x,), str(onnx_file), opset_version=opset, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    np.save(out / f"{name}_x.npy", x.numpy())
    run_dir = out / f"{name}_opset{opset}"
    x_file = out / f"{name}_x.npy"
    start = time.perf_counter()
    proc = subprocess.run(ldmsim_command(args, onnx_file, x_file, run_dir), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return {"model": name, "opset": opset, "status": f"exit {proc.returncode}",
                "errors": (proc.stderr or proc.stdout).strip().splitlines()[:40]}
    got = np.load(run_dir / "output.npy").astype(np.float32).reshape(expected.shape)
    if not np.any(expected):
        return {"model": name, "opset": opset, "status": "degenerate (torch's output is all zeros)"}
    rel = float(np.linalg.norm(got - expected) / np.linalg.norm(expected))
    same_argmax = bool(np.argmax(got) == np.argmax(expected))
    stats = json.loads((run_dir / "stats.json").read_text())
    ok = rel <= TOLERANCE and same_argmax
    result = {"model": name, "opset": opset, "status": "ok" if ok else "MISMATCH", "relative_l2": rel,
              "same_argmax": same_argmax,
              "fp16_storage_l2": float(np.linalg.norm(storage - expected) / np.linalg.norm(expected)),
              "fp16_storage_argmax_same": bool(np.argmax(storage) == np.argmax(expected)), "cycles": stats.get("cycles"), "host_seconds": round(seconds, 3)}
    if args.fusion_off_too:
        off_dir = out / f"{name}_opset{opset}_fusion_off"
        subprocess.run(ldmsim_command(args, onnx_file, x_file, off_dir, "off"), check=True, capture_output=True)
        result["cycles_fusion_off"] = json.loads((off_dir / "stats.json").read_text())["cycles"]
        result["fusion_speedup"] = result["cycles_fusion_off"] / result["cycles"]
    if args.host_rounds > 0:
        result.update(host_times(args, model, x, onnx_file, x_file, run_dir))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ldmsim", help="the ldmsim binary (required unless --list)")
    parser.add_argument("--out", default="/tmp/ldmsim-modern")
    parser.add_argument("--arch", default="sw26010pro")
    parser.add_argument("--opsets", type=int, nargs="+", default=[13, 17])
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS, choices=list(MODELS))
    parser.add_argument("--more", action="store_true",
                        help="run the further torchvision and torch.nn networks too (" + ", ".join(MORE_MODELS) + ")")
    parser.add_argument("--fusion-off-too", action="store_true",
                        help="also run with --fusion off and report the simulated speed-up of fusion")
    parser.add_argument("--host-rounds", type=int, default=0,
                        help="time ldmsim (whole process and execute phase) against torch fp32 on one thread, "
                             "this many alternated rounds (medians)")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds to sleep before each timed ldmsim run (--host-rounds): 3 measures a run started "
                             "on memory the VM's host has taken back, a user's usual case (docs/benchmarks.md)")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    args = parser.parse_args()
    if args.pause < 0:
        parser.error("--pause must be 0 or more seconds")
    if args.list:
        print("\n".join(MODELS))
        return 0
    if not args.ldmsim:
        parser.error("--ldmsim is required")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    names = args.models + [m for m in MORE_MODELS if args.more and m not in args.models]
    for name in names:
        for opset in args.opsets:
            try:
                r = run(args, name, opset, out)
            except Exception as e:  # an export that torch itself refuses
                r = {"model": name, "opset": opset, "status": "export failed", "errors": [str(e)[:300]]}
            results.append(r)
            line = f"{name:20s} opset {opset}: {r['status']}"
            if "relative_l2" in r:
                line += f"  rel L2 {r['relative_l2']:.4f}  argmax {'same' if r['same_argmax'] else 'differs'}"
                line += (f"  (torch with fp16 storage: {r['fp16_storage_l2']:.4f}, argmax "
                         f"{'same' if r['fp16_storage_argmax_same'] else 'differs'})")
                line += f"  {r['cycles']} cycles  {r['host_seconds']} s"
            if "fusion_speedup" in r:
                line += f"  fusion off {r['cycles_fusion_off']} cycles ({r['fusion_speedup']:.2f}x)"
            if "torch_ms" in r:
                line += (f"\n    host (1 thread): torch {r['torch_ms']:.1f} ms, ldmsim whole {r['whole_ms']:.1f} ms "
                         f"({r['ratio_whole']:.1f}x), execute {r['execute_ms']:.1f} ms ({r['ratio_execute']:.1f}x)")
            print(line, flush=True)
            for e in r.get("errors", [])[:12]:
                print(f"    {e}")
    if args.host_rounds > 0:
        print(blas_note())
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return 0 if all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
