#!/usr/bin/env python3
"""Writes the small ONNX models the README's commands run, built with onnx.helper (nothing is downloaded), and an
input for each: a CNN (conv, batch norm, relu, max pool, a second conv, global average pool, gemm, softmax), a
one-block transformer encoder (layer norm, single-head attention, a residual, a relu MLP) and an LSTM.
Usage: python3 scripts/make_tiny_models.py [OUT_DIR]   (default: models)"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]


def weights(rng, named_shapes, scale=0.3):
    return [numpy_helper.from_array(rng.uniform(-scale, scale, shape).astype(np.float32), name)
            for name, shape in named_shapes]


def save(graph, path):
    model = helper.make_model(graph, opset_imports=OPSET, producer_name="ldmsim make_tiny_models.py")
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def tiny_cnn(rng, out):
    init = weights(rng, [("conv1.w", (8, 3, 3, 3)), ("conv1.b", (8,)), ("conv2.w", (16, 8, 3, 3)),
                         ("fc.w", (10, 16)), ("fc.b", (10,))])
    init += [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
             (("bn.scale", rng.uniform(0.5, 1.5, 8)), ("bn.bias", rng.uniform(-0.1, 0.1, 8)),
              ("bn.mean", rng.uniform(-0.1, 0.1, 8)), ("bn.var", rng.uniform(0.5, 1.5, 8)))]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(nodes, "tiny_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], init)
    save(graph, out / "tiny_cnn.onnx")
    np.save(out / "tiny_cnn_input.npy", rng.normal(size=(1, 3, 16, 16)).astype(np.float32))


def tiny_transformer(rng, out):
    tokens, dim, hidden = 8, 32, 64
    init = weights(rng, [("wq", (dim, dim)), ("wk", (dim, dim)), ("wv", (dim, dim)), ("wo", (dim, dim)),
                         ("w1", (dim, hidden)), ("w2", (hidden, dim))], scale=0.2)
    init += [numpy_helper.from_array(np.ones(dim, np.float32), "ln.gamma"),
             numpy_helper.from_array(np.zeros(dim, np.float32), "ln.beta"),
             numpy_helper.from_array(np.array(1 / np.sqrt(dim), np.float32), "scale")]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln.gamma", "ln.beta"], ["n1"], name="ln1", axis=-1),
        helper.make_node("MatMul", ["n1", "wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["n1", "wk"], ["k"], name="k"),
        helper.make_node("MatMul", ["n1", "wv"], ["v"], name="v"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scaled"),
        helper.make_node("Softmax", ["ss"], ["a"], name="attention", axis=-1),
        helper.make_node("MatMul", ["a", "v"], ["av"], name="mix"),
        helper.make_node("MatMul", ["av", "wo"], ["o"], name="out_proj"),
        helper.make_node("Add", ["x", "o"], ["h"], name="residual1"),
        helper.make_node("LayerNormalization", ["h", "ln.gamma", "ln.beta"], ["n2"], name="ln2", axis=-1),
        helper.make_node("MatMul", ["n2", "w1"], ["m1"], name="mlp_in"),
        helper.make_node("Relu", ["m1"], ["m1r"], name="mlp_relu"),
        helper.make_node("MatMul", ["m1r", "w2"], ["m2"], name="mlp_out"),
        helper.make_node("Add", ["h", "m2"], ["y"], name="residual2"),
    ]
    graph = helper.make_graph(nodes, "tiny_transformer",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, dim])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, tokens, dim])], init)
    save(graph, out / "tiny_transformer.onnx")
    np.save(out / "tiny_transformer_input.npy", rng.normal(size=(1, tokens, dim)).astype(np.float32))


def tiny_lstm(rng, out):
    hidden, seq, batch, size = 8, 3, 1, 8
    init = weights(rng, [("W", (1, 4 * hidden, size)), ("R", (1, 4 * hidden, hidden))])
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="lstm", hidden_size=hidden)], "tiny_lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [seq, 1, batch, hidden])], init)
    save(graph, out / "tiny_lstm.onnx")
    np.save(out / "tiny_lstm_input.npy", rng.normal(size=(seq, batch, size)).astype(np.float32))


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "models")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(46)
    tiny_cnn(rng, out)
    tiny_transformer(rng, out)
    tiny_lstm(rng, out)
    print(f"wrote tiny_cnn.onnx, tiny_transformer.onnx, tiny_lstm.onnx and their *_input.npy into {out}")


if __name__ == "__main__":
    main()
