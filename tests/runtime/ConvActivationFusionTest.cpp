//===- tests/runtime/ConvActivationFusionTest.cpp - Conv + Relu/Clip -----===//
//
// The interpreter fuses a float Conv whose only reader is a Relu or a Clip
// with constant bounds into one step (the Conv clamps its output block by
// block). The fused result must be bit-identical to the two nodes run apart
// (here: the same graph with the Conv output also a graph output, which
// keeps them apart), on pointwise (GEMM and direct), depthwise, direct and
// im2col geometries, with NaN inputs, both Clip forms, and where fusion must
// not happen (bounds computed at run time, a double Conv, a second reader).
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

struct ConvCase {
  int64_t cin, cout, group, k, stride, pad, h, w;
};

std::vector<float> randomFloats(std::mt19937 &rng, int64_t n) {
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = d(rng);
  return v;
}

/// Conv (X, W, B) -> activation -> output; with `keepApart`, the Conv output
/// is a graph output too, so the two nodes run separately.
struct ConvActModel {
  Model model;
  Graph *g;
  ConvActModel(const ConvCase &c, const std::string &act, int64_t opset, bool keepApart,
               std::mt19937 &rng, DataType dt = DataType::Float, bool runtimeBounds = false) {
    model.opsetImport.push_back(OpsetId{"", opset, {}});
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
    Value *x = g->addInput("X", Type::tensor(dt));
    auto tensor = [&](std::vector<int64_t> dims, const std::vector<float> &v) {
      if (dt == DataType::Double)
        return Tensor::fromValues(dt, std::move(dims), std::vector<double>(v.begin(), v.end()));
      return Tensor::fromValues(dt, std::move(dims), v);
    };
    Value *w = g->addInitializer(
        "W", tensor({c.cout, c.cin / c.group, c.k, c.k},
                    randomFloats(rng, c.cout * (c.cin / c.group) * c.k * c.k)));
    Value *b = g->addInitializer("B", tensor({c.cout}, randomFloats(rng, c.cout)));
    Node *conv = g->createNode("Conv", {x, w, b}, {"Y"});
    conv->setAttr(Attribute::makeInts("strides", {c.stride, c.stride}));
    conv->setAttr(Attribute::makeInts("pads", {c.pad, c.pad, c.pad, c.pad}));
    conv->setAttr(Attribute::makeInt("group", c.group));
    g->append(conv);
    std::vector<Value *> actIn = {conv->result(0)};
    if (act == "Clip" && opset >= 11) {
      if (runtimeBounds) {
        actIn.push_back(g->addInput("lo", Type::tensor(dt)));
        actIn.push_back(g->addInput("hi", Type::tensor(dt)));
      } else {
        actIn.push_back(g->addInitializer("lo", tensor({}, {-0.5f})));
        actIn.push_back(g->addInitializer("hi", tensor({}, {1.25f})));
      }
    }
    Node *a = g->createNode(act, actIn, {"Z"});
    if (act == "Clip" && opset < 11) {
      a->setAttr(Attribute::makeFloat("min", -0.75f));
      a->setAttr(Attribute::makeFloat("max", 0.5f));
    }
    g->append(a);
    g->addOutput(a->result(0));
    if (keepApart)
      g->addOutput(conv->result(0));
  }
};

/// Raw bytes of output 0.
std::vector<uint8_t> bytesOf(const RtValue &v) {
  EXPECT_TRUE(v.isTensor());
  if (!v.isTensor())
    return {};
  return std::vector<uint8_t>(v.tensor->rawData(), v.tensor->rawData() + v.tensor->byteSize());
}

