#!/usr/bin/env python3
"""Writes the small transformer test models of this folder as ONNX text IR.

Each model is one block as an exporter writes it (decomposed LayerNorm /
RMSNorm, GELU, scaled dot-product attention with its head split and merge,
rotary embedding), with weights drawn from a seeded generator (no numpy,
so the files are reproducible anywhere): hidden size 16, 2 heads of 8,
sequence 5, FFN 32 (--size E,H,S,F and --out DIR write them at another
size elsewhere). Run it from anywhere; it rewrites the *.onnxtxt files
next to it (bert_block, gpt_block, vit_block, llama_block). Each file names
the ops the default pipeline must leave in an `# EXPECT-OPS:` line, which
tests/transforms/ort_transformer_fusions.sh checks.
"""
import math
import os
import random
import sys

E, H, D, S, F = 16, 2, 8, 5, 32
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = HERE


class Block:
    def __init__(self, name, seed, opset):
        self.name, self.rng, self.opset = name, random.Random(seed), opset
        self.inits, self.nodes, self.n = [], [], 0

    def tmp(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def const(self, base, dtype, dims, values):
        name = self.tmp(base)
        vals = ", ".join(v if isinstance(v, str) else (repr(int(v)) if dtype in ("int64", "bool") else f"{v:.6g}") for v in values)
        shape = f"[{','.join(map(str, dims))}]" if dims else ""
        self.inits.append(f"{dtype}{shape} {name} = {{{vals}}}")
        return name

    def weight(self, base, dims, scale=None):
        n = math.prod(dims)
        scale = scale if scale is not None else 1.0 / math.sqrt(dims[0])
        return self.const(base, "float", dims, [self.rng.uniform(-scale, scale) for _ in range(n)])

    def scalar(self, base, v):
        return self.const(base, "float", [], [v])

    def ints(self, base, values):
        return self.const(base, "int64", [len(values)], values)

    def op(self, text, base="t", out=None):
        out = out or self.tmp(base)
        self.nodes.append(f"  {out} = {text}")
        return out

    # Building blocks, written the way exporters write them.
    def linear(self, x, n_in, n_out, bias=True):
        y = self.op(f"MatMul({x}, {self.weight('w', [n_in, n_out])})", "mm")
        if bias:
            y = self.op(f"Add({y}, {self.weight('b', [n_out], 0.1)})", "lin")
        return y

    def layernorm(self, x, recip=False, out=None):
        ax = self.ints("ax", [-1])
        m = self.op(f"ReduceMean({x}, {ax})", "mean")
        d = self.op(f"Sub({x}, {m})", "cent")
        two = self.scalar("two", 2.0)
        p = self.op(f"Pow({d}, {two})", "sq")
        v = self.op(f"ReduceMean({p}, {ax})", "var")
        eps = self.scalar("eps", 1e-5)
        ve = self.op(f"Add({v}, {eps})", "ve")
        s = self.op(f"Sqrt({ve})", "std")
        if recip:
            rs = self.op(f"Reciprocal({s})", "rs")
            n = self.op(f"Mul({d}, {rs})", "norm")
        else:
            n = self.op(f"Div({d}, {s})", "norm")
        gamma = self.const("gamma", "float", [E], [1 + self.rng.uniform(-0.2, 0.2) for _ in range(E)])
        g = self.op(f"Mul({n}, {gamma})", "g")
        beta = self.weight("beta", [E], 0.1)
        return self.op(f"Add({g}, {beta})", out=out)

    def rmsnorm(self, x, out=None):
        ax = self.ints("ax", [-1])
        two = self.scalar("two", 2.0)
        p = self.op(f"Pow({x}, {two})", "sq")
        v = self.op(f"ReduceMean({p}, {ax})", "ms")
        eps = self.scalar("eps", 1e-6)
        ve = self.op(f"Add({v}, {eps})", "ve")
        s = self.op(f"Sqrt({ve})", "rms")
        inv = self.op(f"Reciprocal({s})", "inv")
        n = self.op(f"Mul({x}, {inv})", "norm")
        w = self.const("w", "float", [E], [1 + self.rng.uniform(-0.2, 0.2) for _ in range(E)])
        return self.op(f"Mul({w}, {n})", out=out)

    def gelu_erf(self, x, mul_form=False):
        if mul_form:
            c = self.scalar("rsqrt2", 1 / math.sqrt(2))
            a = self.op(f"Mul({x}, {c})", "gs")
        else:
            c = self.scalar("sqrt2", math.sqrt(2))
            a = self.op(f"Div({x}, {c})", "gs")
        erf = self.op(f"Erf({a})", "erf")
        one = self.scalar("one", 1.0)
        e = self.op(f"Add({erf}, {one})", "ge")
        half = self.scalar("half", 0.5)
        hx = self.op(f"Mul({x}, {half})", "hx")
        return self.op(f"Mul({hx}, {e})", "gelu")

    def gelu_tanh(self, x):
        three, k = self.scalar("three", 3.0), self.scalar("k", 0.044715)
        cube = self.op(f"Pow({x}, {three})", "cube")
        c = self.op(f"Mul({cube}, {k})", "gc")
        gi = self.op(f"Add({x}, {c})", "gi")
        s2pi = self.scalar("s2pi", math.sqrt(2 / math.pi))
        i = self.op(f"Mul({gi}, {s2pi})", "gt")
        tanh = self.op(f"Tanh({i})", "tanh")
        one = self.scalar("one", 1.0)
        t = self.op(f"Add({tanh}, {one})", "gt1")
        xt = self.op(f"Mul({x}, {t})", "xt")
        half = self.scalar("half", 0.5)
        return self.op(f"Mul({xt}, {half})", "gelu")

    def split_heads(self, x, kt=False):
        r = self.op(f"Reshape({x}, {self.ints('hs', [self.B, S, H, D])})", "heads")
        return self.op(f"Transpose <perm = [0, 2, {'3, 1' if kt else '1, 3'}]> ({r})", "bhsd")

    def merge_heads(self, x):
        t = self.op(f"Transpose <perm = [0, 2, 1, 3]> ({x})", "bshd")
        return self.op(f"Reshape({t}, {self.ints('ms', [self.B, S, E])})", "merged")

    def write(self, inputs, outputs, expect, about, expect_text=()):
        text = "".join(f"# {line}\n" for line in about.strip().splitlines())
        text += "# Written by generate.py (seeded weights); do not edit by hand.\n"
        text += f"# EXPECT-OPS: {' '.join(expect)}\n"
        text += "".join(f"# EXPECT-TEXT: {t}\n" for t in expect_text)
        text += f'<ir_version: 10, opset_import: ["" : {self.opset}]>\n'
        text += f"{self.name} ({', '.join(inputs)}) => ({', '.join(outputs)}) <\n  "
        text += ",\n  ".join(self.inits) + "\n> {\n" + "\n".join(self.nodes) + "\n}\n"
        with open(os.path.join(OUT, self.name + ".onnxtxt"), "w") as f:
            f.write(text)


def bert():
    b = Block("bert_block", 1, 23)
    b.B = 2
    q = b.split_heads(b.linear("x", E, E))
    kt = b.split_heads(b.linear("x", E, E), kt=True)
    v = b.split_heads(b.linear("x", E, E))
    s = b.op(f"Div({b.op(f'MatMul({q}, {kt})', 'qk')}, {b.scalar('sqrtd', math.sqrt(D))})", "scaled")
    # The padding mask as Hugging Face exports it: Where(visible, 0, lowest).
    mask = b.op(f"Where(visible, {b.scalar('zero', 0.0)}, {b.scalar('lowest', -3.4028234663852886e38)})", "mask")
    p = b.op(f"Softmax <axis = -1> ({b.op(f'Add({s}, {mask})', 'masked')})", "probs")
    ctx = b.merge_heads(b.op(f"MatMul({p}, {v})", "ctx"))
    h = b.layernorm(b.op(f"Add({b.linear(ctx, E, E)}, x)", "res"))
    f = b.linear(b.gelu_erf(b.linear(h, E, F)), F, E)
    b.layernorm(b.op(f"Add({f}, {h})", "res"), recip=True, out="y")
    b.write([f"float[{b.B},{S},{E}] x", f"bool[{b.B},1,1,{S}] visible"], [f"float[{b.B},{S},{E}] y"],
            ["Attention", "LayerNormalization", "Gelu"],
            """BERT-like post-LN encoder block: separate q/k/v projections with
biases, k transposed straight to [B, H, D, S], scores / sqrt(D) plus an
additive padding mask [B, 1, 1, S] built as Where(visible, 0, lowest), erf
GELU, two decomposed LayerNorms (Div and Reciprocal forms). Opset 23.""")


def gpt():
    b = Block("gpt_block", 2, 23)
    b.B = 1
    a = b.layernorm("x")
    qkv = b.linear(a, E, 3 * E)
    b.nodes.append(f"  qs, ks, vs = Split <axis = 2> ({qkv}, {b.ints('split', [E, E, E])})")
    q = b.op(f"Mul({b.split_heads('qs')}, {b.scalar('qscale', 1 / math.sqrt(D))})", "qscaled")
    k = b.split_heads("ks")
    v = b.split_heads("vs")
    kt = b.op(f"Transpose <perm = [0, 1, 3, 2]> ({k})", "kt")
    # Causal mask from Range / Trilu / Where, as exporters build it.
    ones = b.op(f"ConstantOfShape <value = float[1] {{1}}> ({b.ints('sq', [S, S])})", "ones")
    tri = b.op(f"Trilu <upper = 0> ({ones})", "tri")
    causal = b.op(f"Cast <to = 9> ({tri})", "causal")
    s = b.op(f"MatMul({q}, {kt})", "qk")
    w = b.op(f"Where({causal}, {s}, {b.scalar('neginf', -3.4028234663852886e38)})", "masked")
    p = b.op(f"Softmax <axis = -1> ({w})", "probs")
    ctx = b.merge_heads(b.op(f"MatMul({p}, {v})", "ctx"))
    h = b.op(f"Add(x, {b.linear(ctx, E, E)})", "res")
    f = b.linear(b.gelu_tanh(b.linear(b.layernorm(h), E, F)), F, E)
    b.op(f"Add({h}, {f})", out="y")
    b.write([f"float[{b.B},{S},{E}] x"], [f"float[{b.B},{S},{E}] y"],
            ["Attention", "LayerNormalization", "Gelu"],
            """GPT-like pre-LN decoder block: one fused qkv projection split three
ways, q pre-scaled by 1/sqrt(D), k^T as Transpose [0,1,3,2], a causal mask
built from ConstantOfShape / Trilu / Cast and applied with Where(.., min
float), tanh GELU with Pow(x, 3). Opset 23.""", ["is_causal = 1"])


def vit():
    b = Block("vit_block", 3, 23)
    b.B = 1
    a = b.layernorm("x")
    q = b.split_heads(b.linear(a, E, E))
    k = b.split_heads(b.linear(a, E, E))
    v = b.split_heads(b.linear(a, E, E))
    kt = b.op(f"Transpose <perm = [0, 1, 3, 2]> ({k})", "kt")
    s = b.op(f"Mul({b.op(f'MatMul({q}, {kt})', 'qk')}, {b.scalar('scale', 1 / math.sqrt(D))})", "scaled")
    p = b.op(f"Softmax <axis = -1> ({s})", "probs")
    ctx = b.merge_heads(b.op(f"MatMul({p}, {v})", "ctx"))
    h = b.op(f"Add(x, {b.linear(ctx, E, E)})", "res")
    f = b.linear(b.gelu_erf(b.linear(b.layernorm(h, recip=True), E, F), mul_form=True), F, E)
    b.op(f"Add({h}, {f})", out="y")
    b.write([f"float[{b.B},{S},{E}] x"], [f"float[{b.B},{S},{E}] y"],
            ["Attention", "LayerNormalization", "Gelu"],
            """ViT-like pre-LN encoder block over 5 tokens: no mask, scores * 1/sqrt(D),
erf GELU written with Mul(x, 1/sqrt(2)). Opset 23.""")


def llama():
    b = Block("llama_block", 4, 23)
    b.B = 1
    a = b.rmsnorm("x")
    q = b.split_heads(b.linear(a, E, E, bias=False))
    k = b.split_heads(b.linear(a, E, E, bias=False))
    v = b.split_heads(b.linear(a, E, E, bias=False))
    # Rotary embedding, rotate-half form, with cos/sin tables [S, D] whose
    # halves repeat (as the exporters' cat((freqs, freqs)) makes them).
    inv = [1.0 / (10000 ** (2 * i / D)) for i in range(D // 2)]
    cos = [math.cos(p * f) for p in range(S) for f in inv + inv]
    sin = [math.sin(p * f) for p in range(S) for f in inv + inv]
    cosn, sinn = b.const("cos", "float", [S, D], cos), b.const("sin", "float", [S, D], sin)
    lo, mid, hi, axis = b.ints("lo", [0]), b.ints("mid", [D // 2]), b.ints("hi", [D]), b.ints("axis", [-1])

    def rope(x):
        x1 = b.op(f"Slice({x}, {lo}, {mid}, {axis})", "x1")
        x2 = b.op(f"Slice({x}, {mid}, {hi}, {axis})", "x2")
        rot = b.op(f"Concat <axis = -1> ({b.op(f'Neg({x2})', 'nx2')}, {x1})", "rot")
        return b.op(f"Add({b.op(f'Mul({x}, {cosn})', 'xc')}, {b.op(f'Mul({rot}, {sinn})', 'rs')})", "rope")

    q, k = rope(q), rope(k)
    kt = b.op(f"Transpose <perm = [0, 1, 3, 2]> ({k})", "kt")
    mask = b.const("causal", "float", [S, S], [0.0 if j <= i else "-inf" for i in range(S) for j in range(S)])
    s = b.op(f"Div({b.op(f'MatMul({q}, {kt})', 'qk')}, {b.scalar('sqrtd', math.sqrt(D))})", "scaled")
    p = b.op(f"Softmax <axis = -1> ({b.op(f'Add({s}, {mask})', 'masked')})", "probs")
    ctx = b.merge_heads(b.op(f"MatMul({p}, {v})", "ctx"))
    h = b.op(f"Add(x, {b.linear(ctx, E, E, bias=False)})", "res")
    n = b.rmsnorm(h)
    gate = b.linear(n, E, F, bias=False)
    silu = b.op(f"Mul({gate}, {b.op(f'Sigmoid({gate})', 'sig')})", "silu")
    up = b.op(f"Mul({silu}, {b.linear(n, E, F, bias=False)})", "up")
    b.op(f"Add({h}, {b.linear(up, F, E, bias=False)})", out="y")
    b.write([f"float[{b.B},{S},{E}] x"], [f"float[{b.B},{S},{E}] y"],
            ["Attention", "RMSNormalization", "RotaryEmbedding"],
            """Llama-like block: RMSNorm (Pow / ReduceMean / Add / Sqrt / Reciprocal /
Mul by the weight), q/k/v projections without bias, rotary embedding in
the rotate-half form (Slice / Neg / Concat, cos/sin tables [S, D]), an
additive causal mask [S, S] of 0 / -inf, SwiGLU MLP. Opset 23.""", ["is_causal = 1"])


def gptj():
    b = Block("gptj_block", 5, 23)
    b.B = 1
    a = b.layernorm("x")
    q = b.split_heads(b.linear(a, E, E, bias=False))
    k = b.split_heads(b.linear(a, E, E, bias=False))
    v = b.split_heads(b.linear(a, E, E, bias=False))
    # Interleaved rotary embedding: tables whose pairs repeat
    # (repeat_interleave of the frequencies).
    inv = [1.0 / (10000 ** (2 * i / D)) for i in range(D // 2)]
    cos = [math.cos(p * f) for p in range(S) for f in inv for _ in range(2)]
    sin = [math.sin(p * f) for p in range(S) for f in inv for _ in range(2)]
    cosn = b.const("cos", "float", [1, 1, S, D], cos)
    sinn = b.const("sin", "float", [1, 1, S, D], sin)
    zero, one, end, axis, two = b.ints("zero", [0]), b.ints("one", [1]), b.ints("end", [D]), b.ints("axis", [-1]), b.ints("two", [2])
    shape = b.ints("pairs", [b.B, H, S, D])

    def rope(x):
        even = b.op(f"Slice({x}, {zero}, {end}, {axis}, {two})", "even")
        odd = b.op(f"Slice({x}, {one}, {end}, {axis}, {two})", "odd")
        nodd = b.op(f"Neg({odd})", "nodd")
        u1 = b.op(f"Unsqueeze({nodd}, {axis})", "u")
        u2 = b.op(f"Unsqueeze({even}, {axis})", "u")
        pairs = b.op(f"Concat <axis = -1> ({u1}, {u2})", "stack")
        rot = b.op(f"Reshape({pairs}, {shape})", "rot")
        xc = b.op(f"Mul({x}, {cosn})", "xc")
        rs = b.op(f"Mul({rot}, {sinn})", "rs")
        return b.op(f"Add({xc}, {rs})", "rope")

    q, k = rope(q), rope(k)
    # Causal mask from Range: key j is visible from query i when j <= i.
    pos = b.op(f"Range({b.const('start', 'int64', [], [0])}, {b.const('limit', 'int64', [], [S])}, "
               f"{b.const('delta', 'int64', [], [1])})", "pos")
    rows = b.op(f"Unsqueeze({pos}, {axis})", "rows")
    visible = b.op(f"LessOrEqual({pos}, {rows})", "visible")
    kt = b.op(f"Transpose <perm = [0, 1, 3, 2]> ({k})", "kt")
    qk = b.op(f"MatMul({q}, {kt})", "qk")
    w = b.op(f"Where({visible}, {qk}, {b.scalar('minus', -1e9)})", "masked")
    scaled = b.op(f"Div({w}, {b.scalar('sqrtd', math.sqrt(D))})", "scaled")
    p = b.op(f"Softmax <axis = -1> ({scaled})", "probs")
    ctx = b.merge_heads(b.op(f"MatMul({p}, {v})", "ctx"))
    attn = b.linear(ctx, E, E)
    sq = b.linear(a, E, F)
    cube = b.op(f"Mul({b.op(f'Mul({sq}, {sq})', 'sq2')}, {sq})", "cube")
    k3 = b.scalar("k", 0.044715)
    inner = b.op(f"Add({sq}, {b.op(f'Mul({k3}, {cube})', 'kc')})", "gi")
    s2pi = b.scalar("s2pi", math.sqrt(2 / math.pi))
    t = b.op(f"Tanh({b.op(f'Mul({s2pi}, {inner})', 'gt')})", "tanh")
    one_f, half = b.scalar("one", 1.0), b.scalar("half", 0.5)
    g = b.op(f"Mul({b.op(f'Mul({half}, {sq})', 'hx')}, {b.op(f'Add({one_f}, {t})', 'gt1')})", "gelu")
    mlp = b.linear(g, F, E)
    b.op(f"Add({b.op(f'Add(x, {attn})', 'res')}, {mlp})", out="y")
    b.write([f"float[{b.B},{S},{E}] x"], [f"float[{b.B},{S},{E}] y"],
            ["Attention", "LayerNormalization", "Gelu", "RotaryEmbedding"],
            """GPT-J-like block: one LayerNorm feeding attention and MLP in parallel,
interleaved rotary embedding (even/odd Slices, Unsqueeze/Concat/Reshape,
tables [1, 1, S, D] with repeated pairs), a causal mask from Range /
Unsqueeze / LessOrEqual applied with Where(.., -1e9) before the Div by
sqrt(D), tanh GELU with the cube as x * x * x. Opset 23.""", ["is_causal = 1"])


if __name__ == "__main__":
    # generate.py [--size E,H,S,F --out DIR]: the same blocks at another
    # size (hidden E, H heads, sequence S, FFN F), written to DIR instead of
    # here (bench/transformers_ort.sh times them at a realistic size).
    args = sys.argv[1:]
    while args:
        if args[0] == "--size" and len(args) > 1:
            E, H, S, F = (int(v) for v in args[1].split(","))
            if E % H or (E // H) % 2:
                sys.exit(f"generate.py: E={E} must split into {H} heads of an even size")
            D = E // H
        elif args[0] == "--out" and len(args) > 1:
            OUT = args[1]
            os.makedirs(OUT, exist_ok=True)
        else:
            sys.exit("usage: generate.py [--size E,H,S,F] [--out DIR]")
        args = args[2:]
    bert(); gpt(); vit(); llama(); gptj()
