#!/usr/bin/env python3
"""Builds the ONNX test models of tests/tools/onnx_cli_test.cpp with python3-onnx's helper API, their inputs,
and numpy references of their outputs (fp32 arithmetic on the fp16-rounded input and weights, as ldmsim stages
them). Usage: make_models.py DIR. Nothing is downloaded."""
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def fp16(a):
    """The value ldmsim holds for an fp32 array: rounded to fp16 (nearest even), computed on in fp32."""
    return np.asarray(a, dtype=np.float32).astype(np.float16).astype(np.float32)


def weights(*shape, scale=0.5):
    return fp16(rng.uniform(-scale, scale, size=shape))


def conv(x, w, b=None, stride=1, pads=(0, 0, 0, 0), dilation=1, groups=1):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    top, left, bottom, right = pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    p = (h + top + bottom - dilation * (r - 1) - 1) // stride + 1
    q = (wd + left + right - dilation * (s - 1) - 1) // stride + 1
    y = np.zeros((n, k, p, q), dtype=np.float64)
    kg = k // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(s):
                patch = xs[:, :, i * dilation:i * dilation + stride * (p - 1) + 1:stride,
                           j * dilation:j * dilation + stride * (q - 1) + 1:stride]
                y[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, w[g * kg:(g + 1) * kg, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def conv3d(x, w, b=None, strides=(1, 1, 1), pads=(0,) * 6, dilations=(1, 1, 1), groups=1):
    """ONNX Conv over [N, C, D, H, W] by its definition: every window offset's products, summed."""
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pads[a], pads[a + 3]) for a in range(3)))
    m, cg, *kernel = w.shape
    out = [(xp.shape[a + 2] - dilations[a] * (kernel[a] - 1) - 1) // strides[a] + 1 for a in range(3)]
    y = np.zeros((x.shape[0], m, *out), dtype=np.float64)
    mg = m // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for offset in np.ndindex(*kernel):
            patch = xs[(slice(None), slice(None)) + tuple(
                slice(offset[a] * dilations[a], offset[a] * dilations[a] + strides[a] * (out[a] - 1) + 1, strides[a])
                for a in range(3))]
            y[:, g * mg:(g + 1) * mg] += np.einsum("ncdhw,mc->nmdhw", patch, w[(slice(g * mg, (g + 1) * mg), slice(None))
                                                                                + offset])
    if b is not None:
        y += b.reshape(1, -1, 1, 1, 1)
    return y.astype(np.float32)


def pool3d(x, kernel, strides, pads, mode):
    """ONNX MaxPool / AveragePool (count_include_pad=1) over [N, C, D, H, W] by definition."""
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pads[a], pads[a + 3]) for a in range(3)), constant_values=fill)
    out = [(xp.shape[a + 2] - kernel[a]) // strides[a] + 1 for a in range(3)]
    windows = [xp[(slice(None), slice(None)) + tuple(slice(o[a], o[a] + strides[a] * (out[a] - 1) + 1, strides[a])
                                                        for a in range(3))] for o in np.ndindex(*kernel)]
    return np.max(windows, axis=0) if mode == "max" else np.mean(windows, axis=0)


def conv_transpose(x, w, b=None, stride=(1, 1), pads=(0, 0, 0, 0), out_pad=(0, 0), groups=1):
    """ONNX ConvTranspose by its definition: every input element scatters its weighted kernel into the output."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    sh, sw = stride
    full_h, full_w = (h - 1) * sh + kh + out_pad[0], (wd - 1) * sw + kw + out_pad[1]
    y = np.zeros((n, mg * groups, full_h, full_w), dtype=np.float64)
    cg = c // groups
    for g in range(groups):
        for i in range(h):
            for j in range(wd):
                patch = np.einsum("nc,cmrs->nmrs", x[:, g * cg:(g + 1) * cg, i, j], w[g * cg:(g + 1) * cg])
                y[:, g * mg:(g + 1) * mg, i * sh:i * sh + kh, j * sw:j * sw + kw] += patch
    y = y[:, :, pads[0]:full_h - pads[2], pads[1]:full_w - pads[3]]
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def resize_matrix(n_in, n_out, mode, transform, nearest="round_prefer_floor"):
    """ONNX Resize along one axis as an [out, in] matrix (an independent formulation of the same rules)."""
    a = np.zeros((n_out, n_in))
    scale = n_out / n_in
    for o in range(n_out):
        if transform == "asymmetric":
            xs = o / scale
        elif transform == "align_corners":
            xs = 0.0 if n_out == 1 else o * (n_in - 1) / (n_out - 1)
        else:
            xs = (o + 0.5) / scale - 0.5
        if mode == "nearest":
            i = math.floor(xs) if nearest == "floor" else (math.floor(xs) if xs - math.floor(xs) <= 0.5 else math.ceil(xs))
            a[o, min(max(i, 0), n_in - 1)] = 1
        else:
            i0 = math.floor(xs)
            f = xs - i0
            a[o, min(max(i0, 0), n_in - 1)] += 1 - f
            a[o, min(max(i0 + 1, 0), n_in - 1)] += f
    return a


def resize_last_axis(x, n_out, mode, transform):
    """ONNX Resize of the last axis by index arithmetic (half_pixel or align_corners; nearest rounds half down), for
    axes too long for resize_matrix."""
    n_in = x.shape[-1]
    o = np.arange(n_out, dtype=np.float64)
    xs = o * (n_in - 1) / (n_out - 1) if transform == "align_corners" else (o + 0.5) * n_in / n_out - 0.5
    lo = np.floor(xs)
    if mode == "nearest":
        pick = np.where(xs - lo <= 0.5, lo, lo + 1).astype(np.int64)
        return x[..., np.clip(pick, 0, n_in - 1)]
    f = xs - lo
    i0, i1 = np.clip(lo.astype(np.int64), 0, n_in - 1), np.clip(lo.astype(np.int64) + 1, 0, n_in - 1)
    return x[..., i0] * (1 - f) + x[..., i1] * f


def max_pool(x, k, s):
    n, c, h, w = x.shape
    p, q = (h - k) // s + 1, (w - k) // s + 1
    y = np.full((n, c, p, q), -np.inf, dtype=np.float32)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, x[:, :, i:i + s * (p - 1) + 1:s, j:j + s * (q - 1) + 1:s])
    return y


def avg_pool_same3(x):
    """3x3, stride 1, pad 1, padding not counted."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones((h, w), dtype=np.float32), 1)
    total = sum(xp[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3))
    count = sum(ones[i:i + h, j:j + w] for i in range(3) for j in range(3))
    return (total / count).astype(np.float32)


def save(directory, name, model):
    onnx.checker.check_model(model)
    onnx.save(model, str(directory / f"{name}.onnx"))


def cnn(directory):
    """Conv+bias, Relu, MaxPool, 1x1 Conv, BatchNormalization, Clip (ReLU6), Identity, GlobalAveragePool,
    Flatten, Dropout, Gemm (transB, bias), Softmax: opset 13."""
    x = fp16(rng.normal(size=(1, 3, 9, 9)))
    w1, b1 = weights(8, 3, 3, 3), weights(8)
    w2 = weights(6, 8, 1, 1)
    scale, bias, mean = weights(6) + 1, weights(6), weights(6)
    var = fp16(rng.uniform(0.5, 1.5, size=6))
    fw, fb = weights(5, 6), weights(5)
    inits = [numpy_helper.from_array(v, n) for n, v in
             [("w1", w1), ("b1", b1), ("w2", w2), ("scale", scale), ("bias", bias), ("mean", mean), ("var", var),
              ("fw", fw), ("fb", fb), ("lo", np.array(0, np.float32)), ("hi", np.array(6, np.float32))]]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2"),
        helper.make_node("BatchNormalization", ["c2", "scale", "bias", "mean", "var"], ["bn"], name="bn",
                         epsilon=1e-5),
        helper.make_node("Clip", ["bn", "lo", "hi"], ["clip"], name="relu6"),
        helper.make_node("Identity", ["clip"], ["same"], name="identity"),
        helper.make_node("GlobalAveragePool", ["same"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Dropout", ["flat"], ["drop"], name="dropout"),
        helper.make_node("Gemm", ["drop", "fw", "fb"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 9])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 5])], inits)
    save(directory, "cnn", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    np.save(directory / "cnn_x.npy", x)
    y = max_pool(np.maximum(conv(x, w1, b1, pads=(1, 1, 1, 1)), 0), 2, 2)
    y = conv(y, w2)
    y = (y - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) * scale.reshape(1, -1, 1, 1) \
        + bias.reshape(1, -1, 1, 1)
    y = np.clip(y, 0, 6).mean(axis=(2, 3))
    logits = y @ fw.T + fb
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.save(directory / "cnn_probs.npy", (e / e.sum(axis=1, keepdims=True)).astype(np.float32))


def blocks(directory):
    """A residual block (Conv, Relu, Add), an inception-style Concat of a 1x1 branch and a depthwise-separable
    branch (grouped 3x3 Conv, 1x1 Conv), AveragePool and a Reshape from a Constant: opset 11, two outputs."""
    x = fp16(rng.normal(size=(1, 4, 7, 7)))
    wr, w1, wd, wp = weights(4, 4, 3, 3), weights(3, 4, 1, 1), weights(4, 1, 3, 3), weights(2, 4, 1, 1)
    inits = [numpy_helper.from_array(v, n) for n, v in [("wr", wr), ("w1", w1), ("wd", wd), ("wp", wp)]]
    shape = helper.make_tensor("shape_value", TensorProto.INT64, [2], [1, -1])
    nodes = [
        helper.make_node("Conv", ["x", "wr"], ["cr"], name="res_conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["cr"], ["rr"], name="res_relu"),
        helper.make_node("Add", ["rr", "x"], ["sum"], name="res_add"),
        helper.make_node("Conv", ["sum", "w1"], ["b1"], name="branch_1x1"),
        helper.make_node("Conv", ["sum", "wd"], ["dw"], name="depthwise", pads=[1, 1, 1, 1], group=4),
        helper.make_node("Conv", ["dw", "wp"], ["b2"], name="pointwise"),
        helper.make_node("Concat", ["b1", "b2"], ["cat"], name="concat", axis=1),
        helper.make_node("AveragePool", ["cat"], ["avg"], name="avg", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Constant", [], ["shape"], name="shape_const", value=shape),
        helper.make_node("Reshape", ["avg", "shape"], ["out"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, "blocks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 7, 7])],
                              [helper.make_tensor_value_info("sum", TensorProto.FLOAT, [1, 4, 7, 7]),
                               helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 245])], inits)
    save(directory, "blocks", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]))
    np.save(directory / "blocks_x.npy", x)
    s = np.maximum(conv(x, wr, pads=(1, 1, 1, 1)), 0) + x
    cat = np.concatenate([conv(s, w1), conv(conv(s, wd, pads=(1, 1, 1, 1), groups=4), wp)], axis=1)
    np.save(directory / "blocks_sum.npy", s)
    np.save(directory / "blocks_out.npy", avg_pool_same3(cat).reshape(1, -1))


def single_op_models(directory):
    """Every supported op alone, on odd shapes, with [C,1,1] and scalar broadcasting; ops.txt lists them. Each
    model maps input x to output y."""
    x4 = fp16(rng.normal(size=(2, 3, 5, 7)))
    img = fp16(rng.normal(size=(1, 3, 7, 9)))
    mat = fp16(rng.normal(size=(3, 7)))
    chan, scalar = weights(3, 1, 1), fp16(np.array(0.75))
    away = fp16(np.sign(x4) * (np.abs(x4) + 0.5))  # Div's divisor away from 0
    w_conv, b_conv = weights(5, 3, 3, 2), weights(5)
    w_dil = weights(4, 3, 3, 3)
    gw, gc = weights(5, 7), weights(5)
    mw = weights(7, 4)
    bn = [weights(3) + 1, weights(3), weights(3), fp16(rng.uniform(0.5, 1.5, size=3))]
    cat_b = weights(2, 2, 5, 7)
    cases = []

    def case(name, x, y, nodes, inits=(), opset=13):
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)],
                                  [numpy_helper.from_array(as_tensor(v), n) for n, v in inits])
        save(directory, f"op_{name}", helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))
        np.save(directory / f"op_{name}_x.npy", x.astype(np.float32))
        np.save(directory / f"op_{name}_y.npy", np.ascontiguousarray(y, np.float32))
        cases.append(name)

    def as_tensor(v):  # integer arrays (shapes) stay int64, as ONNX requires; values become float32
        v = np.asarray(v)
        return v.astype(np.int64) if v.dtype.kind in "iu" else v.astype(np.float32)

    def node(op, inputs, **attrs):
        return helper.make_node(op, inputs, ["y"], name=f"the_{op.lower()}", **attrs)

    case("relu", x4, np.maximum(x4, 0), [node("Relu", ["x"])])
    case("sigmoid", x4, 1 / (1 + np.exp(-x4)), [node("Sigmoid", ["x"])])
    case("tanh", x4, np.tanh(x4), [node("Tanh", ["x"])])
    case("exp", x4, np.exp(x4), [node("Exp", ["x"])])
    case("sqrt", np.abs(x4), np.sqrt(np.abs(x4)), [node("Sqrt", ["x"])])
    for op, f in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)]:
        case(f"{op.lower()}_channel", x4, f(x4, chan), [node(op, ["x", "b"])], [("b", chan)])
        case(f"{op.lower()}_scalar", x4, f(scalar, x4), [node(op, ["b", "x"])], [("b", scalar)])
    divisor = fp16(chan + 2)
    case("div_channel", away, away / divisor, [node("Div", ["x", "b"])], [("b", divisor)])
    case("div_scalar", away, scalar / away, [node("Div", ["b", "x"])], [("b", scalar)])
    case("clip", x4, np.clip(x4, -0.5, 0.25), [node("Clip", ["x", "lo", "hi"])],
         [("lo", np.array(-0.5)), ("hi", np.array(0.25))])
    case("clip_min_above_max", x4, np.minimum(np.maximum(x4, 0.5), -0.5), [node("Clip", ["x", "lo", "hi"])],
         [("lo", np.array(0.5)), ("hi", np.array(-0.5))])
    case("clip_max_only", x4, np.minimum(x4, 0.25), [node("Clip", ["x", "", "hi"])], [("hi", np.array(0.25))])
    # torch.nan_to_num's IsNaN and IsInf (each sign alone, and both) on an input holding NaN and infinities.
    specials_in = x4.copy()
    specials_in[0, 0, 0, :5] = [np.nan, np.inf, -np.inf, np.nan, -np.inf]
    no_nan = np.where(np.isnan(specials_in), 0.5, specials_in)
    no_inf = np.where(no_nan == np.inf, 100.0, np.where(no_nan == -np.inf, -100.0, no_nan))
    mk_named = lambda op, ins, out, **at: helper.make_node(op, ins, [out], name=out, **at)  # noqa: E731
    case("is_nan_is_inf", specials_in, no_inf + np.isinf(specials_in), [
        mk_named("IsNaN", ["x"], "nan"), mk_named("Where", ["nan", "half", "x"], "a"),
        mk_named("IsInf", ["a"], "up", detect_negative=0), mk_named("Where", ["up", "hundred", "a"], "b"),
        mk_named("IsInf", ["b"], "down", detect_positive=0), mk_named("Where", ["down", "minus_hundred", "b"], "c"),
        mk_named("IsInf", ["x"], "any_inf"), mk_named("Cast", ["any_inf"], "ones", to=TensorProto.FLOAT),
        node("Add", ["c", "ones"])],
        [("half", np.array(0.5)), ("hundred", np.array(100.0)), ("minus_hundred", np.array(-100.0))])
    # EyeLike of a runtime tensor (torch.eye sized by a tensor's shape) folds: an offset diagonal in the input's
    # type, and one below the main diagonal as int64 cast back.
    mk_e = lambda op, ins, out, **at: helper.make_node(op, ins, [out], name=out, **at)  # noqa: E731
    case("eye_like", mat, mat + np.eye(3, 7, 2) + np.eye(3, 7, -1),
         [mk_e("EyeLike", ["x"], "above", k=2), mk_e("EyeLike", ["x"], "below", k=-1, dtype=TensorProto.INT64),
          mk_e("Cast", ["below"], "below_f", to=TensorProto.FLOAT), mk_e("Add", ["x", "above"], "xa"),
          node("Add", ["xa", "below_f"])])
    # Reductions and ArgMax/ArgMin of int32 tensors (a mask's length, GPT-2's and CLIP's pooling position), on
    # trunc(8x) and on trunc(x), which ties often: odd and even axis lengths, axes not adjacent, the last index of
    # ties.
    ints8, ints1 = np.trunc(x4 * 8), np.trunc(x4)
    mk_i = lambda op, ins, out, **at: helper.make_node(op, ins, [out], name=out, **at)  # noqa: E731
    to_ints = [mk_i("Mul", ["x", "eight"], "x8"), mk_i("Cast", ["x8"], "i8", to=TensorProto.INT32),
               mk_i("Cast", ["x"], "i1", to=TensorProto.INT64)]
    eight = [("eight", np.array(8.0))]

    def int_case(name, want, last_nodes, inits=(), opset=13):
        case(name, x4, want, to_ints + last_nodes + [node("Cast", ["r"], to=TensorProto.FLOAT)], eight + list(inits),
             opset=opset)

    int_case("int_reduce_sum_odd_axis", ints8.sum(axis=3), [mk_i("ReduceSum", ["i8", "three"], "r", keepdims=0)],
             [("three", np.array([3]))])
    int_case("int_reduce_max_axes_1_3", ints8.max(axis=(1, 3), keepdims=True),
             [mk_i("ReduceMax", ["i8"], "r", axes=[1, -1])])
    int_case("int_reduce_min_all", ints8.min().reshape(1, 1, 1, 1), [mk_i("ReduceMin", ["i8"], "r")])
    int_case("int_reduce_sum_all_opset11", ints1.sum(keepdims=True), [mk_i("ReduceSum", ["i1"], "r")], opset=11)
    int_case("int_arg_max", ints8.argmax(axis=2), [mk_i("ArgMax", ["i8"], "r", axis=2, keepdims=0)])
    int_case("int_arg_max_last_of_ties", 6 - np.flip(ints1, axis=3).argmax(axis=3)[..., None],
             [mk_i("ArgMax", ["i1"], "r", axis=-1, select_last_index=1)])
    int_case("int_arg_min", ints1.argmin(axis=1), [mk_i("ArgMin", ["i1"], "r", axis=1, keepdims=0)])
    # Concat of int32 tensors (odd widths: words at odd 2-byte offsets) and of bool masks.
    int_case("int_concat", np.concatenate([ints8, ints8[..., 1:4], ints1[..., :1]], axis=3),
             [mk_i("Slice", ["i8", "one", "four", "three"], "mid"), mk_i("Slice", ["i1", "zero_i", "one", "three"], "first"),
              mk_i("Cast", ["first"], "first32", to=TensorProto.INT32),
              mk_i("Concat", ["i8", "mid", "first32"], "r", axis=3)],
             [("one", np.array([1])), ("four", np.array([4])), ("three", np.array([3])), ("zero_i", np.array([0]))])
    case("bool_concat", x4, np.concatenate([x4 > 0, x4[:1] < -0.5], axis=0).astype(np.float32),
         [mk_i("Greater", ["x", "zero_f"], "pos"), mk_i("Slice", ["x", "zero_i", "one", "zero_i"], "head"),
          mk_i("Less", ["head", "minus_half"], "neg"), mk_i("Concat", ["pos", "neg"], "both", axis=0),
          node("Cast", ["both"], to=TensorProto.FLOAT)],
         [("zero_f", np.array(0.0)), ("minus_half", np.array(-0.5)), ("zero_i", np.array([0])), ("one", np.array([1]))])
    # An If on a shape (as torch exports a Python `if x.dim() == 3`, local_response_norm): its condition folds, the
    # branch taken is inlined; here the then branch holds another If on the same condition.
    def branch(name, nodes, out):
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])

    inner_if = helper.make_node("If", ["three_channels"], ["inner_out"], name="inner_if",
                                then_branch=branch("inner_then", [helper.make_node("Relu", ["x"], ["relu_x"])], "relu_x"),
                                else_branch=branch("inner_else", [helper.make_node("Sigmoid", ["x"], ["sig_x"])],
                                                   "sig_x"))
    case("if_known_condition", x4, np.maximum(x4, 0) * 2, [
        mk_named("Shape", ["x"], "shape_x"), mk_named("Gather", ["shape_x", "one_i"], "channels", axis=0),
        mk_named("Equal", ["channels", "three_i"], "three_channels"),
        helper.make_node("If", ["three_channels"], ["chosen"], name="outer_if",
                         then_branch=branch("outer_then", [inner_if], "inner_out"),
                         else_branch=branch("outer_else", [helper.make_node("Neg", ["x"], ["neg_x"])], "neg_x")),
        node("Add", ["chosen", "chosen"])], [("one_i", np.array(1)), ("three_i", np.array(3))])
    # torch.clamp by tensors: runtime scalar bounds (a quarter and a half of x's largest value); and a constant min
    # with a runtime max.
    top = x4.max()
    bounds = [helper.make_node("ReduceMax", ["x"], ["top"], name="top", keepdims=0),
              helper.make_node("Mul", ["top", "quarter"], ["lo"], name="lo"),
              helper.make_node("Mul", ["top", "half"], ["hi"], name="hi")]
    halves = [("quarter", np.array(0.25)), ("half", np.array(0.5))]
    case("clip_runtime_bounds", x4, np.clip(x4, top / 4, top / 2), bounds + [node("Clip", ["x", "lo", "hi"])], halves)
    case("clip_constant_min_runtime_max", x4, np.clip(x4, -0.5, top / 2),
         bounds + [node("Clip", ["x", "minus_half", "hi"])], halves + [("minus_half", np.array(-0.5))])
    case("conv_odd", img, conv(img, w_conv, b_conv, stride=2, pads=(1, 0, 1, 1)),
         [node("Conv", ["x", "w", "b"], strides=[2, 2], pads=[1, 0, 1, 1])], [("w", w_conv), ("b", b_conv)])
    case("conv_dilated", img, conv(img, w_dil, pads=(2, 2, 2, 2), dilation=2),
         [node("Conv", ["x", "w"], dilations=[2, 2], pads=[2, 2, 2, 2])], [("w", w_dil)])
    case("gemm", mat, 0.5 * mat @ gw.T + 2 * gc, [node("Gemm", ["x", "w", "c"], alpha=0.5, beta=2.0, transB=1)],
         [("w", gw), ("c", gc)])
    case("gemm_trans_a", mat.T.copy(), mat @ gw.T, [node("Gemm", ["x", "w"], transA=1, transB=1)], [("w", gw)])
    case("matmul_batched", x4[:, :, :, :], x4 @ mw, [node("MatMul", ["x", "w"])], [("w", mw)])
    case("max_pool", img, max_pool(np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf), 3, 2),
         [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])])
    # Dilated windows (DeepLab-style heads, 1-D audio models): taps d apart, pads of -inf.
    def dilated_max_pool(x, kernel, strides, pads, dilations):
        spatial = len(kernel)
        xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in pads), constant_values=-np.inf)
        out = [(xp.shape[a + 2] - (kernel[a] - 1) * dilations[a] - 1) // strides[a] + 1 for a in range(spatial)]
        return np.max([xp[(slice(None), slice(None)) + tuple(
            slice(o[a] * dilations[a], o[a] * dilations[a] + strides[a] * (out[a] - 1) + 1, strides[a])
            for a in range(spatial))] for o in np.ndindex(*kernel)], axis=0)
    case("max_pool_dilated", img, dilated_max_pool(img, (3, 2), (2, 1), (2, 1), (2, 3)),
         [node("MaxPool", ["x"], kernel_shape=[3, 2], strides=[2, 1], pads=[2, 1, 2, 1], dilations=[2, 3])])
    # ceil_mode: 2x2 windows, stride 2, over 7x9 give 4x5 outputs, the last row and column of windows clipped.
    edge = np.pad(img, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=-np.inf)
    case("max_pool_ceil", img, max_pool(edge, 2, 2),
         [node("MaxPool", ["x"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)])
    values = np.pad(img, ((0, 0), (0, 0), (0, 1), (0, 1)))
    ones = np.pad(np.ones((7, 9), np.float32), ((0, 1), (0, 1)))
    window_sum = lambda a: sum(a[..., i::2, j::2] for i in range(2) for j in range(2))  # noqa: E731
    case("avg_pool_ceil", img, window_sum(values) / window_sum(ones),
         [node("AveragePool", ["x"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)])
    padded = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
    case("avg_pool_include_pad", img, sum(padded[:, :, i:i + 7, j:j + 9] for i in range(3) for j in range(3)) / 9,
         [node("AveragePool", ["x"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)])
    case("global_avg_pool", x4, x4.mean(axis=(2, 3), keepdims=True), [node("GlobalAveragePool", ["x"])])
    scale, bias, mean, var = bn
    case("batch_norm", x4, (x4 - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-3)
         * scale.reshape(1, 3, 1, 1) + bias.reshape(1, 3, 1, 1),
         [node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3)],
         [("s", scale), ("b", bias), ("m", mean), ("v", var)])
    # BatchNorm1d on [N, C] (after a Linear) and [N, C, L], and BatchNorm3d on [N, C, D, H, W].
    for rank, shape in [(2, (2, 3)), (3, (2, 3, 35)), (5, (2, 3, 5, 1, 7))]:
        xr = x4[:, :, 0, 0] if rank == 2 else x4.reshape(shape)
        per_channel = (1, 3) + (1,) * (rank - 2)
        case(f"batch_norm_rank{rank}", xr, (xr - mean.reshape(per_channel)) / np.sqrt(var.reshape(per_channel) + 1e-3)
             * scale.reshape(per_channel) + bias.reshape(per_channel),
             [node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3)],
             [("s", scale), ("b", bias), ("m", mean), ("v", var)])
    case("flatten_axis2", x4, x4.reshape(6, 35), [node("Flatten", ["x"], axis=2)])
    case("reshape_keep_and_infer", x4, x4.reshape(2, 3, 35), [node("Reshape", ["x", "shape"])],
         [("shape", np.array([0, 0, -1]))])
    case("concat_channels", x4, np.concatenate([x4, cat_b], axis=1), [node("Concat", ["x", "b"], axis=1)],
         [("b", cat_b)])
    # T5's relative-position buckets from constant positions: Abs, Log, Min and casts fold at import with
    # float32 arithmetic (in fp16 on the device, distances 16 and 32 fell one bucket low); log(0) = -inf cast to
    # int64 is x86's integer indefinite, which Where then leaves unused.
    length, exact, buckets = 40, 8, 16
    positions = np.arange(length, dtype=np.int64)
    distance = np.abs(positions[None, :] - positions[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(distance.astype(np.float32) / np.float32(exact)) / np.float32(math.log(32 / exact))
        large = exact + (ratio * np.float32(buckets - exact)).astype(np.int64)
    bucket = np.where(distance < exact, distance, np.minimum(large, buckets - 1))
    bias_table = weights(buckets)
    x_rel = fp16(rng.normal(size=(length, length)))
    int_node = lambda op, ins, out, **attrs: helper.make_node(op, ins, [out], name=f"t5_{out}", **attrs)
    case("t5_relative_buckets", x_rel, x_rel + bias_table[bucket], [
        int_node("Unsqueeze", ["pos", "ax0"], "mem"), int_node("Unsqueeze", ["pos", "ax1"], "ctx"),
        int_node("Sub", ["mem", "ctx"], "rel"), int_node("Abs", ["rel"], "dist"),
        int_node("Less", ["dist", "exact_i"], "small"),
        int_node("Cast", ["dist"], "dist_f", to=TensorProto.FLOAT), int_node("Div", ["dist_f", "exact_f"], "scaled"),
        int_node("Log", ["scaled"], "logd"), int_node("Div", ["logd", "log_span"], "ratio"),
        int_node("Mul", ["ratio", "span"], "steps"), int_node("Cast", ["steps"], "steps_i", to=TensorProto.INT64),
        int_node("Add", ["steps_i", "exact_i"], "large"), int_node("Min", ["large", "last"], "clamped"),
        int_node("Where", ["small", "dist", "clamped"], "bucket"), int_node("Gather", ["table", "bucket"], "bias"),
        node("Add", ["x", "bias"])],
        [("pos", positions), ("ax0", np.array([0])), ("ax1", np.array([1])), ("exact_i", np.array(exact)),
         ("exact_f", np.array(exact, np.float32)), ("log_span", np.array(math.log(32 / exact), np.float32)),
         ("span", np.array(buckets - exact, np.float32)), ("last", np.array(buckets - 1)), ("table", bias_table)])
    # Folded casts of floats to int32 (NaN, infinities and values out of range give x86's integer indefinite,
    # -2^31, as numpy's astype does there), Neg and Abs of it wrapping as int32, and Sign of -0.0 (+0: its
    # reciprocal is +inf).
    specials = np.array([2.5, -2.5, 3e9, -3e9, np.nan, np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        as_int = specials.astype(np.int32)
    x_six = fp16(rng.normal(size=(6,)))
    zeros_sign = np.sign(np.array([-0.0, 0.0, -3.0, 4.0], np.float32))
    signs = np.where(1.0 / np.where(zeros_sign == 0, zeros_sign, 1.0) < 0, -1.0, 1.0).astype(np.float32)
    folded = (as_int.astype(np.float32) * np.float32(1e-5) + np.negative(as_int).astype(np.float32) * np.float32(1e-6)
              + np.abs(as_int).astype(np.float32) * np.float32(1e-7) + signs.sum())
    fold_node = lambda op, ins, out, **attrs: helper.make_node(op, ins, [out], name=f"fold_{out}", **attrs)
    case("folded_casts_and_signs", x_six, x_six + folded, [
        fold_node("Cast", ["specials"], "ints", to=TensorProto.INT32), fold_node("Neg", ["ints"], "neg"),
        fold_node("Abs", ["ints"], "abs"), fold_node("Cast", ["ints"], "f_ints", to=TensorProto.FLOAT),
        fold_node("Cast", ["neg"], "f_neg", to=TensorProto.FLOAT), fold_node("Cast", ["abs"], "f_abs", to=TensorProto.FLOAT),
        fold_node("Mul", ["f_ints", "e5"], "a"), fold_node("Mul", ["f_neg", "e6"], "b"),
        fold_node("Mul", ["f_abs", "e7"], "c"), fold_node("Sign", ["zeros"], "sg"),
        fold_node("Equal", ["sg", "zero"], "is_zero"), fold_node("Where", ["is_zero", "sg", "one"], "safe"),
        fold_node("Div", ["one", "safe"], "recip"), fold_node("Less", ["recip", "zero"], "negative"),
        fold_node("Where", ["negative", "minus_one", "one"], "signs"),
        fold_node("ReduceSum", ["signs"], "sign_sum", keepdims=0), fold_node("Add", ["a", "b"], "ab"),
        fold_node("Add", ["ab", "c"], "abc"), fold_node("Add", ["abc", "sign_sum"], "total"), node("Add", ["x", "total"])],
        [("specials", specials), ("e5", np.array(1e-5, np.float32)), ("e6", np.array(1e-6, np.float32)),
         ("e7", np.array(1e-7, np.float32)), ("zeros", np.array([-0.0, 0.0, -3.0, 4.0], np.float32)),
         ("zero", np.array(0.0, np.float32)), ("one", np.array(1.0, np.float32)),
         ("minus_one", np.array(-1.0, np.float32))])
    # torch.stack over 150 loop steps: more inputs than concat takes at once, joined in groups at import.
    steps = [fp16(rng.normal(size=(2, 1, 5, 7))) for _ in range(149)]
    case("concat_150_inputs", x4, np.concatenate([x4] + steps, axis=1),
         [node("Concat", ["x"] + [f"s{i}" for i in range(149)], axis=-3)], [(f"s{i}", v) for i, v in enumerate(steps)])
    # torch.roll by (2, 0) over H and W: the shift of 0 slices nothing off (an empty part, dropped by Concat).
    big = np.iinfo(np.int64).max
    slice_node = lambda x, out, *bounds: helper.make_node("Slice", [x] + list(bounds), [out], name=f"slice_{out}")  # noqa: E731
    case("roll_by_zero", x4, np.roll(x4, (2, 0), axis=(2, 3)), [
        slice_node("x", "tail", "minus2", "end", "h"), slice_node("x", "head", "zero", "minus2", "h"),
        slice_node("x", "nothing", "three", "one", "h"), helper.make_node("Concat", ["tail", "nothing", "head"],
                                                                          ["rolled"], name="join_h", axis=2),
        slice_node("rolled", "all_w", "zero", "end", "w"), slice_node("rolled", "no_w", "zero", "zero", "w"),
        node("Concat", ["all_w", "no_w"], axis=3)],
        [("minus2", np.array([-2])), ("end", np.array([big])), ("zero", np.array([0])), ("three", np.array([3])),
         ("one", np.array([1])), ("h", np.array([2])), ("w", np.array([3]))])
    e = np.exp(mat - mat.max(axis=1, keepdims=True))
    case("softmax_last_axis", mat, e / e.sum(axis=1, keepdims=True), [node("Softmax", ["x"], axis=-1)])
    flat = x4.reshape(2, -1)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    case("softmax_opset11", x4, (e / e.sum(axis=1, keepdims=True)).reshape(x4.shape), [node("Softmax", ["x"])],
         opset=11)
    # CumSum along a middle axis (moved last by transposes), exclusive and reversed; and of an int32 mask.
    run_total = lambda a, axis: np.flip(np.cumsum(np.flip(a, axis), axis), axis)  # noqa: E731
    case("cumsum_reverse_exclusive", x4, run_total(x4, 2) - x4,
         [node("CumSum", ["x", "axis"], exclusive=1, reverse=1)], [("axis", np.array(2))])
    mask = (x4 > 0).astype(np.int64)
    case("cumsum_int_mask", x4, np.cumsum(mask, axis=-1).astype(np.float32),
         [helper.make_node("Greater", ["x", "zero"], ["positive"], name="positive"),
          helper.make_node("Cast", ["positive"], ["ones"], name="to_int", to=TensorProto.INT64),
          helper.make_node("CumSum", ["ones", "axis"], ["sums"], name="cumsum"),
          helper.make_node("Cast", ["sums"], ["y"], name="to_float", to=TensorProto.FLOAT)],
         [("zero", np.array(0.0)), ("axis", np.array(-1))])
    # Arithmetic of runtime integer tensors (RoBERTa's position ids `cumsum(mask) * mask + pad`): Mul, Add, Sub, Div
    # (truncating), Mod (the divisor's sign, and fmod 1's dividend's), Clip, Abs and Neg of int64 values, held as int32.
    q = np.trunc(fp16(x4 * 10)).astype(np.int64)
    a = q * q + 3
    ints = (a // 7 + np.sign(q) * (np.abs(q) // 4) + np.mod(q, -4) + np.fmod(q, 3) + np.clip(a - 100, -20, 50)
            - np.abs(-q))
    int_nodes = [("Mul", ["x", "ten"], "scaled", {}), ("Cast", ["scaled"], "q", {"to": TensorProto.INT64}),
                 ("Mul", ["q", "q"], "square", {}), ("Add", ["square", "three"], "a", {}),
                 ("Div", ["a", "seven"], "b", {}), ("Div", ["q", "four"], "c", {}),
                 ("Mod", ["q", "minus_four"], "d", {}), ("Mod", ["q", "three"], "g", {"fmod": 1}),
                 ("Sub", ["a", "hundred"], "a100", {}), ("Clip", ["a100", "lo", "hi"], "e", {}),
                 ("Neg", ["q"], "minus_q", {}), ("Abs", ["minus_q"], "f", {}),
                 ("Add", ["b", "c"], "bc", {}), ("Add", ["bc", "d"], "bcd", {}), ("Add", ["bcd", "g"], "bcdg", {}),
                 ("Add", ["bcdg", "e"], "sum", {}), ("Sub", ["sum", "f"], "total", {}),
                 ("Cast", ["total"], "y", {"to": TensorProto.FLOAT})]
    case("integer_arithmetic", x4, ints.astype(np.float32),
         [helper.make_node(op, i, [o], name=f"n_{o}", **kw) for op, i, o, kw in int_nodes],
         [("ten", np.array(10.0)), ("three", np.array(3)), ("seven", np.array(7)), ("four", np.array(4)),
          ("minus_four", np.array(-4)), ("hundred", np.array(100)), ("lo", np.array(-20)), ("hi", np.array(50))])
    # TopK gives values and int64 indices (held as int32): over a middle axis by transposes (torch.topk(x, 2, dim=1)),
    # and every element smallest first (torch.sort exports as TopK); values plus indices compared as one tensor.
    def top_k(a, k, axis, largest):
        order = np.argsort(-a if largest else a, axis=axis, kind="stable")
        order = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(a, order, axis=axis) + order
    for name, k, axis, largest in [("topk_axis1", 2, 1, 1), ("topk_sort_ascending", 7, -1, 0)]:
        case(name, x4, top_k(x4, k, axis, largest).astype(np.float32),
             [helper.make_node("TopK", ["x", "k"], ["values", "i"], name="topk", axis=axis, largest=largest),
              helper.make_node("Cast", ["i"], ["fi"], name="to_float", to=TensorProto.FLOAT),
              helper.make_node("Add", ["values", "fi"], ["y"], name="sum")], [("k", np.array([k]))])
    # ArgMax and ArgMin give int64 indices (held as int32), cast to float for the comparison: a segmentation map's
    # class per pixel; ties of the rounded values go to the first index, or the last with select_last_index.
    case("argmax_axis1", x4, np.argmax(x4, axis=1).astype(np.float32),
         [helper.make_node("ArgMax", ["x"], ["i"], name="argmax", axis=1, keepdims=0),
          helper.make_node("Cast", ["i"], ["y"], name="to_float", to=TensorProto.FLOAT)])
    ties = fp16(np.round(x4 * 2) / 2)
    case("argmin_last_index", ties, (ties.shape[3] - 1 - np.argmin(ties[..., ::-1], axis=3, keepdims=True))
         .astype(np.float32), [helper.make_node("ArgMin", ["x"], ["i"], name="argmin", axis=-1, select_last_index=1),
                               helper.make_node("Cast", ["i"], ["y"], name="to_float", to=TensorProto.FLOAT)])
    # From opset 13 Softmax normalises one axis, whichever it is (ResNeSt's split attention, a segmentation head).
    # Over [2, 6, 1, 1]'s channels the later axes have size 1: softmax alone, without transposes.
    column = fp16(rng.normal(size=(2, 6, 1, 1)))
    e = np.exp(column - column.max(axis=1, keepdims=True))
    case("softmax_unit_tail", column, e / e.sum(axis=1, keepdims=True), [node("Softmax", ["x"], axis=1)])
    for axis, opset in [(1, 13), (-4, 17)]:
        e = np.exp(x4 - x4.max(axis=axis, keepdims=True))
        case(f"softmax_axis{axis}_opset{opset}", x4, e / e.sum(axis=axis, keepdims=True),
             [node("Softmax", ["x"], axis=axis)], opset=opset)
    positive = fp16(np.abs(x4) + 0.25)
    case("log", positive, np.log(positive), [node("Log", ["x"])])
    case("reciprocal", away, 1 / away, [node("Reciprocal", ["x"])])
    case("erf", x4, np.vectorize(math.erf)(x4), [node("Erf", ["x"])])
    case("pow_scalar", positive, positive ** 3.0, [node("Pow", ["x", "e"])], [("e", np.array(3.0))])
    # ONNX's Pow takes an integer exponent (T1) with a float base: a constant one is held as fp16.
    case("pow_integer_exponent", positive, positive ** 3.0, [node("Pow", ["x", "e"])], [("e", np.array(3))])
    case("reduce_sum_axes_input", x4, x4.sum(axis=(2, 3)), [node("ReduceSum", ["x", "axes"], keepdims=0)],
         [("axes", np.array([2, 3]))])
    case("reduce_sum_opset11", x4, x4.sum(axis=1, keepdims=True), [node("ReduceSum", ["x"], axes=[1])], opset=11)
    # Axes that are not adjacent: one reduction per block of adjacent axes.
    case("reduce_max_axes_1_3", x4, x4.max(axis=(1, 3)), [node("ReduceMax", ["x"], axes=[-1, 1], keepdims=0)])
    case("reduce_mean_axes_0_2", x4, x4.mean(axis=(0, 2), keepdims=True), [node("ReduceMean", ["x"], axes=[0, 2])])
    case("reduce_sum_axes_0_1_3", x4, x4.sum(axis=(0, 1, 3)), [node("ReduceSum", ["x", "axes013"], keepdims=0)],
         [("axes013", np.array([3, 0, 1]))])
    case("reduce_mean_last", x4, x4.mean(axis=-1, keepdims=True), [node("ReduceMean", ["x"], axes=[-1])])
    case("reduce_max_middle", x4, x4.max(axis=1), [node("ReduceMax", ["x"], axes=[1], keepdims=0)])
    case("reduce_min_all", x4, x4.min(keepdims=True), [node("ReduceMin", ["x"])])
    # BERT's decomposed LayerNorm over the last axis and its exact GELU (Div, Erf, Add, Mul, Mul), as exported.
    gamma, beta = weights(7) + 1, weights(7)
    mu = x4.mean(axis=-1, keepdims=True)
    var = ((x4 - mu) ** 2).mean(axis=-1, keepdims=True)
    mk = helper.make_node
    case("layer_norm_decomposed", x4, (x4 - mu) / np.sqrt(var + 1e-5) * gamma + beta,
         [mk("ReduceMean", ["x"], ["mu"], axes=[-1]), mk("Sub", ["x", "mu"], ["d"]),
          mk("Pow", ["d", "two"], ["d2"]), mk("ReduceMean", ["d2"], ["var"], axes=[-1]),
          mk("Add", ["var", "eps"], ["ve"]), mk("Sqrt", ["ve"], ["sd"]), mk("Div", ["d", "sd"], ["n"]),
          mk("Mul", ["n", "gamma"], ["ng"]), mk("Add", ["ng", "beta"], ["y"])],
         [("two", np.array(2.0)), ("eps", np.array(1e-5)), ("gamma", gamma), ("beta", beta)])
    erf = np.vectorize(math.erf)
    case("gelu_decomposed", x4, x4 * 0.5 * (1 + erf(x4 / math.sqrt(2))),
         [mk("Div", ["x", "root2"], ["s"]), mk("Erf", ["s"], ["e"]), mk("Add", ["e", "one"], ["e1"]),
          mk("Mul", ["x", "e1"], ["xe"]), mk("Mul", ["xe", "half"], ["y"])],
         [("root2", np.array(math.sqrt(2))), ("one", np.array(1.0)), ("half", np.array(0.5))])
    # A weight large enough to stay undecoded at import (over 4096 elements), used directly and through a folded
    # Unsqueeze: both constants hold the one initializer's data, taken once.
    xw, ww = fp16(rng.normal(size=(1, 64, 72))), weights(64, 72)
    case("weight_shared_by_fold", xw, (xw + ww) * ww.reshape(1, 64, 72),
         [mk("Add", ["x", "w"], ["s"]), mk("Unsqueeze", ["w", "axes"], ["w3"]), mk("Mul", ["s", "w3"], ["y"])],
         [("w", ww), ("axes", np.array([0]))])
    case("transpose_last_two", x4, np.swapaxes(x4, -1, -2), [node("Transpose", ["x"], perm=[0, 1, 3, 2])])
    case("transpose_default", mat, mat.T, [node("Transpose", ["x"])])
    case("reduce_sum_noop", x4, x4, [node("ReduceSum", ["x"], noop_with_empty_axes=1)])
    case("identity_of_relu", x4, np.maximum(x4, 0), [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                                                     helper.make_node("Identity", ["r"], ["y"], name="id")])
    case("layer_norm_no_bias_unnamed_outputs", x4, (x4 - mu) / np.sqrt(var + 1e-5) * gamma,
         [helper.make_node("LayerNormalization", ["x", "gamma"], ["y", "", ""], name="ln", axis=-1)],
         [("gamma", gamma)], opset=17)
    case("layer_norm", x4, (x4 - mu) / np.sqrt(var + 1e-5) * gamma + beta,
         [node("LayerNormalization", ["x", "gamma", "beta"], axis=-1, epsilon=1e-5)],
         [("gamma", gamma), ("beta", beta)], opset=17)
    # Post-2018 networks: any transpose, slices and splits, gathers and expands of runtime tensors, hard
    # activations, variadic and element-wise min/max, 1-D windows, masks folded from constants.
    x5 = fp16(rng.normal(size=(1, 4, 3, 5, 7)))
    case("transpose_shuffle", x5, x5.transpose(0, 2, 1, 3, 4), [node("Transpose", ["x"], perm=[0, 2, 1, 3, 4])])
    case("transpose_heads", x4, x4.transpose(0, 2, 1, 3), [node("Transpose", ["x"], perm=[0, 2, 1, 3])])
    case("transpose_nhwc", x4, x4.transpose(0, 2, 3, 1), [node("Transpose", ["x"], perm=[0, 2, 3, 1])])
    case("transpose_reverse", x4, x4.transpose(3, 2, 1, 0), [node("Transpose", ["x"], perm=[3, 2, 1, 0])])
    big = np.iinfo(np.int64).max
    case("slice_steps", x4, x4[:, 1:, ::-2, 1:6:2], [node("Slice", ["x", "st", "en", "ax", "sp"])],
         [("st", np.array([1, -1, 1])), ("en", np.array([big, -big - 1, 6])), ("ax", np.array([1, 2, 3])),
          ("sp", np.array([1, -2, 2]))])
    case("slice_no_axes", x4, x4[:1, :2], [node("Slice", ["x", "st", "en"])],
         [("st", np.array([0, 0])), ("en", np.array([1, 2]))])
    case("split_sub", x4, x4[:, :, :2] - x4[:, :, 2:4],
         [mk("Split", ["x", "sizes"], ["a", "b", "c"], name="split", axis=2), mk("Sub", ["a", "b"], ["y"])],
         [("sizes", np.array([2, 2, 1]))])
    case("split_attribute_opset11", mat, mat[:, 3:], [mk("Split", ["x"], ["a", "y"], name="split", axis=1, split=[3, 4])],
         opset=11)
    case("gather_scalar_index", x4, x4[:, 0], [node("Gather", ["x", "i"], axis=1)], [("i", np.array(0))])
    case("gather_indices", x4, x4[:, :, [4, 0, 2]], [node("Gather", ["x", "i"], axis=2)], [("i", np.array([4, -5, 2]))])
    row = fp16(rng.normal(size=(1, 5, 1)))
    case("expand_runtime", row, np.broadcast_to(row, (3, 5, 4)), [node("Expand", ["x", "shape"])],
         [("shape", np.array([3, 1, 4]))])
    # ViT's class token expanded to the batch: the shape comes out of Equal and Where over constants.
    case("expand_where_folded", row, np.broadcast_to(row, (2, 5, 3)),
         [mk("Equal", ["target", "minus_one"], ["eq"]), mk("Where", ["eq", "ones", "target"], ["shape"]),
          mk("Expand", ["x", "shape"], ["y"])],
         [("target", np.array([2, -1, 3])), ("minus_one", np.array(-1)), ("ones", np.array([1, 1, 1]))])
    hard_sigmoid = lambda v, a=0.2, b=0.5: np.clip(a * v + b, 0, 1)  # noqa: E731
    case("hard_sigmoid", x4, hard_sigmoid(x4, 0.4, 0.3),
         [node("HardSigmoid", ["x"], alpha=0.4, beta=0.3)])
    case("hard_swish", fp16(x4 * 3), fp16(x4 * 3) * hard_sigmoid(fp16(x4 * 3), 1 / 6, 0.5), [node("HardSwish", ["x"])],
         opset=14)
    case("neg_abs", x4, -x4 + np.abs(x4), [mk("Neg", ["x"], ["n"]), mk("Abs", ["x"], ["a"]), mk("Add", ["n", "a"], ["y"])])
    case("min_max", x4, np.maximum(np.minimum(x4, chan), scalar),
         [mk("Min", ["x", "c"], ["m"]), mk("Max", ["m", "s"], ["y"])], [("c", chan), ("s", scalar)])
    case("sum_three", x4, x4 + chan + scalar, [node("Sum", ["x", "c", "s"])], [("c", chan), ("s", scalar)])
    case("mean_two", x4, (x4 + chan) / 2, [node("Mean", ["x", "c"])], [("c", chan)])
    case("max_one", x4, x4 * 1, [helper.make_node("Max", ["x"], ["m"], name="max_one"),
                                helper.make_node("Relu", ["m"], ["r"]), helper.make_node("Sub", ["m", "r"], ["n"]),
                                helper.make_node("Add", ["n", "r"], ["y"])])
    seq = fp16(rng.normal(size=(2, 3, 11)))
    w1d, b1d = weights(4, 3, 3), weights(4)
    conv1d = conv(seq[:, :, None, :], w1d[:, :, None, :], b1d, stride=2, pads=(0, 1, 0, 2))[:, :, 0, :]
    case("conv1d", seq, conv1d, [node("Conv", ["x", "w", "b"], kernel_shape=[3], strides=[2], pads=[1, 2])],
         [("w", w1d), ("b", b1d)])
    case("max_pool1d", seq, np.maximum.reduce([seq[:, :, i:i + 9] for i in range(3)]),
         [node("MaxPool", ["x"], kernel_shape=[3], strides=[1])])
    case("max_pool1d_dilated", seq, dilated_max_pool(seq[:, :, None, :], (1, 3), (1, 2), (0, 2), (1, 2))[:, :, 0, :],
         [node("MaxPool", ["x"], kernel_shape=[3], strides=[2], pads=[2, 2], dilations=[2])])
    case("avg_pool1d", seq, (seq[:, :, 0:10:2] + seq[:, :, 1:11:2]) / 2,
         [node("AveragePool", ["x"], kernel_shape=[2], strides=[2])])
    # 3-D windows (video and volumetric nets): the depth window unrolled into the 2-D engine's channels.
    vol = fp16(rng.normal(size=(2, 4, 5, 6, 7)))
    w3, b3 = weights(6, 2, 3, 2, 3), weights(6)
    case("conv3d", vol, conv3d(vol, w3, b3, strides=(2, 1, 2), pads=(1, 0, 1, 1, 1, 0), dilations=(1, 2, 1), groups=2),
         [node("Conv", ["x", "w", "b"], kernel_shape=[3, 2, 3], strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0],
               dilations=[1, 2, 1], group=2)], [("w", w3), ("b", b3)])
    w3p = weights(3, 4, 1, 3, 3)
    case("conv3d_pointwise_depth", vol, conv3d(vol, w3p, pads=(0, 1, 1, 0, 1, 1)),
         [node("Conv", ["x", "w"], pads=[0, 1, 1, 0, 1, 1])], [("w", w3p)])
    case("max_pool3d", vol, pool3d(vol, (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), "max"),
         [node("MaxPool", ["x"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1])])
    case("avg_pool3d", vol, pool3d(vol, (2, 3, 2), (1, 2, 2), (1, 1, 0, 1, 1, 0), "avg"),
         [node("AveragePool", ["x"], kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 1, 0, 1, 1, 0],
               count_include_pad=1)])
    for mode in ["constant", "reflect", "edge"]:
        extra = {"constant_values": 0.5} if mode == "constant" else {}
        inputs = ["x", "pads", "value"] if mode == "constant" else ["x", "pads"]
        inits = [("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1]))]
        if mode == "constant":
            inits.append(("value", np.array(0.5)))
        case(f"pad_{mode}", x4, np.pad(x4, ((0, 0), (0, 0), (1, 2), (2, 1)), mode=mode, **extra),
             [node("Pad", inputs, mode=mode)], inits)
    # Negative pads crop before the positive ones pad: H loses 1 row on top and grows 2 below, W loses 2 on the right.
    cropped = x4[:, :, 1:, :-2]
    for mode in ["constant", "reflect"]:
        extra = {"constant_values": 0.5} if mode == "constant" else {}
        inputs = ["x", "pads", "value"] if mode == "constant" else ["x", "pads"]
        inits = [("pads", np.array([0, 0, -1, 0, 0, 0, 2, -2]))] + ([("value", np.array(0.5))] if extra else [])
        case(f"pad_negative_{mode}", x4, np.pad(cropped, ((0, 0), (0, 0), (0, 2), (0, 0)), mode=mode, **extra),
             [node("Pad", inputs, mode=mode)], inits)
    # Families in miniature: an attention block (q/k/v by Slice, heads split and merged by Transpose, a causal mask),
    # a ShuffleNet unit (Split, channel shuffle), a ConvNeXt block (NHWC LayerNorm between Transposes, GELU by Erf).
    seq_x = fp16(rng.normal(size=(1, 6, 8)))
    wqkv = weights(8, 24)
    causal = np.triu(np.full((6, 6), -np.inf, np.float32), 1)
    qkv = seq_x @ wqkv
    heads = lambda t: t.reshape(1, 6, 2, 4).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(qkv[..., :8]), heads(qkv[..., 8:16]), heads(qkv[..., 16:])
    scores = q @ k.transpose(0, 1, 3, 2) * 0.5 + causal
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    att = (p / p.sum(axis=-1, keepdims=True)) @ v
    big = np.iinfo(np.int64).max
    case("attention_block", seq_x, att.transpose(0, 2, 1, 3).reshape(1, 6, 8),
         [mk("MatMul", ["x", "wqkv"], ["qkv"]),
          mk("Slice", ["qkv", "s0", "s8", "ax"], ["q"]), mk("Slice", ["qkv", "s8", "s16", "ax"], ["k"]),
          mk("Slice", ["qkv", "s16", "end", "ax"], ["v"]),
          *[mk("Reshape", [t, "heads"], [t + "4"]) for t in "qkv"],
          *[mk("Transpose", [t + "4"], [t + "h"], perm=[0, 2, 1, 3]) for t in "qv"],
          mk("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
          mk("MatMul", ["qh", "kt"], ["s"]), mk("Mul", ["s", "half"], ["ss"]), mk("Add", ["ss", "mask"], ["sm"]),
          mk("Softmax", ["sm"], ["pr"], axis=-1), mk("MatMul", ["pr", "vh"], ["o"]),
          mk("Transpose", ["o"], ["om"], perm=[0, 2, 1, 3]), mk("Reshape", ["om", "merged"], ["y"])],
         [("wqkv", wqkv), ("s0", np.array([0])), ("s8", np.array([8])), ("s16", np.array([16])),
          ("end", np.array([big])), ("ax", np.array([2])), ("heads", np.array([1, 6, 2, 4])), ("half", np.array(0.5)),
          ("mask", causal), ("merged", np.array([1, 6, 8]))])
    unit = fp16(rng.normal(size=(1, 8, 3, 5)))
    w_branch = weights(4, 4, 1, 1)
    left, right = unit[:, :4], np.maximum(conv(unit[:, 4:], w_branch), 0)
    joined = np.concatenate([left, right], 1)
    case("shufflenet_unit", unit, joined.reshape(1, 2, 4, 3, 5).transpose(0, 2, 1, 3, 4).reshape(1, 8, 3, 5),
         [mk("Split", ["x"], ["a", "b"], axis=1), mk("Conv", ["b", "w"], ["bc"]), mk("Relu", ["bc"], ["br"]),
          mk("Concat", ["a", "br"], ["j"], axis=1), mk("Reshape", ["j", "g"], ["j5"]),
          mk("Transpose", ["j5"], ["jt"], perm=[0, 2, 1, 3, 4]), mk("Reshape", ["jt", "back"], ["y"])],
         [("w", w_branch), ("g", np.array([1, 2, 4, 3, 5])), ("back", np.array([1, 8, 3, 5]))], opset=13)
    img6 = fp16(rng.normal(size=(1, 6, 3, 5)))
    gln, bln, wmlp = weights(6) + 1, weights(6), weights(6, 6)
    nhwc = img6.transpose(0, 2, 3, 1)
    mu6, var6 = nhwc.mean(-1, keepdims=True), nhwc.var(-1, keepdims=True)
    hidden = ((nhwc - mu6) / np.sqrt(var6 + 1e-6) * gln + bln) @ wmlp
    gelu = hidden * 0.5 * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
    case("convnext_block", img6, img6 + gelu.transpose(0, 3, 1, 2),
         [mk("Transpose", ["x"], ["h"], perm=[0, 2, 3, 1]),
          mk("LayerNormalization", ["h", "g", "b"], ["n"], axis=-1, epsilon=1e-6), mk("MatMul", ["n", "w"], ["m"]),
          mk("Div", ["m", "root2"], ["d"]), mk("Erf", ["d"], ["e"]), mk("Add", ["e", "one"], ["e1"]),
          mk("Mul", ["m", "e1"], ["me"]), mk("Mul", ["me", "half"], ["ge"]),
          mk("Transpose", ["ge"], ["back"], perm=[0, 3, 1, 2]), mk("Add", ["x", "back"], ["y"])],
         [("g", gln), ("b", bln), ("w", wmlp), ("root2", np.array(math.sqrt(2))), ("one", np.array(1.0)),
          ("half", np.array(0.5))], opset=17)
    # Constant folds seen in Swin: Mod (Python's sign), a Transpose and Reshape of a pads matrix, ScatterND of a mask,
    # and a Dropout of ratio 0 in training mode (the identity).
    mat23 = fp16(rng.normal(size=(2, 3)))
    mask = np.zeros((2, 3), np.float32)
    mask[1] = [1, 2, 3]
    case("swin_folds", mat23, np.pad(mat23 + mask, ((0, 1), (0, 2))),
         [mk("Mod", ["minus7", "four"], ["m"]), mk("Unsqueeze", ["m", "axis0"], ["m1"]),
          mk("Concat", ["zero1", "m1", "zero1", "two1"], ["flat"], axis=0), mk("Reshape", ["flat", "two_two"], ["pairs"]),
          mk("Transpose", ["pairs"], ["begins_ends"], perm=[1, 0]), mk("Reshape", ["begins_ends", "four1"], ["pads"]),
          mk("ScatterND", ["zeros", "row1", "values"], ["mask"]),
          mk("Dropout", ["x", "ratio0", "training"], ["d"]), mk("Add", ["d", "mask"], ["s"]),
          mk("Pad", ["s", "pads"], ["y"])],
         [("minus7", np.array(-7)), ("four", np.array(4)), ("axis0", np.array([0])), ("zero1", np.array([0])),
          ("two1", np.array([2])), ("two_two", np.array([2, 2])), ("four1", np.array([4])),
          ("zeros", np.zeros((2, 3), np.float32)), ("row1", np.array([[1]])),
          ("values", np.array([[1.0, 2.0, 3.0]], np.float32)), ("ratio0", np.array(0.0, np.float32)),
          ("training", np.array(True))])
    # Pow and Sqrt of constants fold (a transformer's `scores / d ** 0.5`); an integer Pow keeps integers.
    case("power_folds", x4, x4 / 8.0 * 2.0 + 8.0,
         [helper.make_node("Pow", ["d", "half"], ["root_d"], name="scale_pow"),
          helper.make_node("Sqrt", ["four"], ["two"], name="root_sqrt"),
          helper.make_node("Pow", ["two_i", "three_i"], ["eight_i"], name="int_pow"),
          helper.make_node("Cast", ["eight_i"], ["eight"], name="to_float", to=TensorProto.FLOAT),
          mk("Div", ["x", "root_d"], ["a"]), mk("Mul", ["a", "two"], ["b"]), mk("Add", ["b", "eight"], ["y"])],
         [("d", np.array(64.0)), ("half", np.array(0.5)), ("four", np.array(4.0)), ("two_i", np.array(2)),
          ("three_i", np.array(3))])
    small = fp16(rng.normal(size=(1, 4, 5, 6)))
    wt, bt = weights(4, 3, 2, 2), weights(3)
    case("conv_transpose_up2", small, conv_transpose(small, wt, bt, stride=(2, 2)),
         [node("ConvTranspose", ["x", "w", "b"], kernel_shape=[2, 2], strides=[2, 2])], [("w", wt), ("b", bt)])
    wt3 = weights(4, 2, 3, 3)
    case("conv_transpose_pads_groups", small,
         conv_transpose(small, wt3, stride=(2, 2), pads=(1, 1, 1, 1), out_pad=(1, 0), groups=2),
         [node("ConvTranspose", ["x", "w"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 0], group=2)],
         [("w", wt3)])
    case("conv_transpose_crop", small, conv_transpose(small, wt, stride=(1, 1), pads=(1, 0, 0, 1)),
         [node("ConvTranspose", ["x", "w"], pads=[1, 0, 0, 1])], [("w", wt)])
    # A 1-D ConvTranspose (an audio decoder's upsampling): the 2-D one over [N, C, 1, L], referenced in 2-D.
    seq, wt1, bt1 = fp16(rng.normal(size=(2, 4, 9))), weights(4, 3, 4), weights(6)
    case("conv_transpose_1d", seq, conv_transpose(seq[:, :, None, :], wt1[:, :, None, :], bt1, stride=(1, 3),
                                                  pads=(0, 2, 0, 1), out_pad=(0, 1), groups=2)[:, :, 0, :],
         [node("ConvTranspose", ["x", "w", "b"], strides=[3], pads=[2, 1], output_padding=[1], group=2)],
         [("w", wt1), ("b", bt1)])
    ah, aw = resize_matrix(5, 10, "linear", "half_pixel"), resize_matrix(6, 12, "linear", "half_pixel")
    case("resize_bilinear", small, np.einsum("oh,nchw,pw->ncop", ah, small, aw),
         [node("Resize", ["x", "", "scales"], mode="linear")], [("scales", np.array([1, 1, 2, 2], np.float32))])
    ah, aw = resize_matrix(5, 10, "nearest", "asymmetric", "floor"), resize_matrix(6, 12, "nearest", "asymmetric",
                                                                                   "floor")
    case("resize_nearest", small, np.einsum("oh,nchw,pw->ncop", ah, small, aw),
         [node("Resize", ["x", "", "scales"], mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")], [("scales", np.array([1, 1, 2, 2], np.float32))])
    ah, aw = resize_matrix(5, 7, "linear", "align_corners"), resize_matrix(6, 4, "linear", "align_corners")
    case("resize_sizes_align_corners", small, np.einsum("oh,nchw,pw->ncop", ah, small, aw),
         [node("Resize", ["x", "", "", "sizes"], mode="linear", coordinate_transformation_mode="align_corners")],
         [("sizes", np.array([1, 4, 7, 4]))])
    # Axes too long for a dense interpolation matrix (in x out > 2^22; these would exceed the 2^25 elements of all
    # folds) resize by gathers: a 1-D signal linear and nearest, and a tall image whose H is gathered while its W
    # takes the matrix.
    signal = fp16(rng.normal(size=(1, 2, 4097)))
    case("resize_linear_long_signal", signal, resize_last_axis(signal, 9001, "linear", "half_pixel"),
         [node("Resize", ["x", "", "", "sizes"], mode="linear")], [("sizes", np.array([1, 2, 9001]))])
    case("resize_nearest_long_signal", signal, resize_last_axis(signal, 8194, "nearest", "half_pixel"),
         [node("Resize", ["x", "", "scales"], mode="nearest")], [("scales", np.array([1, 1, 2], np.float32))])
    tall = fp16(rng.normal(size=(1, 1, 5800, 3)))
    along_h = np.swapaxes(resize_last_axis(np.swapaxes(tall, 2, 3), 5801, "linear", "align_corners"), 2, 3)
    case("resize_tall_image", tall,
         np.einsum("nchw,pw->nchp", along_h, resize_matrix(3, 5, "linear", "align_corners")),
         [node("Resize", ["x", "", "", "sizes"], mode="linear", coordinate_transformation_mode="align_corners")],
         [("sizes", np.array([1, 1, 5801, 5]))])
    # A volume resized in depth too (F.interpolate(mode="trilinear") and nearest): depth by gathers.
    volume = fp16(rng.normal(size=(1, 2, 3, 4, 5)))
    ad, ah, aw = (resize_matrix(3, 6, "linear", "half_pixel"), resize_matrix(4, 8, "linear", "half_pixel"),
                  resize_matrix(5, 7, "linear", "half_pixel"))
    case("resize_trilinear", volume, np.einsum("ed,ncdhw,oh,pw->nceop", ad, volume, ah, aw),
         [node("Resize", ["x", "", "", "sizes"], mode="linear")], [("sizes", np.array([1, 2, 6, 8, 7]))])
    ad = resize_matrix(3, 6, "nearest", "asymmetric", "floor")
    case("resize_volume_nearest_depth_only", volume, np.einsum("ed,ncdhw->ncehw", ad, volume),
         [node("Resize", ["x", "", "scales"], mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")], [("scales", np.array([1, 1, 2, 1, 1], np.float32))])
    # The rectifier family, softplus and softsign (ONNX's definitions), PRelu with PyTorch's [C, 1, 1] slope.
    case("leaky_relu", x4, np.where(x4 < 0, np.float32(0.1) * x4, x4), [node("LeakyRelu", ["x"], alpha=0.1)])
    case("elu", x4, np.where(x4 < 0, 1.5 * (np.exp(x4) - 1), x4), [node("Elu", ["x"], alpha=1.5)])
    selu_alpha, selu_gamma = 1.67326319217681884765625, 1.05070102214813232421875
    case("selu", x4, np.where(x4 <= 0, selu_gamma * (selu_alpha * np.exp(x4) - selu_alpha), selu_gamma * x4),
         [node("Selu", ["x"])])
    case("celu", x4, np.maximum(0, x4) + np.minimum(0, 2.0 * (np.exp(x4 / 2.0) - 1)),
         [node("Celu", ["x"], alpha=2.0)])
    case("thresholded_relu", x4, np.where(x4 > 0.25, x4, 0), [node("ThresholdedRelu", ["x"], alpha=0.25)])
    case("softplus", x4, np.log1p(np.exp(x4)), [node("Softplus", ["x"])])
    case("softsign", x4, x4 / (1 + np.abs(x4)), [node("Softsign", ["x"])])
    case("prelu", x4, np.where(x4 < 0, chan * x4, x4), [node("PRelu", ["x", "slope"])], [("slope", chan)])
    scaled = fp16(x4 * 3)  # values with whole and half parts for the rounding ops
    for op, f in [("Sin", np.sin), ("Cos", np.cos), ("Floor", np.floor), ("Ceil", np.ceil), ("Round", np.round),
                  ("Sign", np.sign)]:
        case(op.lower(), scaled, f(scaled), [node(op, ["x"])])
    halves = fp16(np.round(x4 * 6) / 2)  # many exact halves: Round takes them to even
    case("round_halves", halves, np.round(halves), [node("Round", ["x"])])
    # Norm reductions: an L2 norm of values whose squares overflow fp16 and of an all-zero slice, LogSumExp of values
    # whose exponentials would.
    big = fp16(x4 * 300)
    big[1, :, 2, :] = 0
    case("reduce_l2_large", big, np.sqrt((big.astype(np.float64) ** 2).sum(axis=1)),
         [node("ReduceL2", ["x"], axes=[1], keepdims=0)])
    case("reduce_l1", x4, np.abs(x4).sum(axis=(2, 3), keepdims=True), [node("ReduceL1", ["x"], axes=[2, 3])])
    case("reduce_sum_square", x4, (x4 ** 2).sum(axis=3, keepdims=True), [node("ReduceSumSquare", ["x"], axes=[3])])
    hot = fp16(x4 * 40)
    peak = hot.astype(np.float64).max(axis=1)
    case("reduce_log_sum_exp", hot, peak + np.log(np.exp(hot - peak[:, None]).sum(axis=1)),
         [node("ReduceLogSumExp", ["x"], axes=[1], keepdims=0)])
    case("tile", x4, np.tile(x4, (1, 2, 1, 3)), [node("Tile", ["x", "reps"])], [("reps", np.array([1, 2, 1, 3]))])
    # Trilu of a run-time tensor (a where over a constant mask: masked infinities become 0) and of a constant (folded,
    # as a causal mask is built), GlobalMaxPool.
    edgy = x4.copy()
    edgy[0, 0, 4, 0] = np.inf
    case("trilu_upper", edgy, np.triu(edgy, 1), [node("Trilu", ["x", "one"])], [("one", np.array(1))], opset=14)
    case("trilu_lower", x4, np.tril(x4, -2), [node("Trilu", ["x", "minus_two"], upper=0)],
         [("minus_two", np.array(-2))], opset=14)
    case("trilu_of_constant", x4, x4 * np.triu(np.ones((5, 7), np.float32)),
         [helper.make_node("Trilu", ["ones"], ["causal"], name="causal"), node("Mul", ["x", "causal"])],
         [("ones", np.ones((5, 7), np.float32))], opset=14)
    # Trilu of a run-time bool mask (an ALiBi/causal mask at a length too large to fold) and of int32 values.
    mk_t = lambda op, ins, out, **at: helper.make_node(op, ins, [out], name=out, **at)  # noqa: E731
    case("trilu_bool_and_int", x4, np.where(np.triu(x4 > 0), 1.0, 0.0) + np.tril(np.trunc(x4 * 4), -1),
         [mk_t("Greater", ["x", "zero"], "positive"), mk_t("Trilu", ["positive"], "upper_positive"),
          mk_t("Cast", ["upper_positive"], "as_float", to=TensorProto.FLOAT),
          mk_t("Mul", ["x", "four"], "x4"), mk_t("Cast", ["x4"], "ints", to=TensorProto.INT32),
          mk_t("Trilu", ["ints", "minus_one"], "lower_ints", upper=0),
          mk_t("Cast", ["lower_ints"], "lower", to=TensorProto.FLOAT), node("Add", ["as_float", "lower"])],
         [("zero", np.array(0.0)), ("four", np.array(4.0)), ("minus_one", np.array(-1))], opset=14)
    case("global_max_pool", x4, x4.max(axis=(2, 3), keepdims=True), [node("GlobalMaxPool", ["x"])])
    # InstanceNormalization over each channel's spatial elements; DepthToSpace in both modes and SpaceToDepth by
    # their element mappings; LogSoftmax over one axis (opset 13) and over the 2-D view from axis 1 (opset 11).
    in_scale, in_bias = weights(3) + 1, weights(3)
    mean, var = x4.mean(axis=(2, 3), keepdims=True), x4.var(axis=(2, 3), keepdims=True)
    case("instance_norm", x4, in_scale.reshape(3, 1, 1) * (x4 - mean) / np.sqrt(var + 1e-3) + in_bias.reshape(3, 1, 1),
         [node("InstanceNormalization", ["x", "s", "b"], epsilon=1e-3)], [("s", in_scale), ("b", in_bias)])
    deep = fp16(rng.normal(size=(2, 8, 3, 5)))
    for mode in ("DCR", "CRD"):
        out = np.zeros((2, 2, 6, 10), np.float32)
        for c, i, j in itertools.product(range(2), range(2), range(2)):
            source = (i * 2 + j) * 2 + c if mode == "DCR" else c * 4 + i * 2 + j
            out[:, c, i::2, j::2] = deep[:, source]
        case(f"depth_to_space_{mode.lower()}", deep, out, [node("DepthToSpace", ["x"], blocksize=2, mode=mode)])
    wide = fp16(rng.normal(size=(2, 3, 4, 6)))
    out = np.zeros((2, 12, 2, 3), np.float32)
    for c, i, j in itertools.product(range(3), range(2), range(2)):
        out[:, (i * 2 + j) * 3 + c] = wide[:, c, i::2, j::2]
    case("space_to_depth", wide, out, [node("SpaceToDepth", ["x"], blocksize=2)])
    case("log_softmax_axis", x4, x4 - x4.max(axis=2, keepdims=True) - np.log(
        np.exp(x4 - x4.max(axis=2, keepdims=True)).sum(axis=2, keepdims=True)), [node("LogSoftmax", ["x"], axis=2)])
    flat = x4.reshape(2, -1)
    case("log_softmax_2d_view", x4, (flat - flat.max(axis=1, keepdims=True) - np.log(
        np.exp(flat - flat.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))).reshape(x4.shape),
         [node("LogSoftmax", ["x"], axis=1)], opset=11)
    # A reduction of a constant folds at import: PyTorch's std divides by the element count, ReduceProd of a shape.
    # More folded reductions: the mean of integers stays an integer (ONNX types it so), ReduceSum's axes input.
    const = lambda name, value: helper.make_node(  # noqa: E731
        "Constant", [], [name], name=name, value=numpy_helper.from_array(np.asarray(value), name + "_value"))
    case("reduce_mean_of_integers", x4, 2 * x4,
         [const("ints", np.array([2, 3], np.int64)),
          helper.make_node("ReduceMean", ["ints"], ["mean"], name="mean", keepdims=0),
          helper.make_node("Cast", ["mean"], ["mean_f"], name="cast", to=TensorProto.FLOAT),
          node("Mul", ["x", "mean_f"])])
    rows = fp16(rng.normal(size=(2, 7)))
    case("reduce_sum_of_constant_axes", x4, x4 * rows.sum(axis=0),
         [const("rows", rows), const("axis0", np.array([0], np.int64)),
          helper.make_node("ReduceSum", ["rows", "axis0"], ["column_sums"], name="sums", keepdims=0),
          node("Mul", ["x", "column_sums"])])
    case("reduce_prod_of_shape", x4, x4 / 35.0,
         [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
          helper.make_node("Slice", ["shape", "two", "four"], ["hw"], name="spatial"),
          helper.make_node("ReduceProd", ["hw"], ["count"], name="count", keepdims=0),
          helper.make_node("Cast", ["count"], ["count_f"], name="cast", to=TensorProto.FLOAT),
          node("Div", ["x", "count_f"])], [("two", np.array([2])), ("four", np.array([4]))])
    # Einsum: both operands at run time (attention scores, spaced as torchvision's MaxViT writes it), a constant
    # operand with the implicit output, ellipsis axes broadcast from size 1, one operand summed and transposed, three
    # operands, an index summed within one operand before the contraction, and an outer product.
    heads = fp16(rng.normal(size=(1, 2, 3, 5, 4)))
    case("einsum_attention", heads, np.einsum("bghid,bghjd->bghij", heads, heads),
         [node("Einsum", ["x", "x"], equation="B G H I D, B G H J D -> B G H I J")], opset=12)
    seq = fp16(rng.normal(size=(2, 3, 7)))
    w74 = weights(7, 4)
    case("einsum_implicit", seq, np.einsum("bij,jk", seq, w74), [node("Einsum", ["x", "w"], equation="bij,jk")],
         [("w", w74)], opset=12)
    ba, a_big_b = fp16(rng.normal(size=(3, 2))), weights(2, 4)
    case("einsum_implicit_cases", ba, np.einsum("ba,aB->Bb", ba, a_big_b),  # ASCII order: 'B' before 'b'
         [node("Einsum", ["x", "w"], equation="ba,aB")], [("w", a_big_b)], opset=12)
    quad, w222, w2 = fp16(rng.normal(size=(2, 2, 2, 2))), weights(2, 2, 2), weights(2)
    case("einsum_outer_waits", quad, np.einsum("abcd,efg,d->abcefg", quad, w222, w2),  # rank 7 if taken in order
         [node("Einsum", ["x", "u", "v"], equation="abcd,efg,d->abcefg")], [("u", w222), ("v", w2)], opset=12)
    lone = fp16(rng.normal(size=(2, 1, 4, 5)))
    w356 = weights(3, 5, 6)
    case("einsum_ellipsis_broadcast", lone, np.einsum("...ij,...jk->...ik", lone, w356),
         [node("Einsum", ["x", "w"], equation="...ij,...jk->...ik")], [("w", w356)], opset=12)
    case("einsum_sum_transpose", seq, np.einsum("bij->jb", seq), [node("Einsum", ["x"], equation="bij->jb")],
         opset=12)
    m34, w45, w52 = fp16(rng.normal(size=(3, 4))), weights(4, 5), weights(5, 2)
    case("einsum_three", m34, np.einsum("ij,jk,kl->il", m34, w45, w52),
         [node("Einsum", ["x", "u", "v"], equation="ij,jk,kl->il")], [("u", w45), ("v", w52)], opset=12)
    b234, w245 = fp16(rng.normal(size=(2, 3, 4))), weights(2, 4, 5)
    case("einsum_summed_within", b234, np.einsum("bij,bjk->bk", b234, w245),
         [node("Einsum", ["x", "w"], equation="bij,bjk->bk")], [("w", w245)], opset=12)
    vec, w3 = fp16(rng.normal(size=(5,))), weights(3)
    case("einsum_outer", vec, np.einsum("i,j->ij", vec, w3), [node("Einsum", ["x", "w"], equation="i,j->ij")],
         [("w", w3)], opset=12)
    (directory / "ops.txt").write_text("".join(f"{c}\n" for c in cases))


def edge_models(directory):
    """Infinities and NaN through the import's lowerings and folds, checked value by value by the test (a relative
    comparison cannot tell inf from inf): ReduceL2 of a slice with +inf, ReduceLogSumExp of an all -inf slice and
    of one with +inf, ReduceMax of a constant holding NaN folded at import."""
    inf = np.float32(np.inf)
    x = np.array([[1, 2, inf, 3], [-inf, -inf, -inf, -inf], [1, 2, 3, inf]], np.float32)
    value_info = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
    nodes = [helper.make_node("ReduceL2", ["x"], ["l2"], name="l2", axes=[1], keepdims=0),
             helper.make_node("ReduceLogSumExp", ["x"], ["lse"], name="lse", axes=[1], keepdims=0),
             helper.make_node("Constant", [], ["nan_row"], name="nan_row",
                              value=numpy_helper.from_array(np.array([np.nan, 1], np.float32), "nan_row_value")),
             helper.make_node("ReduceMax", ["nan_row"], ["nan_max"], name="nan_max", keepdims=0),
             helper.make_node("Add", ["l2", "nan_max"], ["with_nan"], name="with_nan")]
    graph = helper.make_graph(nodes, "edges", [value_info("x", [3, 4])],
                              [value_info("l2", [3]), value_info("lse", [3]), value_info("with_nan", [3])])
    save(directory, "edges", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    np.save(directory / "edges_x.npy", x)


def shape_models(directory, opset):
    """PyTorch's shape computations, folded at import: x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat,
    Reshape), a constant Expand to the batch size, ConstantOfShape, Cast, Range, and Unsqueeze/Squeeze of a runtime
    tensor (a reshape)."""
    x = fp16(rng.normal(size=(2, 3, 4, 5)))
    const = lambda name, value: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name + "_value"))
    axes = lambda name, values, inputs: (  # noqa: E731 (an attribute before opset 13, an input from 13 on)
        dict(inputs=inputs, attrs=dict(axes=values)) if opset < 13 else
        dict(inputs=inputs + [name], attrs={}))
    nodes = [
        const("zero", np.array(0, np.int64)), const("three", np.array(3, np.int64)),
        const("minus_one", np.array([-1], np.int64)), const("sixty", np.array([60], np.int64)),
        const("half", np.array([0.5], np.float32)), const("ax0", np.array([0], np.int64)),
        const("ax1", np.array([1], np.int64)), const("one", np.array(1, np.int64)),
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["batch"], name="gather_batch", axis=0),
    ]
    u = axes("ax0", [0], ["batch"])
    nodes += [
        helper.make_node("Unsqueeze", u["inputs"], ["batch1"], name="unsqueeze_batch", **u["attrs"]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["view_shape"], name="concat_shape", axis=0),
        helper.make_node("Reshape", ["x", "view_shape"], ["flat"], name="view"),
        helper.make_node("Concat", ["batch1", "sixty"], ["full_shape"], name="concat_full", axis=0),
        helper.make_node("Expand", ["half", "full_shape"], ["halves"], name="expand"),
        helper.make_node("Add", ["flat", "halves"], ["plus_half"], name="add_halves"),
        helper.make_node("ConstantOfShape", ["full_shape"], ["zeros"], name="zeros",
                         value=numpy_helper.from_array(np.array([0.25], np.float32), "fill")),
        helper.make_node("Sub", ["plus_half", "zeros"], ["plus_quarter"], name="sub_zeros"),
        helper.make_node("Gather", ["s", "three"], ["width"], name="gather_width", axis=0),
        helper.make_node("Cast", ["width"], ["width_f"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Div", ["plus_quarter", "width_f"], ["scaled"], name="div_width"),
        helper.make_node("Range", ["zero", "batch", "one"], ["rows"], name="range"),
        helper.make_node("Cast", ["rows"], ["rows_f"], name="cast_rows", to=TensorProto.FLOAT),
    ]
    u = axes("ax1", [1], ["rows_f"])
    nodes.append(helper.make_node("Unsqueeze", u["inputs"], ["row_col"], name="unsqueeze_rows", **u["attrs"]))
    nodes.append(helper.make_node("Add", ["scaled", "row_col"], ["with_rows"], name="add_rows"))
    u = axes("ax1", [1], ["with_rows"])
    nodes.append(helper.make_node("Unsqueeze", u["inputs"], ["lifted"], name="unsqueeze_runtime", **u["attrs"]))
    u = axes("ax1", [1], ["lifted"])
    nodes.append(helper.make_node("Squeeze", u["inputs"], ["y"], name="squeeze_runtime", **u["attrs"]))
    graph = helper.make_graph(nodes, "shapes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 60])])
    name = f"shapes{opset}"
    save(directory, name, helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))
    np.save(directory / f"{name}_x.npy", x)
    np.save(directory / f"{name}_y.npy", ((x.reshape(2, 60) + 0.5 - 0.25) / 5 + np.array([[0.0], [1.0]]))
            .astype(np.float32))


def bad_models(directory, cnn_bytes):
    """Models the importer must refuse before anything runs."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    # Three independent causes, and two nodes that only read a failed node's output (counted, not listed).
    nodes = [
        helper.make_node("LRN", ["x"], ["a"], name="norm", size=3),
        helper.make_node("Relu", ["a"], ["ra"], name="after_norm"),
        helper.make_node("Sigmoid", ["ra"], ["sa"], name="after_after_norm"),
        helper.make_node("AveragePool", ["x"], ["b"], name="pool_dilated", kernel_shape=[2, 2], dilations=[2, 2]),
        helper.make_node("Einsum", ["x"], ["y"], name="einsum", equation="ncii->nci"),
    ]
    graph = helper.make_graph(nodes, "unsupported", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "unsupported.onnx"))
    # 3-D windows the importer cannot run exactly: each a problem naming its node.
    x5 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 4, 4])
    w5 = numpy_helper.from_array(np.zeros((3, 2, 3, 3, 3), np.float32), "w")
    windows = [
        helper.make_node("AveragePool", ["x"], ["a"], name="avg_depth_pad_exclusive", kernel_shape=[3, 3, 3],
                         pads=[1, 1, 1, 1, 1, 1]),
        helper.make_node("MaxPool", ["x"], ["b"], name="max_ceil_depth", kernel_shape=[2, 2, 2], strides=[2, 2, 2],
                         ceil_mode=1),
        helper.make_node("MaxPool", ["x"], ["c"], name="max_pad_past_window", kernel_shape=[2, 1, 1],
                         pads=[2, 0, 0, 2, 0, 0]),
        helper.make_node("Conv", ["x", "w"], ["y"], name="conv_wrong_kernel", kernel_shape=[3, 3, 1]),
    ]
    onnx.save(helper.make_model(helper.make_graph(windows, "bad_3d", [x5], [y], [w5]),
                                opset_imports=[helper.make_opsetid("", 13)]), str(directory / "bad_3d.onnx"))
    # A kernel_shape that is not the weights' window, on a 1-D conv and a ConvTranspose; a 1-D ConvTranspose with
    # 2-D pads, and one whose weights are 2-D.
    seq = helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 2, 9])
    img = helper.make_tensor_value_info("i", TensorProto.FLOAT, [1, 2, 4, 4])
    kernels = [helper.make_node("Conv", ["s", "w3"], ["c"], name="conv1d_wrong_kernel", kernel_shape=[1]),
               helper.make_node("ConvTranspose", ["i", "w4"], ["t"], name="convt_wrong_kernel", kernel_shape=[2, 2]),
               helper.make_node("ConvTranspose", ["s", "w3"], ["u"], name="convt1d_2d_pads", pads=[1, 1, 1, 1]),
               helper.make_node("ConvTranspose", ["s", "w4"], ["y"], name="convt_mixed_ranks")]
    inits = [numpy_helper.from_array(np.zeros(shape, np.float32), n)
             for n, shape in [("w3", (2, 2, 3)), ("w4", (2, 2, 3, 3))]]
    onnx.save(helper.make_model(helper.make_graph(kernels, "bad_kernels", [seq, img], [y], inits),
                                opset_imports=[helper.make_opsetid("", 13)]), str(directory / "bad_kernels.onnx"))
    # Einsum equations that do not fit their inputs, each a problem naming its node.
    m = helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 3])
    einsums = [helper.make_node("Einsum", ["m", "m"], [f"e{i}"], name=name, equation=eq) for i, (name, eq) in
               enumerate([("rank", "ijk,jk->i"), ("sizes", "ij,ji->ij"), ("terms", "ij->ji"),
                           ("stray", "ij,kj->iz"), ("twice", "ij,ij->ii"), ("letter", "i1,ij->j"),
                           ("ellipsis_left_out", "...j,...j->j")])]
    einsums.append(helper.make_node("Einsum", ["m"], ["y"], name="arrows", equation="ij->j->i"))
    onnx.save(helper.make_model(helper.make_graph(einsums, "bad_einsum", [m], [y]),
                                opset_imports=[helper.make_opsetid("", 13)]), str(directory / "bad_einsum.onnx"))
    # Rearrangements and InstanceNormalization that do not fit their inputs.
    cube = helper.make_tensor_value_info("cube", TensorProto.FLOAT, [1, 6, 4, 5])
    misfits = [helper.make_node("DepthToSpace", ["cube"], ["d"], name="channels_not_blocks", blocksize=2),
               helper.make_node("SpaceToDepth", ["cube"], ["s"], name="width_not_blocks", blocksize=2),
               helper.make_node("InstanceNormalization", ["cube", "s4", "b6"], ["y"], name="scale_not_channels")]
    onnx.save(helper.make_model(helper.make_graph(misfits, "bad_rearrange", [cube], [y], [
        numpy_helper.from_array(np.ones(4, np.float32), "s4"), numpy_helper.from_array(np.ones(6, np.float32), "b6")]),
        opset_imports=[helper.make_opsetid("", 13)]), str(directory / "bad_rearrange.onnx"))
    # A Slice that takes nothing feeds an op other than Concat (which drops empty inputs).
    empty = helper.make_graph([helper.make_node("Slice", ["x", "zero", "zero", "axis"], ["e"], name="take_nothing"),
                               helper.make_node("Relu", ["e"], ["y"], name="relu_of_nothing")], "empty_input", [x], [y],
                              [numpy_helper.from_array(np.array([0], np.int64), "zero"),
                               numpy_helper.from_array(np.array([3], np.int64), "axis")])
    onnx.save(helper.make_model(empty, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "empty_input.onnx"))
    # An empty slice that does not fit the Concat it feeds, and an empty graph output; and a Resize of an axis of
    # 2^40 elements (an Expand's), whose interpolation would index past int32.
    ax = lambda v: numpy_helper.from_array(np.array([v], np.int64), f"n{v}")  # noqa: E731
    e_out = helper.make_tensor_value_info("no_columns", TensorProto.FLOAT, None)
    bad_empty = helper.make_graph([
        helper.make_node("Slice", ["x", "n0", "n0", "n3"], ["no_columns"], name="no_columns"),
        helper.make_node("Slice", ["x", "n0", "n0", "n2"], ["no_rows"], name="no_rows"),
        helper.make_node("Concat", ["no_rows", "x"], ["y"], name="join_misfit", axis=3)], "bad_empty", [x],
        [y, e_out], [ax(0), ax(2), ax(3)])
    onnx.save(helper.make_model(bad_empty, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "bad_empty.onnx"))
    row = helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 1])
    huge = helper.make_graph([
        helper.make_node("Expand", ["r", "wide"], ["wide_r"], name="expand_wide"),
        helper.make_node("Resize", ["wide_r", "", "", "sizes"], ["y"], name="resize_wide", mode="nearest")],
        "resize_huge", [row], [y], [numpy_helper.from_array(np.array([1, 1 << 40], np.int64), "wide"),
                                    numpy_helper.from_array(np.array([1, 1 << 24], np.int64), "sizes")])
    onnx.save(helper.make_model(huge, opset_imports=[helper.make_opsetid("", 13)]), str(directory / "resize_huge.onnx"))
    # An If whose condition is computed at run time.
    runtime_if = helper.make_graph([
        helper.make_node("ReduceMax", ["x"], ["peak"], name="peak", keepdims=0),
        helper.make_node("Greater", ["peak", "zero_f"], ["positive"], name="positive"),
        helper.make_node("If", ["positive"], ["y"], name="runtime_if",
                         then_branch=helper.make_graph([helper.make_node("Relu", ["x"], ["a"])], "t", [],
                                                       [helper.make_tensor_value_info("a", TensorProto.FLOAT, None)]),
                         else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["b"])], "e", [],
                                                       [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)]))],
        "runtime_if", [x], [y], [numpy_helper.from_array(np.array(0.0, np.float32), "zero_f")])
    onnx.save(helper.make_model(runtime_if, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "runtime_if.onnx"))
    old = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "old", [x], [y])
    onnx.save(helper.make_model(old, opset_imports=[helper.make_opsetid("", 9)]), str(directory / "opset9.onnx"))
    onnx.save(helper.make_model(old, opset_imports=[helper.make_opsetid("", 18)]), str(directory / "opset18.onnx"))
    # An element type outside ONNX's enum, and a Reshape target whose dims no double holds exactly.
    odd_type = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "odd_type",
                                 [helper.make_tensor_value_info("x", 999, [2])], [y])
    onnx.save(helper.make_model(odd_type, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "elem_type_999.onnx"))
    huge_shape = numpy_helper.from_array(np.array([1 << 62, (1 << 62) + 1], np.int64), "target")
    reshape = helper.make_graph([helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape_huge")],
                                "reshape_huge", [x], [y], [huge_shape])
    onnx.save(helper.make_model(reshape, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "reshape_huge.onnx"))
    sym = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "symbolic",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
    onnx.save(helper.make_model(sym, opset_imports=[helper.make_opsetid("", 13)]), str(directory / "symbolic.onnx"))
    np.save(directory / "symbolic_x.npy", np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32))
    (directory / "truncated.onnx").write_bytes(cnn_bytes[: len(cnn_bytes) // 2])
    # Shape subgraphs that cannot fold: an index past the shape, a runtime tensor expanded to a shape it does not
    # broadcast to, a Cast of a runtime tensor to an integer type, and a folded constant far too large.
    consts = [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(np.asarray(v, np.int64), n + "_v"))
              for n, v in [("nine", 9), ("big", [1 << 20, 1 << 20])]]
    fold = helper.make_graph(consts + [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "nine"], ["g"], name="gather_past_end", axis=0),
        helper.make_node("Expand", ["x", "nine"], ["e"], name="expand_mismatch"),
        helper.make_node("Cast", ["x"], ["i"], name="cast_to_string", to=TensorProto.STRING),
        helper.make_node("ConstantOfShape", ["big"], ["z"], name="huge_zeros"),
        helper.make_node("Relu", ["x"], ["y"], name="relu"),
    ], "bad_folds", [x], [y])
    onnx.save(helper.make_model(fold, opset_imports=[helper.make_opsetid("", 13)]), str(directory / "bad_folds.onnx"))
    # Broken wiring: a node redefining the graph input, one reading a name nothing defines (its consumer is
    # skipped, not listed), a float Gather index, a constant as a graph output, a rank-9 initializer.
    c = helper.make_tensor_value_info("c", TensorProto.INT64, None)
    wiring = helper.make_graph([
        helper.make_node("Identity", ["x"], ["x"], name="self_alias"),
        helper.make_node("Relu", ["ghost"], ["a"], name="uses_ghost"),
        helper.make_node("Relu", ["a"], ["b"], name="after_ghost"),
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["one_f"], name="float_one", value_float=1.0),
        helper.make_node("Gather", ["s", "one_f"], ["g"], name="float_index", axis=0),
        helper.make_node("Constant", [], ["c"], name="const_out", value_ints=[1, 2]),
        helper.make_node("Add", ["x", "deep"], ["y"], name="add_deep"),
    ], "bad_wiring", [x], [y, c], [numpy_helper.from_array(np.zeros([1] * 9, np.float32), "deep")])
    onnx.save(helper.make_model(wiring, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "bad_wiring.onnx"))
    # Nine folds of 2^22 elements each from one small initializer: over the 2^25 budget of all folds.
    big = numpy_helper.from_array(np.array([1 << 22], np.int64), "big")
    budget = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["big"], [f"z{k}"], name=f"zeros{k}") for k in range(9)]
        + [helper.make_node("Relu", ["x"], ["y"], name="relu")], "fold_budget", [x], [y], [big])
    onnx.save(helper.make_model(budget, opset_imports=[helper.make_opsetid("", 13)]),
              str(directory / "fold_budget.onnx"))


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def torch_lstm(x, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """One direction of PyTorch's LSTM in its own terms: gates i, f, g, o; zero initial state. Returns Y, h, c."""
    hidden = w_hh.shape[1]
    h, c = np.zeros((x.shape[1], hidden)), np.zeros((x.shape[1], hidden))
    ys = [None] * x.shape[0]
    for t in (reversed(range(x.shape[0])) if reverse else range(x.shape[0])):
        i, f, g, o = np.split(x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c


def torch_gru(x, w_ih, w_hh, b_ih, b_hh, h):
    """PyTorch's GRU: gates r, z, n; the reset gate applied after the recurrent product (ONNX linear_before_reset)."""
    ys = []
    for t in range(x.shape[0]):
        xr, xz, xn = np.split(x[t] @ w_ih.T + b_ih, 3, axis=1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        h = (1 - z) * np.tanh(xn + r * hn) + z * h
        ys.append(h)
    return np.stack(ys), h


def onnx_gru(x, w, r, wb, rb, h, reverse=False):
    """ONNX's GRU with linear_before_reset 0 (gates z, r, h): R_h multiplies r * h."""
    wz, wr, wh = np.split(w, 3)
    rz, rr, rh = np.split(r, 3)
    wbz, wbr, wbh = np.split(wb, 3)
    rbz, rbr, rbh = np.split(rb, 3)
    ys = [None] * x.shape[0]
    for t in (reversed(range(x.shape[0])) if reverse else range(x.shape[0])):
        z = sigmoid(x[t] @ wz.T + h @ rz.T + wbz + rbz)
        rg = sigmoid(x[t] @ wr.T + h @ rr.T + wbr + rbr)
        h = (1 - z) * np.tanh(x[t] @ wh.T + (rg * h) @ rh.T + wbh + rbh) + z * h
        ys[t] = h
    return np.stack(ys), h


def onnx_lstm(x, w, r, b, h, c, reverse=False):
    """ONNX's LSTM (gates i, o, f, c; b = [Wb, Rb]) from the states h, c. Returns Y, h, c."""
    ys = [None] * x.shape[0]
    wb, rb = np.split(b, 2)
    for t in (reversed(range(x.shape[0])) if reverse else range(x.shape[0])):
        i, o, f, g = np.split(x[t] @ w.T + wb + h @ r.T + rb, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        ys[t] = h
    return np.stack(ys), h, c


def by_length(cell, x, lens, *state):
    """ONNX's meaning of sequence_lens for one direction of a cell: each batch element runs over its own first
    lens[b] steps (a reverse pass starts at its last valid one); Y is zero past them. `cell(x_b, *state_b)` returns
    (Y, states...) for one element; `state` are [batch, hidden] arrays. Returns Y [seq, batch, hidden], states."""
    seq, batch = x.shape[0], x.shape[1]
    ys = np.zeros((seq, batch, state[0].shape[1]))
    finals = [np.zeros_like(s) for s in state]
    for b in range(batch):
        out = cell(x[:lens[b], b:b + 1], *[s[b:b + 1] for s in state])
        ys[:lens[b], b] = out[0][:, 0]
        for k, f in enumerate(out[1:]):
            finals[k][b] = f[0]
    return (ys, *finals)


def recurrent(directory):
    """LSTM and GRU as PyTorch exports them and in ONNX's own forms. rnn_torch: a bidirectional LSTM whose initial
    states come from Shape/Gather/Unsqueeze/Concat/Expand, weights drawn in PyTorch's gate order (i, f, g, o; GRU
    r, z, n) and reordered as torch.onnx does (ONNX i, o, f, c; z, r, h), PyTorch's Transpose/Reshape of Y (batch
    1), then a GRU with linear_before_reset 1 and a Squeeze. gru_onnx: a bidirectional GRU with linear_before_reset
    0, batch 3, a constant initial_h, B left out and a full sequence_lens. lstm_last: an LSTM with only Y_h named."""
    mk = helper.make_node
    seq, inp, hid, ghid = 6, 5, 7, 3
    x = fp16(rng.normal(size=(seq, 1, inp)))
    lstm_dirs = [[weights(4 * hid, inp), weights(4 * hid, hid), weights(4 * hid), weights(4 * hid)] for _ in range(2)]
    iofc = lambda a: np.concatenate([a[0:hid], a[3 * hid:4 * hid], a[hid:2 * hid], a[2 * hid:3 * hid]])  # noqa: E731
    lw = np.stack([iofc(d[0]) for d in lstm_dirs])
    lr = np.stack([iofc(d[1]) for d in lstm_dirs])
    lb = np.stack([np.concatenate([iofc(d[2]), iofc(d[3])]) for d in lstm_dirs])
    fwd, h_f, c_f = torch_lstm(x, *lstm_dirs[0])
    bwd, h_b, c_b = torch_lstm(x, *lstm_dirs[1], reverse=True)
    layer = fp16(np.concatenate([fwd, bwd], axis=2))  # [seq, 1, 2*hid], stored in fp16 between layers
    g = [weights(3 * ghid, 2 * hid), weights(3 * ghid, ghid), weights(3 * ghid), weights(3 * ghid)]
    zrh = lambda a: np.concatenate([a[ghid:2 * ghid], a[0:ghid], a[2 * ghid:]])  # noqa: E731
    gy, gh = torch_gru(layer, *g, np.zeros((1, ghid)))
    const = lambda name, value: mk(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name + "_value"))
    nodes = [const("zero_state", np.zeros((1, 1, 1), np.float32)), const("idx1", np.array(1, np.int64)),
             const("ax0", np.array([0], np.int64)), const("two", np.array([2], np.int64)),
             const("hid", np.array([hid], np.int64)),
             mk("Shape", ["x"], ["xs"], name="shape"), mk("Gather", ["xs", "idx1"], ["batch"], name="gather", axis=0),
             mk("Unsqueeze", ["batch", "ax0"], ["batch1"], name="unsqueeze"),
             mk("Concat", ["two", "batch1", "hid"], ["state_shape"], name="concat", axis=0),
             mk("Expand", ["zero_state", "state_shape"], ["h0"], name="expand_h"),
             mk("Expand", ["zero_state", "state_shape"], ["c0"], name="expand_c"),
             mk("LSTM", ["x", "lw", "lr", "lb", "", "h0", "c0"], ["ly", "lyh", "lyc"], name="lstm",
                direction="bidirectional", hidden_size=hid),
             mk("Transpose", ["ly"], ["lt"], name="transpose", perm=[0, 2, 1, 3]),
             mk("Reshape", ["lt", "flat_shape"], ["layer"], name="reshape"),
             mk("GRU", ["layer", "gw", "gr", "gb"], ["gy", "y_h"], name="gru", hidden_size=ghid,
                linear_before_reset=1),
             mk("Squeeze", ["gy", "ax1"], ["y"], name="squeeze")]
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
             [("lw", lw), ("lr", lr), ("lb", lb), ("gw", zrh(g[0])[None]), ("gr", zrh(g[1])[None]),
              ("gb", np.concatenate([zrh(g[2]), zrh(g[3])])[None])]]
    inits += [numpy_helper.from_array(np.array([seq, 1, 2 * hid], np.int64), "flat_shape"),
              numpy_helper.from_array(np.array([1], np.int64), "ax1")]
    graph = helper.make_graph(nodes, "rnn_torch", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [seq, 1, ghid]),
                               helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [1, 1, ghid])], inits)
    save(directory, "rnn_torch", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    np.save(directory / "rnn_torch_x.npy", x)
    np.save(directory / "rnn_torch_y.npy", gy.astype(np.float32))
    np.save(directory / "rnn_torch_y_h.npy", gh[None].astype(np.float32))

    # ONNX's GRU form: linear_before_reset 0, bidirectional, batch 3, initial_h given, B left out.
    seq, batch, inp, hid = 5, 3, 4, 6
    x = fp16(rng.normal(size=(seq, batch, inp)))
    w, r = weights(2, 3 * hid, inp), weights(2, 3 * hid, hid)
    h0 = weights(2, batch, hid)
    zeros = np.zeros(3 * hid)
    fwd, hf = onnx_gru(x, w[0], r[0], zeros, zeros, h0[0])
    bwd, hb = onnx_gru(x, w[1], r[1], zeros, zeros, h0[1], reverse=True)
    y = np.stack([fwd, bwd], axis=1)
    nodes = [mk("GRU", ["x", "w", "r", "", "lens", "h0"], ["y", "y_h"], name="gru", direction="bidirectional",
                hidden_size=hid, activations=["Sigmoid", "Tanh", "Sigmoid", "Tanh"])]
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in [("w", w), ("r", r), ("h0", h0)]]
    inits.append(numpy_helper.from_array(np.full(batch, seq, np.int32), "lens"))
    graph = helper.make_graph(nodes, "gru_onnx", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape),
                               helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [2, batch, hid])], inits)
    save(directory, "gru_onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    np.save(directory / "gru_onnx_x.npy", x)
    np.save(directory / "gru_onnx_y.npy", y.astype(np.float32))
    np.save(directory / "gru_onnx_y_h.npy", np.stack([hf, hb]).astype(np.float32))

    # Only Y_h named: Y and Y_c get names of their own.
    lw1, lr1 = weights(1, 4 * hid, inp), weights(1, 4 * hid, hid)
    onnx_dir = [lw1[0], lr1[0], np.zeros(4 * hid), np.zeros(4 * hid)]
    ifgo = lambda a: np.concatenate([a[0:hid], a[2 * hid:3 * hid], a[3 * hid:], a[hid:2 * hid]])  # noqa: E731
    _, h_last, _ = torch_lstm(x, *[ifgo(a) for a in onnx_dir])
    # A later node's output has the name the importer would make up for Y: the made-up name must avoid it.
    nodes = [mk("LSTM", ["x", "w", "r"], ["", "y_h"], name="lstm", hidden_size=hid),
             mk("Relu", ["y_h"], ["y_h_unused_Y"], name="relu_after")]
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in [("w", lw1), ("r", lr1)]]
    graph = helper.make_graph(nodes, "lstm_last", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [1, batch, hid]),
                               helper.make_tensor_value_info("y_h_unused_Y", TensorProto.FLOAT, [1, batch, hid])],
                              inits)
    save(directory, "lstm_last", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    np.save(directory / "lstm_last_x.npy", x)
    np.save(directory / "lstm_last_y_h.npy", h_last[None].astype(np.float32))

    # sequence_lens shorter than the sequence: a bidirectional LSTM (initial states given) and a forward GRU on one
    # input, lengths in runs of equal ones, the full length among them.
    seq, batch, inp, hid, ghid = 6, 5, 4, 5, 3
    x = fp16(rng.normal(size=(seq, batch, inp)))
    lens, glens = [6, 3, 3, 1, 4], [2, 2, 6, 6, 5]
    w, r, b = weights(2, 4 * hid, inp), weights(2, 4 * hid, hid), weights(2, 8 * hid)
    h0, c0 = weights(2, batch, hid), weights(2, batch, hid)
    dirs = [by_length(lambda xb, h, c, d=d: onnx_lstm(xb, w[d], r[d], b[d], h, c, reverse=d == 1), x, lens, h0[d],
                      c0[d]) for d in range(2)]
    gw, gr = weights(1, 3 * ghid, inp), weights(1, 3 * ghid, ghid)
    gzero = np.zeros(3 * ghid)
    gy, gh = by_length(lambda xb, h: onnx_gru(xb, gw[0], gr[0], gzero, gzero, h), x, glens, np.zeros((batch, ghid)))
    nodes = [mk("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0"], ["ly", "lyh", "lyc"], name="lstm",
                direction="bidirectional", hidden_size=hid),
             mk("GRU", ["x", "gw", "gr", "", "glens"], ["gy", "gyh"], name="gru", hidden_size=ghid)]
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
             [("w", w), ("r", r), ("b", b), ("h0", h0), ("c0", c0), ("gw", gw), ("gr", gr)]]
    inits += [numpy_helper.from_array(np.array(lens, np.int32), "lens"),
              numpy_helper.from_array(np.array(glens, np.int32), "glens")]
    outs = {"ly": np.stack([dirs[0][0], dirs[1][0]], axis=1), "lyh": np.stack([dirs[0][1], dirs[1][1]]),
            "lyc": np.stack([dirs[0][2], dirs[1][2]]), "gy": gy[:, None], "gyh": gh[None]}
    graph = helper.make_graph(nodes, "rnn_lens", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in outs.items()],
                              inits)
    save(directory, "rnn_lens", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    np.save(directory / "rnn_lens_x.npy", x)
    for n, v in outs.items():
        np.save(directory / f"rnn_lens_{n}.npy", v.astype(np.float32))

    # The plain RNN (PyTorch's nn.RNN): forward tanh with B and initial_h; bidirectional relu without either, a full
    # sequence_lens, only Y_h named.
    seq, batch, inp, hid = 6, 3, 4, 5
    x = fp16(rng.normal(size=(seq, batch, inp)))
    w, r, b, h0 = weights(1, hid, inp), weights(1, hid, hid), weights(1, 2 * hid), weights(1, batch, hid)

    def plain_rnn(f, w, r, wb, rb, h, reverse=False):
        ys = np.zeros((seq, batch, hid))
        for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
            h = f(x[t] @ w.T + h @ r.T + wb + rb)
            ys[t] = h
        return ys, h
    ty, th = plain_rnn(np.tanh, w[0], r[0], b[0, :hid], b[0, hid:], h0[0])
    bw, br = weights(2, hid, inp), weights(2, hid, hid)
    relu = lambda a: np.maximum(a, 0)  # noqa: E731
    bh = np.stack([plain_rnn(relu, bw[d], br[d], 0, 0, np.zeros((batch, hid)), reverse=d == 1)[1] for d in range(2)])
    nodes = [mk("RNN", ["x", "w", "r", "b", "", "h0"], ["ry", "ryh"], name="rnn_tanh", hidden_size=hid),
             mk("RNN", ["x", "bw", "br", "", "lens"], ["", "by_h"], name="rnn_relu", direction="bidirectional",
                activations=["Relu", "Relu"])]
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
             [("w", w), ("r", r), ("b", b), ("h0", h0), ("bw", bw), ("br", br)]]
    inits.append(numpy_helper.from_array(np.full(batch, seq, np.int32), "lens"))
    outs = {"ry": ty[:, None], "ryh": th[None], "by_h": bh}
    graph = helper.make_graph(nodes, "rnn_plain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in outs.items()],
                              inits)
    save(directory, "rnn_plain", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    np.save(directory / "rnn_plain_x.npy", x)
    for n, v in outs.items():
        np.save(directory / f"rnn_plain_{n}.npy", v.astype(np.float32))

    # Refused: clip, peepholes, a sequence_lens of 0, custom activations, layout 1, no output, and a zero B that
    # W's declared shape would make enormous.
    w4, r4 = weights(1, 4 * 2, 3), weights(1, 4 * 2, 2)
    nodes = [mk("LSTM", ["x", "w", "r"], ["a"], name="clipped", hidden_size=2, clip=3.0),
             mk("LSTM", ["x", "w", "r", "", "", "", "", "p"], ["b"], name="peephole", hidden_size=2),
             mk("LSTM", ["x", "w", "r", "", "short"], ["c"], name="short_lens", hidden_size=2),
             mk("LSTM", ["x", "w", "r"], ["d"], name="custom_act", hidden_size=2,
                activations=["Relu", "Tanh", "Tanh"]),
             mk("LSTM", ["x", "w", "r"], ["e"], name="batch_first", hidden_size=2, layout=1),
             mk("GRU", ["x", "w3", "r3", "", "", "h3"], [], name="no_outputs", hidden_size=2),
             mk("LSTM", ["x", "huge_w", "huge_r", "", "", "huge_h"], ["f"], name="huge_b"),
             mk("RNN", ["x", "w1", "r1"], ["g"], name="rnn_softsign", activations=["Softsign"]),
             mk("RNN", ["x", "w1", "r1", "", "short"], ["h"], name="rnn_short_lens")]
    inits = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in [("w", w4), ("r", r4)]]
    inits += [numpy_helper.from_array(np.zeros((1, 6), np.float32), "p"),
              numpy_helper.from_array(np.array([0, 2], np.int32), "short"),
              numpy_helper.from_array(weights(1, 6, 3), "w3"), numpy_helper.from_array(weights(1, 6, 2), "r3"),
              numpy_helper.from_array(weights(1, 2, 2), "h3"), numpy_helper.from_array(weights(1, 2, 3), "w1"),
              numpy_helper.from_array(weights(1, 2, 2), "r1")]
    huge = 4 * 2 ** 24
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 3]),
              helper.make_tensor_value_info("huge_w", TensorProto.FLOAT, [1, huge, 3]),
              helper.make_tensor_value_info("huge_r", TensorProto.FLOAT, [1, huge, huge // 4]),
              helper.make_tensor_value_info("huge_h", TensorProto.FLOAT, [1, 2, huge // 4])]
    graph = helper.make_graph(nodes, "bad_rnn", inputs,
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcdefgh"], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), str(directory / "bad_rnn.onnx"))


def raw_weight(directory):
    """A raw fp32 weight over 4096 elements (kept undecoded at import, rounded to fp16 in place in the model's
    buffer) holding the values rounding is hard on: ties to even, subnormals, the largest finite halves and the
    first value that overflows, infinities, signed zeros. raw_weight_w16.npy is numpy's rounding of it, with the
    finite values numpy rounds to infinity (+-65520 and up) at +-65504, as the import saturates a constant."""
    special = np.array([0.0, -0.0, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26,
                        2.0 ** -14 - 2.0 ** -25, 65504.0, 65519.0, 65520.0, -65520.0, np.inf, -np.inf, 1e-8, 0.1],
                       np.float32)
    w = rng.normal(scale=100.0, size=(64, 80)).astype(np.float32)
    w.flat[:special.size] = special
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 80])
    graph = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"], name="scale")], "raw_weight", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 80])],
                              [numpy_helper.from_array(w, "w")])
    save(directory, "raw_weight", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    with np.errstate(over="ignore"):
        w16 = w.astype(np.float16)
    w16[np.isfinite(w) & (np.abs(w) >= 65520)] = np.copysign(np.float16(65504), w[np.isfinite(w) & (np.abs(w) >= 65520)])
    np.save(directory / "raw_weight_w16.npy", w16)


def typed_models(directory):
    """Int and bool graph inputs as transformers take them: an attention block over an embedding lookup by token ids
    with HF's additive padding mask (int64 mask -> Unsqueeze -> Cast -> (1 - m) * -10000) and PyTorch's boolean
    key-padding mask (Where(mask, -inf, 0)), a bool output from Not(Equal(ids, 0)), a Where on a runtime
    comparison, and two bad models: float indices, and a model whose ids will be out of range."""
    vocab, seq, hidden = 30, 8, 16
    word, pos = weights(vocab, hidden), weights(seq, hidden)
    ids = rng.integers(1, vocab, size=(2, seq)).astype(np.int64)
    ids[0, 6:] = 0  # padding
    ids[1, 3] = -4  # a negative id counts from the end
    mask = (ids != 0).astype(np.int64)
    pad = ids == 0

    def attention(x, additive):
        scores = np.einsum("bsh,bth->bst", x, x) * 0.25 + additive
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return np.einsum("bst,bth->bsh", p, x)

    x = word[np.where(ids < 0, ids + vocab, ids)] + pos
    ints = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.INT64, shape)
    floats = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    bools = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.BOOL, shape)
    inits = [numpy_helper.from_array(v, n) for n, v in [
        ("word", word), ("pos", pos), ("one", np.array(1.0, np.float32)), ("big", np.array(-10000.0, np.float32)),
        ("quarter", np.array(0.25, np.float32)), ("axes1", np.array([1], np.int64)), ("zero_id", np.array(0, np.int64)),
        ("ninf", np.array(-np.inf, np.float32)), ("zf", np.array(0.0, np.float32)), ("tenth", np.array(0.1, np.float32)),
        ("perm", np.array([0, 2, 1], np.int64))]]
    n = helper.make_node
    common = [
        n("Gather", ["word", "ids"], ["emb"], name="embed"),
        n("Add", ["emb", "pos"], ["x"], name="add_pos"),
        n("Transpose", ["x"], ["xt"], name="kt", perm=[0, 2, 1]),
        n("MatMul", ["x", "xt"], ["qk"], name="qk"),
        n("Mul", ["qk", "quarter"], ["scaled"], name="scale"),
    ]
    tail = [
        n("Add", ["scaled", "additive"], ["masked"], name="add_mask"),
        n("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
        n("MatMul", ["probs", "x"], ["y"], name="av"),
        n("Equal", ["ids", "zero_id"], ["is_pad"], name="is_pad"),
        n("Not", ["is_pad"], ["valid"], name="valid"),
        n("Greater", ["y", "zf"], ["pos_y"], name="positive"),
        n("Mul", ["y", "tenth"], ["small_y"], name="leak"),
        n("Where", ["pos_y", "y", "small_y"], ["leaky"], name="leaky"),
    ]
    hf = [
        n("Unsqueeze", ["mask", "axes1"], ["m3"], name="unsqueeze_mask"),
        n("Cast", ["m3"], ["mf"], name="cast_mask", to=TensorProto.FLOAT),
        n("Sub", ["one", "mf"], ["inv"], name="invert"),
        n("Mul", ["inv", "big"], ["additive"], name="to_additive"),
    ]
    y = attention(x, ((1.0 - mask[:, None, :]) * -10000.0).astype(np.float32))
    outputs = [floats("y", [2, seq, hidden]), bools("valid", [2, seq]), floats("leaky", [2, seq, hidden])]
    graph = helper.make_graph(common + hf + tail, "typed_hf", [ints("ids", [2, seq]), ints("mask", [2, seq])], outputs,
                              inits)
    save(directory, "typed_hf", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    np.save(directory / "typed_hf_ids.npy", ids)
    np.save(directory / "typed_hf_mask.npy", mask)
    np.save(directory / "typed_hf_y.npy", y)
    np.save(directory / "typed_hf_valid.npy", ~pad)
    np.save(directory / "typed_hf_leaky.npy", np.where(y > 0, y, 0.1 * y).astype(np.float32))
    # The mask constant as Hugging Face models write it today: -1e9, or float32's lowest. Beyond fp16's range both
    # round to -inf, which the 0s of (1 - mask) would multiply into NaN: the import saturates them to -65504.
    for label, big in [("1e9", -1e9), ("lowest", float(np.finfo(np.float32).min))]:
        big_inits = [numpy_helper.from_array(np.array(big, np.float32), "big") if i.name == "big" else i for i in inits]
        graph = helper.make_graph(common + hf + tail[:3], f"typed_hf_{label}",
                                  [ints("ids", [2, seq]), ints("mask", [2, seq])], [floats("y", [2, seq, hidden])],
                                  big_inits)
        save(directory, f"typed_hf_{label}", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        np.save(directory / f"typed_hf_{label}_y.npy",
                attention(x, ((1.0 - mask[:, None, :]) * np.float32(big)).astype(np.float32)))

    torch_style = [
        n("Unsqueeze", ["pad", "axes1"], ["p3"], name="unsqueeze_pad"),
        n("Where", ["p3", "ninf", "zf"], ["additive"], name="key_padding"),
    ]
    y_kp = attention(x, np.where(pad[:, None, :], -np.inf, 0.0).astype(np.float32))
    graph = helper.make_graph(common + torch_style + tail[:3], "typed_torch", [ints("ids", [2, seq]), bools("pad", [2, seq])],
                              [floats("y", [2, seq, hidden])], inits)
    save(directory, "typed_torch", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    np.save(directory / "typed_torch_pad.npy", pad)
    np.save(directory / "typed_torch_y.npy", y_kp)
    bad_ids = ids.copy()
    bad_ids[1, 5] = vocab  # one past the table
    np.save(directory / "typed_bad_ids.npy", bad_ids)

    graph = helper.make_graph([n("Gather", ["word", "x"], ["y"], name="float_lookup")], "float_indices",
                              [floats("x", [2, seq])], [floats("y", [2, seq, hidden])], inits[:1])
    save(directory, "typed_float_indices", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))


def main():
    directory = Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    cnn(directory)
    blocks(directory)
    single_op_models(directory)
    shape_models(directory, 11)
    shape_models(directory, 13)
    edge_models(directory)
    recurrent(directory)
    raw_weight(directory)
    bad_models(directory, (directory / "cnn.onnx").read_bytes())
    typed_models(directory)


if __name__ == "__main__":
    main()