/// Runs the fused and the separate model on one input (plus bounds when the
/// Clip reads them from inputs) and expects the same bytes; also checks the
/// separate result against clamping the Conv output by hand.
void expectSame(const ConvCase &c, const std::string &act, int64_t opset, uint32_t seed,
                DataType dt = DataType::Float, bool runtimeBounds = false) {
  std::mt19937 rngA(seed), rngB(seed);
  ConvActModel fused(c, act, opset, false, rngA, dt, runtimeBounds);
  ConvActModel apart(c, act, opset, true, rngB, dt, runtimeBounds);
  std::vector<float> xv = randomFloats(rngA, c.cin * c.h * c.w);
  xv[0] = std::numeric_limits<float>::quiet_NaN();
  std::vector<RtValue> in;
  if (dt == DataType::Double)
    in.push_back(RtValue::fromTensor(
        Tensor::fromValues(dt, {1, c.cin, c.h, c.w}, std::vector<double>(xv.begin(), xv.end()))));
  else
    in.push_back(RtValue::fromTensor(Tensor::fromValues(dt, {1, c.cin, c.h, c.w}, xv)));
  if (runtimeBounds) {
    in.push_back(RtValue::fromTensor(Tensor::fromValues(dt, {}, std::vector<float>{-0.5f})));
    in.push_back(RtValue::fromTensor(Tensor::fromValues(dt, {}, std::vector<float>{1.25f})));
  }
  std::vector<RtValue> outF, outA;
  RunOptions profiled;
  profiled.profile = true;
  Interpreter iF(fused.model, OpRegistry::builtin(), profiled), iA(apart.model);
  ASSERT_TRUE(iF.run(*fused.g, in, outF).ok());
  ASSERT_TRUE(iA.run(*apart.g, in, outA).ok());
  // The profile counts the activation node only when it ran on its own.
  const bool expectFused = dt == DataType::Float && !runtimeBounds;
  EXPECT_EQ(iF.profile().count(act), expectFused ? 0u : 1u) << act << " opset " << opset;
  ASSERT_EQ(outF.size(), 1u);
  ASSERT_EQ(outA.size(), 2u);
  EXPECT_EQ(outF[0].tensor->dims(), outA[0].tensor->dims());
  EXPECT_EQ(bytesOf(outF[0]), bytesOf(outA[0])) << act << " opset " << opset;
  if (dt != DataType::Float)
    return;
  // The separate result is the clamp of the Conv output.
  float lo = act == "Relu" ? 0.0f : opset < 11 ? -0.75f : -0.5f;
  float hi = act == "Relu" ? std::numeric_limits<float>::infinity() : opset < 11 ? 0.5f : 1.25f;
  const float *y = outA[1].tensor->dataAs<float>();
  const float *z = outA[0].tensor->dataAs<float>();
  int64_t nans = 0;
  for (int64_t i = 0; i < outA[1].tensor->numElements(); ++i) {
    if (std::isnan(y[i])) {
      EXPECT_TRUE(std::isnan(z[i])) << i;
      ++nans;
      continue;
    }
    ASSERT_EQ(z[i], std::min(std::max(y[i], lo), hi)) << i;
  }
  EXPECT_GT(nans, 0) << "the NaN input reaches some output";
}

const ConvCase kCases[] = {
    {8, 16, 1, 1, 1, 0, 9, 11},  // pointwise, few input channels: direct product + GEMM tail
    {40, 24, 1, 1, 1, 0, 15, 37}, // pointwise, fewer outputs than inputs: the same
    {8, 40, 1, 1, 1, 0, 24, 40},  // pointwise expansion: one GEMM
    {32, 16, 2, 1, 1, 0, 8, 9},   // pointwise, grouped: direct product per group
    {6, 6, 6, 3, 2, 1, 20, 71},   // depthwise at stride 2: rows from the input (AVX-512)
    {6, 6, 6, 3, 1, 1, 20, 90},   // depthwise, wide plane: rows from the input (AVX-512)
    {6, 6, 6, 3, 1, 1, 20, 60},   // depthwise, narrower: one fused row
    {6, 6, 6, 3, 1, 1, 13, 17},  // depthwise, padded planes
    {6, 12, 6, 3, 2, 1, 20, 21}, // depthwise with a channel multiplier, strided
    {3, 10, 1, 3, 2, 1, 19, 23}, // strided: im2col + GEMM
    {4, 6, 2, 3, 1, 0, 9, 8},    // grouped, unit stride: direct product over padded planes
    {30, 14, 1, 3, 1, 1, 21, 45}, // direct, K in two slices, tiles across row ends
    {24, 20, 1, 3, 1, 1, 19, 37}, // 16+ channels each way: Winograd, odd plane
    {16, 16, 1, 3, 1, 0, 10, 12}, // Winograd without padding
};

