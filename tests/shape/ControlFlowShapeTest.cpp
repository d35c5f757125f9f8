//===- tests/shape/ControlFlowShapeTest.cpp - Subgraph, sequence, optional ops -===//
//
// If (branch merge, constant condition), Loop (carried types generalized to
// a fixed point, scan outputs with a leading dim, trip count), Scan, the
// sequence and optional ops, and malformed bodies.
//
//===----------------------------------------------------------------------===//
#include "tests/shape/ShapeTestUtil.h"

namespace onnxslim::testing {
namespace {

TEST(ControlFlowShape, IfMergesBranches) {
  auto r = infer(withOpset(17, R"(
    g (bool c, float[2, 3] a, float[2, 4] b) => (float[2, ?] y) {
      y, same = If(c) <then_branch = t () => (float[2, 3] ta, float[2, 3] ts) { ta = Relu(a) ts = Neg(a) },
                       else_branch = e () => (float[2, 4] eb, float[2, 3] es) { eb = Relu(b) es = Abs(a) }>
    })"));
  EXPECT_EQ(r.type("y"), "float[2,?]");
  EXPECT_EQ(r.type("same"), "float[2,3]");
  EXPECT_EQ(r.type("ta"), "float[2,3]");
  EXPECT_EQ(r.type("eb"), "float[2,4]");
}

TEST(ControlFlowShape, IfWithAConstantConditionTakesTheBranch) {
  auto r = infer(withOpset(17, R"(
    g (float[2, 3] a, float[2, 4] b) => () <bool c = {1}> {
      y = If(c) <then_branch = t () => (float[2, 3] ta) { ta = Relu(a) },
                 else_branch = e () => (float[2, 4] eb) { eb = Relu(b) }>
    })"));
  EXPECT_EQ(r.type("y"), "float[2,3]");
}

TEST(ControlFlowShape, ABranchThatNeverRunsIsNotReported) {
  // x.squeeze(-1) as exported for opset < 13: squeeze only when the dim is 1.
  auto r = infer(withOpset(17, R"(
    g (float[1, 128, 2] x) => () <int64[1] last = {-1}, int64[1] one = {1}> {
      s = Shape(x)
      d = Gather(s, last)
      c = Equal(d, one)
      y = If(c) <then_branch = t () => (float[] ts) { ts = Squeeze(x, last) },
                 else_branch = e () => (float[] es) { es = Identity(x) }>
    })"));
  EXPECT_EQ(r.type("c"), "bool[1]");
  EXPECT_EQ(r.type("y"), "float[1,128,2]");
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
}

TEST(ControlFlowShape, ABranchThatCannotRunLeavesTheOther) {
  const char *text = R"(<ir_version: 8, opset_import: ["" : 17, "custom" : 1]>
    g (bool c, float[1, 3, 4] x, float[8, 3, 7] w) => () {
      y = If(c) <then_branch = t () => (float[] ts) { [conv] ts = Conv(x, w) },
                 else_branch = e () => (float[] es) { es = Relu(x) }>
      z = If(c) <then_branch = t2 () => (float[] ts2) { ts2 = custom.Op(x) },
                 else_branch = e2 () => (float[] es2) { es2 = Relu(x) }>
    })";
  ShapeInferenceOptions strict;
  strict.strict = true;
  auto r = infer(text, strict);
  // The kernel is longer than the input: the then branch can never complete.
  EXPECT_TRUE(r.warned("node 'conv' (Conv): window leaves no output")) << r.warnings();
  EXPECT_EQ(r.type("y"), "float[1,3,4]");
  // An op without a rule is not a malformed node: the branches still merge.
  EXPECT_TRUE(r.warned("(custom:Op): no shape inference rule")) << r.warnings();
  EXPECT_EQ(r.type("z"), "float[]"); // merged with the declared branch output
}

TEST(ControlFlowShape, IfBranchesOfDifferentRanksGiveUnknownRank) {
  auto r = infer(withOpset(17, R"(
    g (bool c, float[2, 3] a) => () {
      y = If(c) <then_branch = t () => (float[2, 3] ta) { ta = Relu(a) },
                 else_branch = e () => (float eb) { eb = ReduceSum <keepdims = 0> (a) }>
    })"));
  EXPECT_EQ(r.type("y"), "float[]");
}

TEST(ControlFlowShape, IfOutputCountMismatchWarns) {
  auto r = infer(withOpset(17, R"(
    g (bool c, float[2] a) => () {
      [if1] y, z = If(c) <then_branch = t () => (float[2] ta) { ta = Relu(a) },
                          else_branch = e () => (float[2] eb) { eb = Relu(a) }>
    })"));
  EXPECT_TRUE(r.warned("node 'if1' (If): branches have 1 and 1 outputs; the node has 2"))
      << r.warnings();
}

TEST(ControlFlowShape, LoopCarriedShapeThatGrowsBecomesUnknown) {
  auto r = infer(withOpset(16, R"(
    g (int64 m, bool c, float[1, 4] init) => () {
      final, scanned = Loop(m, c, init) <body = body (int64 i, bool cin, float[] acc)
                                                 => (bool cout, float[] grown, float[] step) {
        cout = Identity(cin)
        grown = Concat <axis = 0> (acc, acc)
        step = ReduceSum <keepdims = 0> (acc)
      }>
    })"));
  EXPECT_EQ(r.type("final"), "float[?,4]");
  EXPECT_EQ(r.type("scanned"), "float[?]");
  // The body input is typed from the parent op: the generalized carried type.
  EXPECT_EQ(r.type("acc"), "float[?,4]");
  EXPECT_EQ(r.type("i"), "int64");
  EXPECT_EQ(r.type("cin"), "bool");
}

TEST(ControlFlowShape, LoopWithConstantTripCountAndNoCondition) {
  auto r = infer(withOpset(16, R"(
    g (float[3] x) => () <int64 m = {5}> {
      final, scanned = Loop(m, , x) <body = body (int64 i, bool cin, float[] acc)
                                                => (bool cout, float[] next, float[] out) {
        cout = Identity(cin)
        next = Add(acc, acc)
        out = Identity(acc)
      }>
    })"));
  EXPECT_EQ(r.type("final"), "float[3]");
  EXPECT_EQ(r.type("scanned"), "float[5,3]");
}

TEST(ControlFlowShape, LoopMalformedBody) {
  auto r = infer(withOpset(16, R"(
    g (int64 m, bool c, float[3] x) => () {
      [lp] y = Loop(m, c, x) <body = body (int64 i, bool cin) => (bool cout, float[3] nx) {
        cout = Identity(cin)
        nx = Identity(x)
      }>
    })"));
  EXPECT_TRUE(r.warned("node 'lp' (Loop): body has 2 inputs; expected 3")) << r.warnings();
  EXPECT_EQ(r.type("y"), "none");
}

TEST(ControlFlowShape, Scan) {
  auto r = infer(withOpset(16, R"(
    g (float[2] init, float[5, 2] xs) => () {
      sum, partial = Scan <num_scan_inputs = 1, body = body (float[] s, float[] x)
                                                           => (float[] ns, float[] out) {
        ns = Add(s, x)
        out = Identity(ns)
      }> (init, xs)
      t1 = Scan <num_scan_inputs = 1, scan_input_axes = [1], scan_output_axes = [1],
                 body = body2 (float[] col) => (float[] o) { o = Neg(col) }> (xs)
    })"));
  EXPECT_EQ(r.type("sum"), "float[2]");
  EXPECT_EQ(r.type("partial"), "float[5,2]");
  EXPECT_EQ(r.type("x"), "float[2]");
  EXPECT_EQ(r.type("t1"), "float[5,2]");
}

TEST(ControlFlowShape, ScanOpset8HasABatchDim) {
  auto r = infer(withOpset(8, R"(
    g (float[1, 2] init, float[1, 3, 2] xs) => () {
      sum, partial = Scan <num_scan_inputs = 1, body = body (float[] s, float[] x)
                                                           => (float[] ns, float[] out) {
        ns = Add(s, x)
        out = Identity(ns)
      }> (, init, xs)
    })"));
  EXPECT_EQ(r.type("sum"), "float[1,2]");
  EXPECT_EQ(r.type("partial"), "float[1,3,2]");
  EXPECT_EQ(r.type("x"), "float[2]");
}

TEST(ControlFlowShape, Sequences) {
  auto r = infer(withOpset(17, R"(
    g (float[2, 3] a, float[2, 3] b, float[4, 6] big) => () <int64 one = {1}, int64 two = {2}> {
      s = SequenceConstruct(a, b)
      at = SequenceAt(s, one)
      n = SequenceLength(s)
      ins = SequenceInsert(s, a)
      er = SequenceErase(s)
      e = SequenceEmpty <dtype = 7> ()
      sp = SplitToSequence <axis = 1> (big, two)
      sk = SplitToSequence <axis = 0, keepdims = 0> (big)
      cat = ConcatFromSequence <axis = 0> (s)
      stk = ConcatFromSequence <axis = 0, new_axis = 1> (s)
    })"));
  EXPECT_EQ(r.type("s"), "seq(float[2,3])");
  EXPECT_EQ(r.type("at"), "float[2,3]");
  EXPECT_EQ(r.type("n"), "int64");
  EXPECT_EQ(r.type("ins"), "seq(float[2,3])");
  EXPECT_EQ(r.type("er"), "seq(float[2,3])");
  EXPECT_EQ(r.type("e"), "seq(int64[])");
  EXPECT_EQ(r.type("sp"), "seq(float[4,2])");
  EXPECT_EQ(r.type("sk"), "seq(float[6])");
  EXPECT_EQ(r.type("cat"), "float[?,3]");
  EXPECT_EQ(r.type("stk"), "float[?,2,3]");
}

TEST(ControlFlowShape, SequenceMap) {
  auto r = infer(withOpset(17, R"(
    g (seq(float[N]) xs, float[N] bias) => () {
      ys = SequenceMap(xs, bias) <body = body (float[] x, float[] b) => (float[] y) { y = Add(x, b) }>
    })"));
  EXPECT_EQ(r.type("ys"), "seq(float[N])");
}

TEST(ControlFlowShape, Optionals) {
  auto r = infer(withOpset(18, R"(
    g (float[3] x) => () {
      o = Optional(x)
      e = Optional <type = int64[2]> ()
      v = OptionalGetElement(o)
      h = OptionalHasElement(o)
      p = OptionalGetElement(x)
    })"));
  EXPECT_EQ(r.type("o"), "optional(float[3])");
  EXPECT_EQ(r.type("e"), "optional(int64[2])");
  EXPECT_EQ(r.type("v"), "float[3]");
  EXPECT_EQ(r.type("h"), "bool");
  EXPECT_EQ(r.type("p"), "float[3]");
}

TEST(ControlFlowShape, BodyValuesSeeOuterScope) {
  auto r = infer(withOpset(17, R"(
    g (bool c, float[batch, 8] x) => () {
      y = If(c) <then_branch = t () => (float[] ty) { inner = Relu(x) ty = Add(inner, x) },
                 else_branch = e () => (float[] ey) { ey = Identity(x) }>
    })"));
  EXPECT_EQ(r.type("inner"), "float[batch,8]");
  EXPECT_EQ(r.type("y"), "float[batch,8]");
}

} // namespace
} // namespace onnxslim::testing
