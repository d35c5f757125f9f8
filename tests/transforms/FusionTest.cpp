//===- tests/transforms/FusionTest.cpp - Numeric checks of the fusions ----===//
//
// For each fusion pass: a small model in ONNX textual syntax is run by the
// interpreter before and after the pass on the same seeded inputs, and the
// outputs must agree within float rounding (rtol 1e-5; float16 models
// within float16 rounding). Each test also checks that the pass fired (the
// fused op count), that the IR verifies and that the interface is unchanged.
// FusedConv (fuse-conv-relu) has no interpreter kernel: its numeric check
// runs in ONNX Runtime (tests/transforms/ort_default_pipeline.sh).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "frontend/TextParser.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "transforms/Clone.h"
#include "transforms/PassRegistry.h"
#include "transforms/Passes.h"

#include <map>

namespace onnxslim {
namespace {

using test::interfaceOf;

/// Op-type counts of a main graph.
std::map<std::string, int> opCounts(const Model &m) {
  std::map<std::string, int> counts;
  for (Node *n : m.graph()->nodes())
    ++counts[n->opType()];
  return counts;
}

/// Runs `model` on inputs seeded with `seed`.
std::vector<rt::RtValue> runSeeded(const Model &model, uint64_t seed) {
  rt::InputOptions io;
  io.seed = seed;
  std::vector<rt::RtValue> inputs, outputs;
  rt::Status s = rt::makeInputs(*model.graph(), io, inputs);
  EXPECT_TRUE(s.ok()) << s.message();
  rt::Interpreter interpreter(model);
  s = interpreter.run(*model.graph(), inputs, outputs);
  EXPECT_TRUE(s.ok()) << s.message();
  return outputs;
}

/// Parses `text`, runs the comma-separated passes `pass` on it and compares
/// outputs before and after. Result: the op counts after the passes.
std::map<std::string, int> fuseAndCompare(const std::string &text, const std::string &pass, double rtol = 1e-5,
                                          double atol = 1e-6) {
  std::string error;
  std::unique_ptr<Model> model = parseModelText(text, error);
  EXPECT_TRUE(model) << error;
  if (!model)
    return {};
  std::unique_ptr<Model> reference = cloneModel(*model);
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  bool changed = false;
  for (size_t start = 0; start <= pass.size();) {
    size_t comma = std::min(pass.find(',', start), pass.size());
    std::string name = pass.substr(start, comma - start);
    start = comma + 1;
    const PassInfo *info = registry.lookup(name);
    EXPECT_TRUE(info) << name;
    if (!info)
      return {};
    std::unique_ptr<Pass> p = info->create();
    changed |= test::runPass(*p, *model);
  }
  EXPECT_TRUE(changed) << pass << " changed nothing";
  std::vector<std::string> problems = verify(*model);
  EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front());
  EXPECT_EQ(interfaceOf(*model), interfaceOf(*reference));
  for (uint64_t seed : {7u, 8u}) {
    std::vector<rt::RtValue> expected = runSeeded(*reference, seed);
    std::vector<rt::RtValue> actual = runSeeded(*model, seed);
    EXPECT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
      rt::Comparison c = rt::compareValues(actual[i], expected[i], rtol, atol);
      EXPECT_TRUE(c.ok) << pass << " output " << i << ": " << c.message << " (max abs " << c.maxAbsDiff
                        << ", max rel " << c.maxRelDiff << ")";
    }
  }
  return opCounts(*model);
}

constexpr const char *kConvBn = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,5,5] x) => (float[2,4,3,3] y) <float[4,3,3,3] w = {1, -2, 3, 4, 5, -6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9,
  1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, 2, 3, 4, 5, 6, 7, 8, 9,
  1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9},
  float[4] b = {0.5, -1, 2, 0}, float[4] s = {1.5, 0.5, -2, 1}, float[4] bb = {0.1, 0.2, 0.3, -0.4},
  float[4] m = {0.3, -0.2, 1, 2}, float[4] v = {1, 4, 0.25, 2}> {
  c = Conv(x, w, b)
  y = BatchNormalization <epsilon = 0.001> (c, s, bb, m, v)
}
)";

TEST(FusionTest, ConvBatchNorm) {
  auto ops = fuseAndCompare(kConvBn, "fuse-conv-batchnorm");
  EXPECT_EQ(ops["BatchNormalization"], 0);
  EXPECT_EQ(ops["Conv"], 1);
}

TEST(FusionTest, ConvBatchNormFloat16) {
  // Weights and parameters in float16 (the text syntax gives float16
  // elements as their bit patterns: w = {1, -2, 0.5, 0.25, 3, -1}, s = {1.5,
  // 0.5, -2}, B = {0.125, 0.25, -0.5}, m = {0.5, -0.25, 1}, v = {1, 4,
  // 0.25}). The fold is computed in double and rounded once to float16, so
  // the outputs agree within float16 rounding.
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float16[1,2,4,4] x) => (float16[1,3,4,4] y) <float16[3,2,1,1] w = {15360, 49152, 14336, 13312, 16896, 48128},
  float16[3] s = {15872, 14336, 49152}, float16[3] bb = {12288, 13312, 47104}, float16[3] m = {14336, 46080, 15360},
  float16[3] v = {15360, 17408, 13312}> {
  c = Conv(x, w)
  y = BatchNormalization(c, s, bb, m, v)
}
)";
  auto ops = fuseAndCompare(text, "fuse-conv-batchnorm", 1e-2, 1e-2);
  EXPECT_EQ(ops["BatchNormalization"], 0);
}

