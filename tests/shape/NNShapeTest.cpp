//===- tests/shape/NNShapeTest.cpp - NN, reduction and contraction ops ----===//
//
// Conv/ConvTranspose/pooling window arithmetic (pads, strides, dilations,
// auto_pad, ceil_mode), normalizations, RNN/GRU/LSTM in both layouts,
// Resize/Upsample, MatMul promotion and broadcasting, Gemm transposes,
// Reduce* across the opset 13/18 axes-as-input change, Einsum, and the
// malformed cases.
//
//===----------------------------------------------------------------------===//
#include "tests/shape/ShapeTestUtil.h"

namespace onnxslim::testing {
namespace {

TEST(NNShape, ConvPadsStridesDilations) {
  auto r = infer(withOpset(17, R"(
    g (float[N, 3, 32, 32] x, float[16, 3, 3, 3] w, float[8, 1, 5, 5] dw, float[N, 8, 32, 32] x8)
      => (float[N, 16, 16, 16] y) {
      y = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (x, w)
      v = Conv <auto_pad = "VALID"> (x, w)
      s = Conv <auto_pad = "SAME_UPPER", strides = [3, 3]> (x, w)
      d = Conv <dilations = [2, 2]> (x, w)
      g8 = Conv <group = 8, pads = [2, 2, 2, 2]> (x8, dw)
    })"));
  EXPECT_EQ(r.type("y"), "float[N,16,16,16]");
  EXPECT_EQ(r.type("v"), "float[N,16,30,30]");
  EXPECT_EQ(r.type("s"), "float[N,16,11,11]");
  EXPECT_EQ(r.type("d"), "float[N,16,28,28]");
  EXPECT_EQ(r.type("g8"), "float[N,8,32,32]");
}

TEST(NNShape, ConvOnSymbolicSpatialDims) {
  auto r = infer(withOpset(17, R"(
    g (float[N, 3, H, W] x, float[8, 3, 3, 3] w) => () {
      same = Conv <pads = [1, 1, 1, 1]> (x, w)
      a = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (x, w)
      b = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (x, w)
      sum = Add(a, b)
    })"));
  EXPECT_EQ(r.type("same"), "float[N,8,H,W]");
  EXPECT_EQ(r.type("a"), "float[N,8,?,?]");
  EXPECT_EQ(r.type("sum"), "float[N,8,?,?]");
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
  // The two strided convs are provably the same size.
  ShapeInferencer inf(*r.model);
  inf.run();
  auto sa = inf.symbolicShape(findValue(*r.model->graph(), "a"));
  auto sb = inf.symbolicShape(findValue(*r.model->graph(), "b"));
  ASSERT_TRUE(sa && sb);
  EXPECT_TRUE(provablyEqual((*sa)[2], (*sb)[2])) << (*sa)[2].str() << " vs " << (*sb)[2].str();
}

TEST(NNShape, ConvMalformed) {
  auto r = infer(withOpset(17, R"(
    g (float[1, 3, 8, 8] x, float[4, 5, 3, 3] w, float[4, 3, 3] w3, float[1, 3, 2, 2] tiny) => () {
      [c1] a = Conv(x, w)
      [c2] b = Conv(x, w3)
      [c3] c = Conv <kernel_shape = [3, 3]> (tiny, w)
      [c4] d = Conv <auto_pad = "BOGUS"> (x, w)
    })"));
  EXPECT_TRUE(r.warned("node 'c1' (Conv): input channels 3 != weight channels 5")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'c2' (Conv)")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'c3' (Conv)")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'c4' (Conv)")) << r.warnings();
  for (const char *v : {"a", "b", "c", "d"})
    EXPECT_EQ(r.type(v), "none") << v;
}

TEST(NNShape, ConvTranspose) {
  auto r = infer(withOpset(17, R"(
    g (float[N, 8, 10, 10] x, float[8, 4, 3, 3] w) => () {
      a = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]> (x, w)
      b = ConvTranspose <group = 2> (x, w)
      c = ConvTranspose <output_shape = [21, 21], strides = [2, 2]> (x, w)
      d = ConvTranspose <auto_pad = "SAME_UPPER", strides = [2, 2]> (x, w)
    })"));
  EXPECT_EQ(r.type("a"), "float[N,4,20,20]");
  EXPECT_EQ(r.type("b"), "float[N,8,12,12]");
  EXPECT_EQ(r.type("c"), "float[N,4,21,21]");
  EXPECT_EQ(r.type("d"), "float[N,4,20,20]");
}

TEST(NNShape, PoolingCeilModeAndIndices) {
  auto r = infer(withOpset(17, R"(
    g (float[1, 3, 32, 32] x, float[1, 1, 4, 4] s) => () {
      m, idx = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (x)
      c = MaxPool <kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1> (x)
      a = AveragePool <kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1> (s)
      g = GlobalAveragePool(x)
      l = LpPool <kernel_shape = [2, 2]> (x)
      sm = AveragePool <kernel_shape = [3, 3], auto_pad = "SAME_LOWER"> (x)
    })"));
  EXPECT_EQ(r.type("m"), "float[1,3,15,15]");
  EXPECT_EQ(r.type("idx"), "int64[1,3,15,15]");
  EXPECT_EQ(r.type("c"), "float[1,3,16,16]");
  EXPECT_EQ(r.type("a"), "float[1,1,3,3]");
  EXPECT_EQ(r.type("g"), "float[1,3,1,1]");
  EXPECT_EQ(r.type("l"), "float[1,3,31,31]");
  EXPECT_EQ(r.type("sm"), "float[1,3,32,32]");
  auto bad = infer(withOpset(17, R"(
    g (float[1, 3, 32] x) => () {
      [p] m = MaxPool(x)
    })"));
  EXPECT_TRUE(bad.warned("node 'p' (MaxPool): missing 'kernel_shape'")) << bad.warnings();
}

TEST(NNShape, Normalizations) {
  auto r = infer(withOpset(17, R"(
    g (float[N, 4, 8, 8] x, float[4] s, float[4] b, float[4] m, float[4] v, float[N, T, 64] h,
       float[64] ls, float[64] lb) => () {
      bn = BatchNormalization(x, s, b, m, v)
      bt, rm, rv = BatchNormalization <training_mode = 1> (x, s, b, m, v)
      inn = InstanceNormalization(x, s, b)
      ln, mean, istd = LayerNormalization <axis = -1> (h, ls, lb)
    })"));
  EXPECT_EQ(r.type("bn"), "float[N,4,8,8]");
  EXPECT_EQ(r.type("rm"), "float[4]");
  EXPECT_EQ(r.type("inn"), "float[N,4,8,8]");
  EXPECT_EQ(r.type("ln"), "float[N,T,64]");
  EXPECT_EQ(r.type("mean"), "float[N,T,1]");
  auto g18 = infer(withOpset(18, R"(
    g (float[N, 6, 8] x, float[2] s, float[2] b) => () {
      y = GroupNormalization <num_groups = 2> (x, s, b)
    })"));
  EXPECT_EQ(g18.type("y"), "float[N,6,8]");
}

TEST(NNShape, RecurrentLayouts) {
  auto r = infer(withOpset(14, R"(
    g (float[T, B, 16] x, float[2, 128, 16] w, float[2, 128, 32] rr, float[B, T, 16] xb,
       float[1, 96, 16] gw, float[1, 96, 32] gr, float[1, 32, 16] rw, float[1, 32, 32] rrr) => () {
      y, yh, yc = LSTM <hidden_size = 32, direction = "bidirectional"> (x, w, rr)
      by, byh = GRU <hidden_size = 32, layout = 1> (xb, gw, gr)
      ry, ryh = RNN(x, rw, rrr)
    })"));
  EXPECT_EQ(r.type("y"), "float[T,2,B,32]");
  EXPECT_EQ(r.type("yh"), "float[2,B,32]");
  EXPECT_EQ(r.type("yc"), "float[2,B,32]");
  EXPECT_EQ(r.type("by"), "float[B,T,1,32]");
  EXPECT_EQ(r.type("byh"), "float[B,1,32]");
  EXPECT_EQ(r.type("ry"), "float[T,1,B,32]");
}

TEST(NNShape, ResizeScalesSizesAndAxes) {
  auto r = infer(withOpset(13, R"(
    g (float[N, 3, H, W] x, float[1, 3, 5, 7] s) => () <float[4] sc = {1, 1, 2, 2}, float[4] half = {1, 1, 0.5, 0.5},
                                                       int64[4] sz = {1, 3, 10, 14}> {
      up = Resize(x, , sc)
      dn = Resize(s, , half)
      to = Resize(s, , , sz)
    })"));
  EXPECT_EQ(r.type("up"), "float[N,3,?,?]"); // 2*H
  EXPECT_EQ(r.type("dn"), "float[1,3,2,3]");
  EXPECT_EQ(r.type("to"), "float[1,3,10,14]");
  auto v18 = infer(withOpset(18, R"(
    g (float[1, 3, 20, 40] x) => () <int64[2] sz = {10, 10}> {
      a = Resize <axes = [2, 3]> (x, , , sz)
      b = Resize <axes = [2, 3], keep_aspect_ratio_policy = "not_larger"> (x, , , sz)
    })"));
  EXPECT_EQ(v18.type("a"), "float[1,3,10,10]");
  EXPECT_EQ(v18.type("b"), "float[1,3,5,10]");
  auto v10 = infer(withOpset(10, R"(
    g (float[1, 3, 4, 4] x) => () <float[4] sc = {1, 1, 2, 3}> {
      a = Resize(x, sc)
      b = Upsample(x, sc)
    })"));
  EXPECT_EQ(v10.type("a"), "float[1,3,8,12]");
  EXPECT_EQ(v10.type("b"), "float[1,3,8,12]");
}

TEST(NNShape, MatMulPromotionAndBroadcast) {
  auto r = infer(withOpset(17, R"(
    g (float[3] v, float[3, 4] m, float[2, 3, 4] b, float[4] w, float[2, 1, 3, 4] p, float[5, 4, 6] q,
       float[batch, seq, 768] h, float[768, 3072] fc) => () {
      a = MatMul(v, m)
      c = MatMul(b, w)
      d = MatMul(p, q)
      e = MatMul(h, fc)
      s = MatMul(v, v)
    })"));
  EXPECT_EQ(r.type("a"), "float[4]");
  EXPECT_EQ(r.type("c"), "float[2,3]");
  EXPECT_EQ(r.type("d"), "float[2,5,3,6]");
  EXPECT_EQ(r.type("e"), "float[batch,seq,3072]");
  EXPECT_EQ(r.type("s"), "float");
  auto bad = infer(withOpset(17, R"(
    g (float[2, 3] a, float[4, 5] b, float x) => () {
      [mm] y = MatMul(a, b)
      [ms] z = MatMul(x, a)
    })"));
  EXPECT_TRUE(bad.warned("node 'mm' (MatMul): inner dims differ")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'ms' (MatMul): MatMul operands must have rank >= 1"))
      << bad.warnings();
}

TEST(NNShape, GemmTransposes) {
  auto r = infer(withOpset(13, R"(
    g (float[B, 64] x, float[10, 64] w, float[10] bias, float[64, B] xt) => () {
      y = Gemm <transB = 1> (x, w, bias)
      z = Gemm <transA = 1, transB = 1> (xt, w)
    })"));
  EXPECT_EQ(r.type("y"), "float[B,10]");
  EXPECT_EQ(r.type("z"), "float[B,10]");
  auto bad = infer(withOpset(13, R"(
    g (float[2, 64] x, float[10, 64] w, float[3] c) => () {
      [g1] y = Gemm(x, w)
      [g2] z = Gemm <transB = 1> (x, w, c)
    })"));
  EXPECT_TRUE(bad.warned("node 'g1' (Gemm): inner dims differ")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'g2' (Gemm): C [3] does not broadcast")) << bad.warnings();
}

TEST(NNShape, ReductionsAcrossOpsets) {
  auto v13 = infer(withOpset(13, R"(
    g (float[N, 3, 4] x) => () <int64[1] ax = {1}> {
      m = ReduceMean <axes = [-1]> (x)
      k = ReduceMax <axes = [0, 2], keepdims = 0> (x)
      s = ReduceSum(x, ax)
      all = ReduceL2 <keepdims = 0> (x)
      am = ArgMax <axis = 1, keepdims = 0> (x)
    })"));
  EXPECT_EQ(v13.type("m"), "float[N,3,1]");
  EXPECT_EQ(v13.type("k"), "float[3]");
  EXPECT_EQ(v13.type("s"), "float[N,1,4]");
  EXPECT_EQ(v13.type("all"), "float");
  EXPECT_EQ(v13.type("am"), "int64[N,4]");
  auto v18 = infer(withOpset(18, R"(
    g (float[N, 3, 4] x, int64[2] dyn) => () <int64[1] ax = {2}, int64[0] none = {}> {
      m = ReduceMean <keepdims = 0> (x, ax)
      e = ReduceMax <noop_with_empty_axes = 1> (x, none)
      d = ReduceProd(x, dyn)
      dk = ReduceProd <keepdims = 0> (x, dyn)
    })"));
  EXPECT_EQ(v18.type("m"), "float[N,3]");
  EXPECT_EQ(v18.type("e"), "float[N,3,4]");
  EXPECT_EQ(v18.type("d"), "float[?,?,?]");
  EXPECT_EQ(v18.type("dk"), "float[?]");
  auto bad = infer(withOpset(13, R"(
    g (float[2, 3] x) => () {
      [r] y = ReduceMean <axes = [4]> (x)
    })"));
  EXPECT_TRUE(bad.warned("node 'r' (ReduceMean): axis 4 is out of range")) << bad.warnings();
}

TEST(NNShape, Einsum) {
  auto r = infer(withOpset(12, R"(
    g (float[B, I, J] a, float[B, J, K] b, float[4, 4] sq, float[2, 3] m, float[3, 5] n,
       float[7, 2, 3] e1, float[3, 4] e2) => () {
      bmm = Einsum <equation = "bij,bjk->bik"> (a, b)
      diag = Einsum <equation = "ii->i"> (sq)
      implicit = Einsum <equation = "ij,jk"> (m, n)
      ell = Einsum <equation = "...ij,jk->...ik"> (e1, e2)
      tr = Einsum <equation = "ii"> (sq)
    })"));
  EXPECT_EQ(r.type("bmm"), "float[B,I,K]");
  EXPECT_EQ(r.type("diag"), "float[4]");
  EXPECT_EQ(r.type("implicit"), "float[2,5]");
  EXPECT_EQ(r.type("ell"), "float[7,2,4]");
  EXPECT_EQ(r.type("tr"), "float");
  auto bad = infer(withOpset(12, R"(
    g (float[2, 3] m, float[4, 5] n) => () {
      [e] y = Einsum <equation = "ij,jk->ik"> (m, n)
      [f] z = Einsum <equation = "ij->ik"> (m)
    })"));
  EXPECT_TRUE(bad.warned("node 'e' (Einsum): dims of 'j' differ")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'f' (Einsum): output letter 'k'")) << bad.warnings();
}

TEST(NNShape, SignalOps) {
  auto r = infer(withOpset(17, R"(
    g (float[1, 128, 1] sig) => () <int64 step = {8}, int64 len = {16}, int64 ws = {10}> {
      st = STFT(sig, step, , len)
      hw = HannWindow(ws)
      d = DFT <onesided = 1> (sig)
    })"));
  EXPECT_EQ(r.type("st"), "float[1,15,9,2]");
  EXPECT_EQ(r.type("hw"), "float[10]");
  EXPECT_EQ(r.type("d"), "float[1,65,2]");
}

} // namespace
} // namespace onnxslim::testing