TEST(ConvActivationFusion, ReluMatchesSeparateNodes) {
  uint32_t seed = 1;
  for (const ConvCase &c : kCases)
    expectSame(c, "Relu", 17, seed++);
}

TEST(ConvActivationFusion, ClipWithConstantBoundsMatchesSeparateNodes) {
  uint32_t seed = 11;
  for (const ConvCase &c : kCases) {
    expectSame(c, "Clip", 13, seed++); // bounds as constant inputs
    expectSame(c, "Clip", 6, seed++);  // bounds as attributes
  }
}

TEST(ConvActivationFusion, UnfusableCasesStillCompute) {
  // Bounds read at run time: not fused, same values.
  expectSame(kCases[3], "Clip", 13, 31, DataType::Float, /*runtimeBounds=*/true);
  // A double Conv declines the clamp; the Relu node runs.
  expectSame(kCases[1], "Relu", 17, 32, DataType::Double);
  expectSame(kCases[0], "Clip", 13, 33, DataType::Double);
}

/// How the Add's other operand is made in ConvAddModel.
enum class Addend {
  Input,         ///< a graph input of the Conv output's shape
  Before,        ///< Neg of such an input, computed before the Conv
  After,         ///< the same Neg, computed after the Conv (not fusable)
  Constant,      ///< an initializer of the output's shape
  Broadcast,     ///< an initializer of shape [1, C, 1, 1] (declined)
};

/// Conv -> Add(conv, z) (or Add(z, conv)) -> [Relu]; with `keepApart`, the
/// Conv output is a graph output too, which keeps the nodes apart.
struct ConvAddModel {
  Model model;
  Graph *g;
  std::vector<int64_t> outDims;
  ConvAddModel(const ConvCase &c, Addend kind, bool swapped, bool relu, bool keepApart,
               std::mt19937 &rng) {
    model.opsetImport.push_back(OpsetId{"", 17, {}});
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
    const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    outDims = {1, c.cout, oh, ow};
    Value *x = g->addInput("X", Type::tensor(DataType::Float));
    Value *r = g->addInput("R", Type::tensor(DataType::Float));
    Value *w = g->addInitializer(
        "W", Tensor::fromValues(DataType::Float, {c.cout, c.cin / c.group, c.k, c.k},
                                randomFloats(rng, c.cout * (c.cin / c.group) * c.k * c.k)));
    Value *b = g->addInitializer(
        "B", Tensor::fromValues(DataType::Float, {c.cout}, randomFloats(rng, c.cout)));
    Value *z = r;
    auto neg = [&] {
      Node *n = g->createNode("Neg", {r}, {"NR"});
      g->append(n);
      return n->result(0);
    };
    if (kind == Addend::Before)
      z = neg();
    if (kind == Addend::Constant)
      z = g->addInitializer("Z", Tensor::fromValues(DataType::Float, outDims,
                                                    randomFloats(rng, oh * ow * c.cout)));
    if (kind == Addend::Broadcast)
      z = g->addInitializer("Z", Tensor::fromValues(DataType::Float, {1, c.cout, 1, 1},
                                                    randomFloats(rng, c.cout)));
    Node *conv = g->createNode("Conv", {x, w, b}, {"Y"});
    conv->setAttr(Attribute::makeInts("strides", {c.stride, c.stride}));
    conv->setAttr(Attribute::makeInts("pads", {c.pad, c.pad, c.pad, c.pad}));
    conv->setAttr(Attribute::makeInt("group", c.group));
    g->append(conv);
    if (kind == Addend::After)
      z = neg();
    Value *y = conv->result(0);
    Node *add = g->createNode(
        "Add", swapped ? std::vector<Value *>{z, y} : std::vector<Value *>{y, z}, {"S"});
    g->append(add);
    Value *out = add->result(0);
    if (relu) {
      Node *a = g->createNode("Relu", {out}, {"T"});
      g->append(a);
      out = a->result(0);
    }
    g->addOutput(out);
    if (keepApart)
      g->addOutput(y);
  }
};

