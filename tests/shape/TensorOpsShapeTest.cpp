//===- tests/shape/TensorOpsShapeTest.cpp - Shape-manipulating op inference -===//
//
// Reshape, Flatten, (Un)Squeeze across the opset 13 attribute-to-input move,
// Transpose, Concat, Split (sizes, equal parts, opset 18 num_outputs),
// Slice, Gather*, Tile, Pad (opset 11 and 18), Expand, ConstantOfShape,
// Range, TopK, OneHot, data-dependent ops, and the malformed cases of each.
//
//===----------------------------------------------------------------------===//
#include "tests/shape/ShapeTestUtil.h"

namespace onnxslim::testing {
namespace {

TEST(TensorOpsShape, ReshapeWithZeroAndMinusOne) {
  auto r = infer(withOpset(17, R"(
    g (float[batch, 12, 64] x) => (float[batch, 768] y)
      <int64[2] s1 = {0, -1}, int64[4] s2 = {0, 3, 4, -1}, int64[1] s3 = {-1}> {
      y = Reshape(x, s1)
      z = Reshape(x, s2)
      f = Reshape(x, s3)
    })"));
  EXPECT_EQ(r.type("y"), "float[batch,768]");
  EXPECT_EQ(r.type("z"), "float[batch,3,4,64]");
  EXPECT_EQ(r.type("f"), "float[?]"); // batch*768: not a model symbol
}

TEST(TensorOpsShape, ReshapeAllowZeroAndAttributeForm) {
  auto r = infer(withOpset(14, R"(
    g (float[0, 3, 4] x) => (float[3, 4, 0] y) <int64[3] s = {3, 4, 0}> {
      y = Reshape <allowzero = 1> (x, s)
    })"));
  EXPECT_EQ(r.type("y"), "float[3,4,0]");
  auto old = infer(withOpset(1, R"(
    g (float[2, 6] x) => (float[3, 4] y) {
      y = Reshape <shape = [3, -1]> (x)
    })"));
  EXPECT_EQ(old.type("y"), "float[3,4]");
}

TEST(TensorOpsShape, ReshapeMalformed) {
  auto r = infer(withOpset(17, R"(
    g (float[2, 6] x) => () <int64[2] two = {-1, -1}, int64[2] bad = {5, 5}, int64[3] zero = {0, 0, 0}> {
      [r1] a = Reshape(x, two)
      [r2] b = Reshape(x, bad)
      [r3] c = Reshape(x, zero)
    })"));
  EXPECT_TRUE(r.warned("node 'r1' (Reshape): target shape has more than one -1")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'r2' (Reshape): cannot reshape")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'r3' (Reshape)")) << r.warnings();
  EXPECT_EQ(r.type("a"), "none");
  EXPECT_EQ(r.type("b"), "none");
  EXPECT_EQ(r.type("c"), "none");
}

TEST(TensorOpsShape, ReshapeWithUnknownTargetKeepsTheRank) {
  auto r = infer(withOpset(17, R"(
    g (float[2, 6] x, int64[3] s) => (float[?, ?, ?] y) {
      y = Reshape(x, s)
    })"));
  EXPECT_EQ(r.type("y"), "float[?,?,?]");
}

TEST(TensorOpsShape, FlattenSqueezeUnsqueezeTranspose) {
  auto r = infer(withOpset(13, R"(
    g (float[N, 3, 1, 5] x) => (float[N, 15] f) <int64[1] ax = {2}, int64[2] ua = {0, -1}> {
      f = Flatten <axis = -2> (x)
      f0 = Flatten <axis = 0> (x)
      s = Squeeze(x, ax)
      u = Unsqueeze(x, ua)
      t = Transpose <perm = [0, 2, 3, 1]> (x)
      rt = Transpose(x)
    })"));
  EXPECT_EQ(r.type("f"), "float[?,5]"); // N*3: an expression
  EXPECT_EQ(r.type("f0"), "float[1,?]");
  EXPECT_EQ(r.type("s"), "float[N,3,5]");
  EXPECT_EQ(r.type("u"), "float[1,N,3,1,5,1]");
  EXPECT_EQ(r.type("t"), "float[N,1,5,3]");
  EXPECT_EQ(r.type("rt"), "float[5,1,3,N]");
}

TEST(TensorOpsShape, SqueezeAndUnsqueezeAttributesBeforeOpset13) {
  auto r = infer(withOpset(11, R"(
    g (float[1, 3, 1] x) => (float[3] s) {
      s = Squeeze(x)
      a = Squeeze <axes = [-1]> (x)
      u = Unsqueeze <axes = [1]> (s)
    })"));
  EXPECT_EQ(r.type("s"), "float[3]");
  EXPECT_EQ(r.type("a"), "float[1,3]");
  EXPECT_EQ(r.type("u"), "float[3,1]");
}

TEST(TensorOpsShape, SqueezeOfSymbolicDimsWithoutAxesHasUnknownRank) {
  auto r = infer(withOpset(13, R"(
    g (float[N, 1] x) => (float[] y) {
      y = Squeeze(x)
    })"));
  EXPECT_EQ(r.type("y"), "float[]");
}

TEST(TensorOpsShape, SqueezeAndTransposeMalformed) {
  auto r = infer(withOpset(13, R"(
    g (float[2, 3] x) => () <int64[1] ax = {0}> {
      [sq] a = Squeeze(x, ax)
      [tr] b = Transpose <perm = [0, 0]> (x)
      [tr2] c = Transpose <perm = [0]> (x)
      [us] d = Unsqueeze(x, ax, ax)
    })"));
  EXPECT_TRUE(r.warned("node 'sq' (Squeeze): cannot squeeze axis 0 of size 2")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'tr' (Transpose): perm is not a permutation")) << r.warnings();
  EXPECT_TRUE(r.warned("node 'tr2' (Transpose): perm has 1 entries for rank 2")) << r.warnings();
  EXPECT_EQ(r.type("a"), "none");
  EXPECT_EQ(r.type("b"), "none");
}

TEST(TensorOpsShape, Concat) {
  auto r = infer(withOpset(17, R"(
    g (float[batch, 3] a, float[batch, 5] b, float[?, 2] c) => (float[batch, 10] y) {
      y = Concat <axis = 1> (a, b, c)
      z = Concat <axis = 0> (a, a)
    })"));
  EXPECT_EQ(r.type("y"), "float[batch,10]");
  EXPECT_EQ(r.type("z"), "float[?,3]"); // 2*batch
  auto bad = infer(withOpset(17, R"(
    g (float[2, 3] a, float[2] b, float[4, 3] c) => () {
      [c1] y = Concat <axis = 0> (a, b)
      [c2] z = Concat <axis = 1> (a, c)
      [c3] w = Concat <axis = 5> (a, a)
      [c4] v = Concat(a, a)
    })"));
  EXPECT_TRUE(bad.warned("node 'c1' (Concat): operands have different ranks")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'c2' (Concat): operands differ in dim 0")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'c3' (Concat): axis 5 is out of range")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'c4' (Concat): missing 'axis'")) << bad.warnings();
}

TEST(TensorOpsShape, SplitAcrossOpsets) {
  auto v11 = infer(withOpset(11, R"(
    g (float[6, N] x) => () {
      a, b = Split <axis = 0, split = [2, 4]> (x)
      c, d, e = Split(x)
    })"));
  EXPECT_EQ(v11.type("a"), "float[2,N]");
  EXPECT_EQ(v11.type("b"), "float[4,N]");
  EXPECT_EQ(v11.type("e"), "float[2,N]");
  auto v13 = infer(withOpset(13, R"(
    g (float[N, 10] x) => () <int64[2] s = {3, 7}> {
      a, b = Split <axis = 1> (x, s)
      c, d = Split <axis = 1> (x)
    })"));
  EXPECT_EQ(v13.type("a"), "float[N,3]");
  EXPECT_EQ(v13.type("b"), "float[N,7]");
  EXPECT_EQ(v13.type("d"), "float[N,5]");
  auto v18 = infer(withOpset(18, R"(
    g (float[7] x) => () {
      a, b, c = Split <num_outputs = 3> (x)
    })"));
  EXPECT_EQ(v18.type("a"), "float[3]");
  EXPECT_EQ(v18.type("c"), "float[1]");
  auto bad = infer(withOpset(13, R"(
    g (float[7] x) => () <int64[2] s = {3, 3}> {
      [s1] a, b = Split(x)
      [s2] c, d = Split(x, s)
    })"));
  EXPECT_TRUE(bad.warned("node 's1' (Split): dim 7 does not split evenly")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 's2' (Split): split sizes sum to 6")) << bad.warnings();
}

TEST(TensorOpsShape, Slice) {
  auto r = infer(withOpset(13, R"(
    g (float[10, 20, N] x) => () <int64[2] st = {1, -5}, int64[2] en = {9223372036854775807, -1},
                                  int64[2] ax = {0, 1}, int64[1] s2 = {2}, int64[1] z = {0},
                                  int64[1] e2 = {100}, int64[1] a2 = {2}, int64[1] m1 = {-1},
                                  int64[1] big = {-9223372036854775807}, int64[1] one = {1}> {
      a = Slice(x, st, en, ax)
      b = Slice(x, z, e2, a2, s2)
      c = Slice(x, m1, big, z, m1)
      d = Slice(x, one, e2, a2)
      e = Slice(x, z, e2, a2)
    })"));
  EXPECT_EQ(r.type("a"), "float[9,4,N]");
  EXPECT_EQ(r.type("b"), "float[10,20,?]"); // ceil(min(N, 100) / 2): truncation of a symbol
  EXPECT_EQ(r.type("c"), "float[10,20,N]"); // x[::-1] along axis 0
  EXPECT_EQ(r.type("d"), "float[10,20,?]");
  auto v9 = infer(withOpset(9, R"(
    g (float[10, 20] x) => () {
      a = Slice <starts = [2], ends = [-2], axes = [1]> (x)
    })"));
  EXPECT_EQ(v9.type("a"), "float[10,16]");
}

TEST(TensorOpsShape, SliceFromStartOrToEndOfASymbolicDim) {
  auto r = infer(withOpset(13, R"(
    g (float[batch, seq, 8] x) => () <int64[1] one = {1}, int64[1] end = {9223372036854775807},
                                       int64[1] ax = {1}, int64[1] m1 = {-1}, int64[1] z = {0}> {
      a = Slice(x, one, end, ax)
      b = Slice(x, z, m1, ax)
    })"));
  EXPECT_EQ(r.type("a"), "float[batch,?,8]"); // seq - 1
  EXPECT_EQ(r.type("b"), "float[batch,?,8]");
}

TEST(TensorOpsShape, SliceOfTheLastElementsNeedsAProvablyLargeDim) {
  auto r = infer(withOpset(13, R"(
    g (float[seq, 8] x) => () <int64[1] m3 = {-3}, int64[1] end = {9223372036854775807},
                                int64[1] ax = {0}, int64[4] pads = {3, 0, 0, 0}, int64[1] three = {3}> {
      tail = Slice(x, m3, end, ax)
      padded = Pad(x, pads)
      padded_tail = Slice(padded, m3, end, ax)
      unpadded = Slice(padded, three, end, ax)
    })"));
  EXPECT_EQ(r.type("tail"), "float[?,8]"); // min(3, seq)
  EXPECT_EQ(r.type("padded"), "float[?,8]");
  EXPECT_EQ(r.type("padded_tail"), "float[3,8]"); // seq + 3 >= 3
  EXPECT_EQ(r.type("unpadded"), "float[seq,8]");
}

TEST(TensorOpsShape, GatherFamily) {
  auto r = infer(withOpset(13, R"(
    g (float[V, 16] table, int64[batch, seq] ids, float[2, 3, 4] d, int64[2, 3, 1] gi,
       int64[4, 2] ndi) => (float[batch, seq, 16] y) <int64 i = {1}> {
      y = Gather(table, ids)
      s = Gather <axis = 1> (d, i)
      e = GatherElements <axis = 2> (d, gi)
      n = GatherND(d, ndi)
    })"));
  EXPECT_EQ(r.type("y"), "float[batch,seq,16]");
  EXPECT_EQ(r.type("s"), "float[2,4]");
  EXPECT_EQ(r.type("e"), "float[2,3,1]");
  EXPECT_EQ(r.type("n"), "float[4,4]");
  auto bad = infer(withOpset(13, R"(
    g (float[2, 3] d) => () <int64 i = {5}> {
      [g1] a = Gather(d, i)
      [g2] b = Gather <axis = 2> (d, i)
    })"));
  EXPECT_TRUE(bad.warned("node 'g1' (Gather): index 5 is out of range")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'g2' (Gather): axis 2 is out of range")) << bad.warnings();
}

TEST(TensorOpsShape, TilePadExpand) {
  auto r = infer(withOpset(13, R"(
    g (float[N, 3] x, float[3, 1] e) => () <int64[2] rep = {2, 3}, int64[4] pads = {1, 0, 2, 1},
                                              int64[3] shp = {2, 1, 4}> {
      t = Tile(x, rep)
      p = Pad(x, pads)
      x2 = Expand(e, shp)
    })"));
  EXPECT_EQ(r.type("t"), "float[?,9]");
  EXPECT_EQ(r.type("p"), "float[?,4]");
  EXPECT_EQ(r.type("x2"), "float[2,3,4]");
  auto v18 = infer(withOpset(18, R"(
    g (float[2, 3, 4] x) => () <int64[2] pads = {1, 2}, int64[1] axes = {-1}> {
      p = Pad(x, pads, , axes)
    })"));
  EXPECT_EQ(v18.type("p"), "float[2,3,7]");
  auto v2 = infer(withOpset(2, R"(
    g (float[2, 3] x) => () {
      p = Pad <pads = [0, 1, 0, 1]> (x)
    })"));
  EXPECT_EQ(v2.type("p"), "float[2,5]");
  auto bad = infer(withOpset(13, R"(
    g (float[2, 3] x) => () <int64[2] pads = {1, 2}, int64[2] shp = {5, 3}> {
      [p] a = Pad(x, pads)
      [e] b = Expand(x, shp)
    })"));
  EXPECT_TRUE(bad.warned("node 'p' (Pad): pads has 2 entries; expected 4")) << bad.warnings();
  EXPECT_TRUE(bad.warned("node 'e' (Expand): shapes cannot be broadcast")) << bad.warnings();
}

TEST(TensorOpsShape, GeneratorsFromConstantShapes) {
  auto r = infer(withOpset(17, R"(
    g () => () <int64[3] s = {2, 3, 4}, int64 start = {0}, int64 limit = {10}, int64 delta = {3},
                float fs = {0.5}, float fl = {2.0}, float fd = {0.5}> {
      c = ConstantOfShape <value = int32[1] {7}> (s)
      d = ConstantOfShape(s)
      r = Range(start, limit, delta)
      f = Range(fs, fl, fd)
      k = Constant <value_ints = [1, 2, 3]> ()
      v = Constant <value_float = 1.5> ()
    })"));
  EXPECT_EQ(r.type("c"), "int32[2,3,4]");
  EXPECT_EQ(r.type("d"), "float[2,3,4]");
  EXPECT_EQ(r.type("r"), "int64[4]");
  EXPECT_EQ(r.type("f"), "float[3]");
  EXPECT_EQ(r.type("k"), "int64[3]");
  EXPECT_EQ(r.type("v"), "float");
}

TEST(TensorOpsShape, TopKOneHotDepthToSpace) {
  auto r = infer(withOpset(11, R"(
    g (float[N, 10] x, int64[N] idx, float[2] vals, float[1, 8, 2, 3] d) => ()
      <int64[1] k = {3}, int64 depth = {5}> {
      v, i = TopK <axis = -1> (x, k)
      o = OneHot <axis = 0> (idx, depth, vals)
      ds = DepthToSpace <blocksize = 2> (d)
      sd = SpaceToDepth <blocksize = 2> (ds)
    })"));
  EXPECT_EQ(r.type("v"), "float[N,3]");
  EXPECT_EQ(r.type("i"), "int64[N,3]");
  EXPECT_EQ(r.type("o"), "float[5,N]");
  EXPECT_EQ(r.type("ds"), "float[1,2,4,6]");
  EXPECT_EQ(r.type("sd"), "float[1,8,2,3]");
}

TEST(TensorOpsShape, DataDependentResultsHaveUnknownDims) {
  auto r = infer(withOpset(17, R"(
    g (float[4, 5] x, bool[4] c, float[N, 4] boxes, float[1, 1, N] scores) => () {
      nz = NonZero(x)
      u, ui, uinv, uc = Unique(x)
      cp = Compress <axis = 0> (x, c)
      nms = NonMaxSuppression(boxes, scores)
      sz = Size(x)
      sh = Shape <start = 1> (x)
    })"));
  EXPECT_EQ(r.type("nz"), "int64[2,?]");
  EXPECT_EQ(r.type("u"), "float[?]");
  EXPECT_EQ(r.type("ui"), "int64[?]");
  EXPECT_EQ(r.type("uinv"), "int64[20]");
  EXPECT_EQ(r.type("cp"), "float[?,5]");
  EXPECT_EQ(r.type("nms"), "int64[?,3]");
  EXPECT_EQ(r.type("sz"), "int64");
  EXPECT_EQ(r.type("sh"), "int64[1]");
}

TEST(TensorOpsShape, ConstantValuesFoldThroughShapeArithmetic) {
  // NonZero of a known constant has a known count.
  auto r = infer(withOpset(17, R"(
    g () => () <int64[4] m = {0, 3, 0, 2}> {
      nz = NonZero(m)
    })"));
  EXPECT_EQ(r.type("nz"), "int64[1,2]");
}

} // namespace
} // namespace onnxslim::testing