TEST(FusionTest, ConvBatchNormOpset7Spatial) {
  std::string text = kConvBn;
  text.replace(text.find("\"\" : 17"), 7, "\"\" : 7");
  text.replace(text.find("<epsilon = 0.001>"), 17, "<epsilon = 0.001, spatial = 1>");
  auto ops = fuseAndCompare(text, "fuse-conv-batchnorm");
  EXPECT_EQ(ops["BatchNormalization"], 0);
}

TEST(FusionTest, ConvTransposeBatchNormGrouped) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,3,3] x) => (float[1,6,4,4] y) <float[4,3,2,2] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12,
  1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6},
  float[6] s = {1, 2, 3, 4, 5, 6}, float[6] bb = {0, 1, 0, 1, 0, 1}, float[6] m = {1, 1, 1, 2, 2, 2}, float[6] v = {1, 2, 3, 4, 5, 6}> {
  c = ConvTranspose <group = 2> (x, w)
  y = BatchNormalization(c, s, bb, m, v)
}
)";
  auto ops = fuseAndCompare(text, "fuse-conv-batchnorm");
  EXPECT_EQ(ops["BatchNormalization"], 0);
}

TEST(FusionTest, ConvTransposeAddThenBatchNorm) {
  // The PaddleOCR detector's head: ConvTranspose, a bias Add, then BN.
  std::string text = R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[1,4,3,3] x) => (float[1,6,6,6] y) <float[4,3,2,2] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12,
  1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6}, float[6,1,1] b = {1, -1, 2, -2, 3, -3},
  float[6] s = {1, 2, 3, 4, 5, 6}, float[6] bb = {0, 1, 0, 1, 0, 1}, float[6] m = {1, 1, 1, 2, 2, 2}, float[6] v = {1, 2, 3, 4, 5, 6}> {
  c = ConvTranspose <group = 2, strides = [2, 2]> (x, w)
  a = Add(c, b)
  y = BatchNormalization(a, s, bb, m, v)
}
)";
  auto ops = fuseAndCompare(text, "fuse-conv-add,fuse-conv-batchnorm");
  EXPECT_EQ(ops["BatchNormalization"], 0);
  EXPECT_EQ(ops["Add"], 0);
  EXPECT_EQ(ops["ConvTranspose"], 1);
}

TEST(FusionTest, GemmAndMatMulBatchNorm) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x) => (float[3,2] y, float[3,2] z) <float[2,4] w = {1, 2, 3, 4, -1, 0.5, 2, 1}, float[2] c = {0.5, -0.5},
  float[4,2] w2 = {1, 2, 3, 4, -1, 0.5, 2, 1},
  float[2] s = {1.5, 0.5}, float[2] bb = {0.1, 0.2}, float[2] m = {0.3, -0.2}, float[2] v = {1, 4}> {
  g1 = Gemm <transB = 1, beta = 2.0> (x, w, c)
  y = BatchNormalization(g1, s, bb, m, v)
  g2 = MatMul(x, w2)
  z = BatchNormalization(g2, s, bb, m, v)
}
)";
  auto ops = fuseAndCompare(text, "fuse-conv-batchnorm");
  EXPECT_EQ(ops["BatchNormalization"], 0);
  EXPECT_EQ(ops["Add"], 1);
}

TEST(FusionTest, ConvAddMul) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,4,4] x) => (float[1,3,4,4] y) <float[3,2,1,1] w = {1, -2, 0.5, 0.25, 3, -1}, float[3] b = {1, 2, 3},
  float[3,1,1] k = {2, -1, 0.5}, float[1,3,1,1] a = {0.25, 0.5, -4}, float sc = {3}> {
  c = Conv(x, w, b)
  d = Mul(k, c)
  e = Conv(x, w)
  f = Add(e, a)
  h = Mul(f, sc)
  y = Sum(d, h)
}
)";
  // fuse-conv-add makes f a Conv result, which fuse-conv-mul then scales.
  auto ops = fuseAndCompare(text, "fuse-conv-add,fuse-conv-mul");
  EXPECT_EQ(ops["Mul"], 0);
  EXPECT_EQ(ops["Add"], 0);
  EXPECT_EQ(ops["Conv"], 2);
}

TEST(FusionTest, MatMulAdd) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x) => (float[3,2] y) <float[4,3] w1 = {1, 2, 3, 4, -1, 0.5, 2, 1, 0, 1, 1, -1}, float[3] b1 = {0.5, -0.5, 1},
  float[3,2] w2 = {1, 2, 3, 4, -1, 0.5}, float[1,2] b2 = {0.25, 2}> {
  h = MatMul(x, w1)
  a = Add(b1, h)
  r = Relu(a)
  o = MatMul(r, w2)
  y = Add(o, b2)
}
)";
  // Shape inference gives r its rank (2), which the second fusion needs.
  auto ops = fuseAndCompare(text, "infer-shapes,fuse-matmul-add");
  EXPECT_EQ(ops["Gemm"], 2);
  EXPECT_EQ(ops["MatMul"], 0);
}

