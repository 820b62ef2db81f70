#!/usr/bin/python3
"""Writes MobileNet-v2 (width 1.0, 224 x 224) as an ONNX model: scenarios/workloads/mobilenet-v2.onnx.

Usage: make_mobilenet_v2_onnx.py OUT.onnx [--dense]

The network is Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks",
CVPR 2018, Table 2: a 3x3 stride-2 convolution to 32 channels, then bottleneck blocks
(expansion t, output channels c, repeats n, first stride s):
    t=1 c=16 n=1 s=1; t=6 c=24 n=2 s=2; t=6 c=32 n=3 s=2; t=6 c=64 n=4 s=2;
    t=6 c=96 n=3 s=1; t=6 c=160 n=3 s=2; t=6 c=320 n=1 s=1,
each block a 1x1 expansion to t x its input channels (left out when t = 1), ReLU6, a 3x3
depthwise convolution (stride s on the first of the n), ReLU6, a linear 1x1 projection, and
a residual add when the stride is 1 and the channels do not change (section 4); then a 1x1
convolution to 1280 channels, ReLU6, a global average pool and the classifier, written as a
1x1 convolution to 1000 classes (the paper's Table 2 "conv2d 1x1, k"). Batch normalisation is
folded into the convolutions, as an inference export has it; ReLU6 is Clip(0, 6); every
convolution has a bias. The input's batch dimension is symbolic ("batch").

The weights are placeholders: each is the output of a ConstantOfShape node (zeros of the
weight's shape), so that the file holds the network's structure in a few kilobytes. The
importer (dse/io/onnx_import.cpp) reads a ConstantOfShape's output as data, like a Constant's,
and the cost model reads shapes only. --dense writes the weights as initializers instead (the
form a trained export has); tests/dse/test_onnx_import.cpp imports both and finds the same
operators. Made with python3-onnx's helper API (Debian package python3-onnx), opset 17.
"""
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class Builder:
    def __init__(self, dense):
        self.dense = dense
        self.nodes, self.inits = [], []
        self.count = 0
        six = numpy_helper.from_array(np.array(6.0, dtype=np.float32), "relu6_max")
        zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "relu6_min")
        self.inits += [six, zero]

    def weight(self, name, shape):
        if self.dense:
            self.inits.append(numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name))
            return name
        shape_name = name + "_shape"
        self.inits.append(numpy_helper.from_array(np.array(shape, dtype=np.int64), shape_name))
        value = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.0])
        self.nodes.append(helper.make_node("ConstantOfShape", [shape_name], [name], name=name + "_data", value=value))
        return name

    def conv(self, name, x, cin, cout, k, stride, groups=1):
        w = self.weight(name + ".weight", [cout, cin // groups, k, k])
        b = self.weight(name + ".bias", [cout])
        pad = k // 2
        self.nodes.append(helper.make_node("Conv", [x, w, b], [name], name=name, kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[pad] * 4, group=groups))
        return name

    def relu6(self, x):
        y = x + ".relu6"
        self.nodes.append(helper.make_node("Clip", [x, "relu6_min", "relu6_max"], [y], name=y))
        return y


def build(dense):
    b = Builder(dense)
    x = b.relu6(b.conv("features.0", "input", 3, 32, 3, 2))
    cin = 32
    index = 1
    for t, c, n, s in BLOCKS:
        for i in range(n):
            stride = s if i == 0 else 1
            name = "features.%d" % index
            hidden = cin * t
            h = x
            if t != 1:
                h = b.relu6(b.conv(name + ".expand", h, cin, hidden, 1, 1))
            h = b.relu6(b.conv(name + ".depthwise", h, hidden, hidden, 3, stride, groups=hidden))
            h = b.conv(name + ".project", h, hidden, c, 1, 1)
            if stride == 1 and cin == c:
                b.nodes.append(helper.make_node("Add", [x, h], [name + ".add"], name=name + ".add"))
                h = name + ".add"
            x, cin, index = h, c, index + 1
    x = b.relu6(b.conv("features.%d" % index, x, cin, 1280, 1, 1))
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="pool"))
    b.conv("classifier", "pool", 1280, 1000, 1, 1)
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])]
    outputs = [helper.make_tensor_value_info("classifier", TensorProto.FLOAT, ["batch", 1000, 1, 1])]
    graph = helper.make_graph(b.nodes, "mobilenet-v2", inputs, outputs, b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dse")
    checker.check_model(model)
    return model


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--dense"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    save(build(len(sys.argv) == 3), sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
