#!/usr/bin/env python3
"""Writes the float16 test models of this folder as ONNX text IR.

Each model computes in float16 with float16 weights, in a form the default
pipeline rewrites (the issue they prove: a rewrite that is exact in float32
arithmetic moves float16 results by an ulp or a few, which the model check
must accept with float16's tolerance, and no more):

  mm_add     Cast to float16, MatMul + Add with float16 weights (-> Gemm), Cast back
  conv_bn    float16 Conv + BatchNormalization (folded into the Conv)
  cnn        a small float16 CNN: Conv+BatchNormalization+Relu twice, MaxPool,
             GlobalAveragePool, Flatten, MatMul + Add, Softmax
  layernorm  a decomposed float16 LayerNorm (-> LayerNormalization, opset 18)
  gelu       a float16 erf GELU (-> Gelu, opset 20)
  attention  float16 scaled dot-product attention with a padding mask
             Where(visible, 0, -10000) (-> Attention, opset 23; a float16 mask
             at float16's lowest is declined, see AttentionMask.h)

Weights come from a seeded generator (no numpy, so the files are the same
anywhere). Run it from anywhere; it rewrites the *.onnxtxt files next to it.
tests/transforms/ort_float16_models.sh runs them.
"""
import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def half_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


class Model:
    def __init__(self, name, seed, opset):
        self.name, self.rng, self.opset = name, random.Random(seed), opset
        self.inits, self.nodes, self.n = [], [], 0

    def tmp(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def const(self, base, dtype, dims, values):
        name = self.tmp(base)
        if dtype == "float16":
            vals = ", ".join(str(half_bits(v)) for v in values)
        else:
            vals = ", ".join(repr(int(v)) if dtype in ("int64", "bool") else f"{v:.8g}" for v in values)
        shape = f"[{','.join(map(str, dims))}]" if dims else ""
        self.inits.append(f"{dtype}{shape} {name} = {{{vals}}}")
        return name

    def weight(self, base, dims, scale=None):
        n = math.prod(dims)
        fan_in = math.prod(dims[1:]) if len(dims) == 4 else dims[0]
        scale = scale if scale is not None else 1.0 / math.sqrt(fan_in)
        return self.const(base, "float16", dims, [self.rng.uniform(-scale, scale) for _ in range(n)])

    def scalar(self, base, v, dtype="float16"):
        return self.const(base, dtype, [], [v])

    def ints(self, base, values):
        return self.const(base, "int64", [len(values)], values)

    def op(self, text, base="t", out=None):
        out = out or self.tmp(base)
        self.nodes.append(f"  {out} = {text}")
        return out

    def conv_bn(self, x, cin, cout, k=3):
        w = self.weight("w", [cout, cin, k, k])
        y = self.op(f"Conv <pads = [{k // 2}, {k // 2}, {k // 2}, {k // 2}]> ({x}, {w})", "conv")
        scale = self.const("gamma", "float16", [cout], [self.rng.uniform(0.5, 1.5) for _ in range(cout)])
        bias = self.const("beta", "float16", [cout], [self.rng.uniform(-0.2, 0.2) for _ in range(cout)])
        mean = self.const("mean", "float16", [cout], [self.rng.uniform(-0.2, 0.2) for _ in range(cout)])
        var = self.const("var", "float16", [cout], [self.rng.uniform(0.5, 2.0) for _ in range(cout)])
        return self.op(f"BatchNormalization <epsilon = 1e-05> ({y}, {scale}, {bias}, {mean}, {var})", "bn")

    def write(self, inputs, outputs, about):
        text = "".join(f"# {line}\n" for line in about.strip().splitlines())
        text += "# Written by generate.py (seeded weights); do not edit by hand.\n"
        text += f'<ir_version: 10, opset_import: ["" : {self.opset}]>\n'
        text += f"{self.name} ({', '.join(inputs)}) => ({', '.join(outputs)}) <\n  "
        text += ",\n  ".join(self.inits) + "\n> {\n" + "\n".join(self.nodes) + "\n}\n"
        with open(os.path.join(HERE, self.name + ".onnxtxt"), "w") as f:
            f.write(text)


def mm_add():
    m = Model("mm_add", 1, 17)
    xh = m.op("Cast <to = 10> (x)", "xh")
    y = m.op(f"MatMul({xh}, {m.weight('w', [64, 32])})", "mm")
    y = m.op(f"Add({y}, {m.weight('b', [32], 1.0)})", "lin")
    m.op(f"Cast <to = 1> ({y})", out="y")
    m.write(["float[4,64] x"], ["float[4,32] y"],
            "A float32 interface computing in float16: Cast, MatMul + Add with float16\n"
            "weights (the default pipeline makes it a Gemm), Cast back. Opset 17.")


def conv_bn():
    m = Model("conv_bn", 2, 17)
    m.op(f"Relu({m.conv_bn('x', 8, 16)})", out="y")
    m.write(["float16[1,8,12,12] x"], ["float16[1,16,12,12] y"],
            "float16 Conv + BatchNormalization + Relu (the BatchNormalization is folded\n"
            "into the Conv's float16 weights). Opset 17.")


def cnn():
    m = Model("cnn", 3, 13)
    h = m.op(f"Relu({m.conv_bn('x', 3, 16)})", "relu")
    h = m.op(f"MaxPool <kernel_shape = [2, 2], strides = [2, 2]> ({h})", "pool")
    h = m.op(f"Relu({m.conv_bn(h, 16, 32)})", "relu")
    h = m.op(f"GlobalAveragePool({h})", "gap")
    h = m.op(f"Flatten <axis = 1> ({h})", "flat")
    h = m.op(f"MatMul({h}, {m.weight('fc', [32, 10])})", "fc")
    h = m.op(f"Add({h}, {m.weight('fcb', [10], 0.1)})", "logits")
    m.op(f"Softmax <axis = 1> ({h})", out="y")
    m.write(["float16[2,3,16,16] x"], ["float16[2,10] y"],
            "A small float16 CNN: Conv + BatchNormalization + Relu twice, MaxPool,\n"
            "GlobalAveragePool, Flatten, MatMul + Add, Softmax. Opset 13.")


def layernorm():
    m = Model("layernorm", 4, 18)
    ax = m.ints("ax", [-1])
    mean = m.op(f"ReduceMean(x, {ax})", "mean")
    d = m.op(f"Sub(x, {mean})", "cent")
    sq = m.op(f"Pow({d}, {m.scalar('two', 2.0)})", "sq")
    var = m.op(f"ReduceMean({sq}, {ax})", "var")
    ve = m.op(f"Add({var}, {m.scalar('eps', 1e-5)})", "ve")
    n = m.op(f"Div({d}, {m.op(f'Sqrt({ve})', 'std')})", "norm")
    gamma = m.const("gamma", "float16", [32], [1 + m.rng.uniform(-0.2, 0.2) for _ in range(32)])
    g = m.op(f"Mul({n}, {gamma})", "g")
    m.op(f"Add({g}, {m.weight('beta', [32], 0.1)})", out="y")
    m.write(["float16[2,6,32] x"], ["float16[2,6,32] y"],
            "A decomposed float16 LayerNorm over the last axis (the default pipeline makes\n"
            "it a LayerNormalization). Opset 18.")


def gelu():
    m = Model("gelu", 5, 20)
    h = m.op(f"MatMul(x, {m.weight('w', [16, 16])})", "mm")
    sqrt2 = m.scalar("sqrt2", math.sqrt(2))
    e = m.op(f"Erf({m.op(f'Div({h}, {sqrt2})', 'gs')})", "erf")
    a = m.op(f"Add({e}, {m.scalar('one', 1.0)})", "ge")
    hx = m.op(f"Mul({h}, {m.scalar('half', 0.5)})", "hx")
    m.op(f"Mul({hx}, {a})", out="y")
    m.write(["float16[3,16] x"], ["float16[3,16] y"],
            "A float16 erf GELU after a MatMul, its constants as float16 holds them\n"
            "(the default pipeline makes it a Gelu). Opset 20.")


def attention():
    m = Model("attention", 6, 23)
    mask = m.op(f"Where(visible, {m.scalar('zero', 0.0)}, {m.scalar('hidden', -10000.0)})", "mask")
    kt = m.op("Transpose <perm = [0, 1, 3, 2]> (k)", "kt")
    s = m.op(f"MatMul(q, {kt})", "qk")
    s = m.op(f"Mul({s}, {m.scalar('scale', 1 / math.sqrt(8))})", "scaled")
    p = m.op(f"Softmax <axis = -1> ({m.op(f'Add({s}, {mask})', 'masked')})", "probs")
    m.op(f"MatMul({p}, v)", out="y")
    m.write(["float16[2,2,5,8] q", "float16[2,2,5,8] k", "float16[2,2,5,8] v", "bool[2,1,1,5] visible"],
            ["float16[2,2,5,8] y"],
            "float16 scaled dot-product attention with a padding mask built as\n"
            "Where(visible, 0, -10000) (the default pipeline makes it an Attention).\n"
            "Opset 23.")


for make in (mm_add, conv_bn, cnn, layernorm, gelu, attention):
    make()