TEST(FusionTest, PadConvAndPools) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,5,5] x) => (float[1,3,7,7] y, float[1,2,5,5] z, float[1,2,6,6] u) <float[3,2,3,3] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9,
  1, 0, 1, 0, 1, 0, 1, 0, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1},
  int64[8] pads = {0, 0, 2, 1, 0, 0, 1, 2}, int64[8] pp = {0, 0, 1, 1, 0, 0, 1, 1}, float ninf = {-inf}, int64[2] axes = {2, 3}, int64[4] ap = {1, 0, 0, 1}> {
  p = Pad(x, pads)
  y = Conv <pads = [0, 1, 0, 1]> (p, w)
  q = Pad(x, pp, ninf)
  z = MaxPool <kernel_shape = [3, 3]> (q)
  r = Pad(x, ap, , axes)
  u = AveragePool <kernel_shape = [2, 2], count_include_pad = 1, pads = [0, 1, 1, 0]> (r)
}
)";
  text.replace(text.find("\"\" : 17"), 7, "\"\" : 18");
  auto ops = fuseAndCompare(text, "fuse-pad-conv");
  EXPECT_EQ(ops["Pad"], 0);
}

TEST(FusionTest, LayerNorm) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] z) <float eps = {1e-5}, float two = {2}, float[4] gamma = {1, 2, 0.5, -1}, float[4] beta = {0, 1, -1, 0.5}> {
  m = ReduceMean <axes = [-1]> (x)
  d = Sub(x, m)
  p = Pow(d, two)
  v = ReduceMean <axes = [-1]> (p)
  ve = Add(v, eps)
  s = Sqrt(ve)
  n = Div(d, s)
  g1 = Mul(n, gamma)
  y = Add(g1, beta)
  m2 = ReduceMean <axes = [1, 2]> (x)
  d2 = Sub(x, m2)
  p2 = Mul(d2, d2)
  v2 = ReduceMean <axes = [1, 2]> (p2)
  ve2 = Add(eps, v2)
  s2 = Sqrt(ve2)
  z = Div(d2, s2)
}
)";
  auto ops = fuseAndCompare(text, "fuse-layernorm");
  EXPECT_EQ(ops["LayerNormalization"], 2);
  EXPECT_EQ(ops["ReduceMean"], 0);
}

TEST(FusionTest, LayerNormOpset18AxesInput) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3,4] x) => (float[2,3,4] y) <float eps = {1e-5}, float two = {2}, int64[1] ax = {-1}, float[1,4] gamma = {1, 2, 0.5, -1}> {
  m = ReduceMean(x, ax)
  d = Sub(x, m)
  p = Pow(d, two)
  v = ReduceMean(p, ax)
  ve = Add(v, eps)
  s = Sqrt(ve)
  n = Div(d, s)
  y = Mul(gamma, n)
}
)";
  auto ops = fuseAndCompare(text, "fuse-layernorm");
  EXPECT_EQ(ops["LayerNormalization"], 1);
}

TEST(FusionTest, Gelu) {
  std::string text = R"(<ir_version: 9, opset_import: ["" : 20]>
g (float[2,8] x) => (float[2,8] y, float[2,8] z, float[2,8] t) <float sq2 = {1.4142135381698608}, float one = {1}, float half = {0.5},
  float three = {3}, float c1 = {0.044715}, float c2 = {0.7978845608028654}, float isq2 = {0.7071067811865476}> {
  a = Div(x, sq2)
  e = Erf(a)
  b = Add(e, one)
  c = Mul(x, b)
  y = Mul(c, half)
  h = Mul(half, x)
  a2 = Mul(x, isq2)
  e2 = Erf(a2)
  b2 = Add(one, e2)
  z = Mul(h, b2)
  p = Pow(x, three)
  q = Mul(c1, p)
  r = Add(x, q)
  s = Mul(r, c2)
  th = Tanh(s)
  u = Add(th, one)
  h2 = Mul(x, half)
  t = Mul(h2, u)
}
)";
  auto ops = fuseAndCompare(text, "fuse-gelu");
  EXPECT_EQ(ops["Gelu"], 3);
  EXPECT_EQ(ops["Erf"], 0);
  EXPECT_EQ(ops["Tanh"], 0);
}

TEST(FusionTest, TargetRules) {
  EXPECT_EQ(requiredTarget("fuse-conv-relu"), "onnxruntime");
  EXPECT_EQ(requiredTarget("fuse-conv-batchnorm"), "");
  EXPECT_NE(targetPipeline("onnxruntime").find("fuse-conv-relu"), std::string::npos);
  EXPECT_EQ(defaultPipeline().find("fuse-conv-relu"), std::string::npos);
  EXPECT_NE(defaultPipeline().find("fuse-conv-batchnorm"), std::string::npos);
}

} // namespace
} // namespace onnxslim