/// Runs the fusable and the kept-apart model on the same inputs and
/// expects the same bytes; `fused` says whether the Add (and the Relu)
/// should have run inside the Conv.
void expectAddSame(const ConvCase &c, Addend kind, bool swapped, bool relu, bool fused,
                   uint32_t seed) {
  std::mt19937 rngA(seed), rngB(seed);
  ConvAddModel one(c, kind, swapped, relu, false, rngA);
  ConvAddModel apart(c, kind, swapped, relu, true, rngB);
  std::vector<float> xv = randomFloats(rngA, c.cin * c.h * c.w);
  int64_t outN = 1;
  for (int64_t d : one.outDims)
    outN *= d;
  std::vector<float> rv = randomFloats(rngA, outN);
  // A NaN in each operand, at ends apart: where both operands of an
  // addition are NaN, which one comes out is the compiler's choice.
  xv[0] = std::numeric_limits<float>::quiet_NaN();
  rv[static_cast<size_t>(outN - 1)] = std::numeric_limits<float>::quiet_NaN();
  std::vector<RtValue> in = {
      RtValue::fromTensor(Tensor::fromValues(DataType::Float, {1, c.cin, c.h, c.w}, xv)),
      RtValue::fromTensor(Tensor::fromValues(DataType::Float, one.outDims, rv))};
  RunOptions profiled;
  profiled.profile = true;
  Interpreter iF(one.model, OpRegistry::builtin(), profiled);
  Interpreter iA(apart.model, OpRegistry::builtin(), profiled);
  std::vector<RtValue> outF, outA;
  ASSERT_TRUE(iF.run(*one.g, in, outF).ok());
  ASSERT_TRUE(iA.run(*apart.g, in, outA).ok());
  EXPECT_EQ(iA.profile().count("Add"), 1u);
  EXPECT_EQ(iF.profile().count("Add"), fused ? 0u : 1u)
      << "addend kind " << int(kind) << (swapped ? " swapped" : "");
  if (relu) {
    EXPECT_EQ(iF.profile().count("Relu"), fused ? 0u : 1u);
  }
  ASSERT_EQ(outF.size(), 1u);
  EXPECT_EQ(bytesOf(outF[0]), bytesOf(outA[0])) << "addend kind " << int(kind);
}

TEST(ConvAddFusion, AddOfAValueComputedBeforeMatchesSeparateNodes) {
  uint32_t seed = 51;
  for (const ConvCase &c : kCases)
    for (Addend kind : {Addend::Input, Addend::Before, Addend::Constant})
      for (bool relu : {false, true}) {
        expectAddSame(c, kind, false, relu, true, seed++);
        expectAddSame(c, kind, true, relu, true, seed++);
      }
}

TEST(ConvAddFusion, ProjectionsByPartsOnThreadsMatchSeparateNodes) {
  // Reductions of channels on small planes sum parts of K on separate
  // threads, then add them up with the bias; the clamp and the addend
  // come after that, as for the nodes run apart.
  const ConvCase cases[] = {
      {384, 64, 1, 1, 1, 0, 14, 14}, // one column tile short (196 positions)
      {96, 24, 1, 1, 1, 0, 30, 31},  // K not a multiple of the slices' lanes
  };
  uint32_t seed = 301;
  for (int threads : {2, 3}) {
    setThreadCount(threads);
    for (const ConvCase &c : cases) {
      expectSame(c, "Relu", 17, seed++);
      expectSame(c, "Clip", 13, seed++);
      for (bool relu : {false, true})
        expectAddSame(c, Addend::Input, false, relu, true, seed++);
    }
  }
  setThreadCount(1);
}

TEST(ConvAddFusion, UnfusableAddendsRunAsNodes) {
  uint32_t seed = 91;
  for (const ConvCase &c : kCases)
    for (bool relu : {false, true}) {
      // Computed after the Conv: not planned.
      expectAddSame(c, Addend::After, false, relu, false, seed++);
      // Broadcast from [1, C, 1, 1]: the kernel declines, the nodes run.
      expectAddSame(c, Addend::Broadcast, true, relu, false, seed++);
    }
}

} // namespace
