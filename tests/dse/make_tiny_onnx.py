#!/usr/bin/python3
"""Writes the small ONNX models that tests/dse/test_onnx_import.cpp imports.

Usage: make_tiny_onnx.py OUTDIR
  OUTDIR/tiny.onnx: a toy attention layer, a Gemm, a conv path and reductions, with
                    symbolic dims "batch" and "seq" (every op type the importer maps).
  OUTDIR/tiny_unsupported.onnx: the same attention path with a Transpose node
                    ("k_transpose"), which the importer refuses unless told otherwise.
Made with python3-onnx's helper API (Debian package python3-onnx), opset 17.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save


def init(name, *shape):
    return numpy_helper.from_array(np.full(shape, 0.01, dtype=np.float32), name)


def tiny():
    d = 64
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d]),
        helper.make_tensor_value_info("mem", TensorProto.FLOAT, ["batch", d, "seq"]),
        helper.make_tensor_value_info("feat", TensorProto.FLOAT, ["batch", 32]),
        helper.make_tensor_value_info("img", TensorProto.FLOAT, ["batch", 3, 8, 8]),
    ]
    outputs = [
        helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", "seq", 1]),
        helper.make_tensor_value_info("head", TensorProto.FLOAT, ["batch", 16]),
        helper.make_tensor_value_info("img_pool", TensorProto.FLOAT, ["batch", 4, 1, 1]),
    ]
    inits = [init("gamma", d), init("beta", d), init("wq", d, d), init("wv", d, d), init("wo", d, d),
             init("wg", 32, 16), init("bg", 16), init("wc", 4, 3, 3, 3)]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["ln"], name="ln", axis=-1),
        helper.make_node("MatMul", ["ln", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["ln", "wv"], ["v"], name="v_proj"),
        helper.make_node("MatMul", ["q", "mem"], ["scores"], name="scores"),
        helper.make_node("Softmax", ["scores"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "v"], ["ctx"], name="context"),
        helper.make_node("MatMul", ["ctx", "wo"], ["o"], name="out_proj"),
        helper.make_node("Add", ["o", "x"], ["res"], name="residual"),
        helper.make_node("Relu", ["res"], ["act"], name="relu"),
        helper.make_node("ReduceMean", ["act"], ["pooled"], name="mean", axes=[-1], keepdims=1),
        helper.make_node("Gemm", ["feat", "wg", "bg"], ["head"], name="head"),
        helper.make_node("Conv", ["img", "wc"], ["conv"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["conv"], ["img_pool"], name="gap"),
    ]
    graph = helper.make_graph(nodes, "tiny", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    checker.check_model(model)
    return model


def tiny_unsupported():
    d = 16
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d])]
    outputs = [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", "seq", "seq"])]
    nodes = [
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_transpose", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "kt"], ["scores"], name="scores"),
    ]
    graph = helper.make_graph(nodes, "tiny_unsupported", inputs, outputs, [init("wk", d, d)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    checker.check_model(model)
    return model


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(tiny(), os.path.join(out, "tiny.onnx"))
    save(tiny_unsupported(), os.path.join(out, "tiny_unsupported.onnx"))


if __name__ == "__main__":
    main()
