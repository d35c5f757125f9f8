//===- tests/runtime/ConvPackedFiltersTest.cpp - Filters kept packed -----===//
//
// A float Conv whose W is an initializer keeps W packed for its direct
// product in its node state (KernelContext::nodeState) from one run of the
// interpreter to the next. The kept panels must give every later run the
// bits a fresh interpreter gives, on every engine (the panels are the
// engine's), and a W that is a graph input must be packed afresh on every
// run, even when the caller feeds the same bytes with new contents. A 3x3
// convolution (convDirect with 8 input channels, the Winograd product with
// 16, whose kept filters are transformed) and a pointwise one
// (pointwiseDirect) run.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Interpreter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

std::vector<float> randomFloats(std::mt19937 &rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = d(rng);
  return v;
}

constexpr int64_t kMid = 16, kOut = 8, kH = 12, kW = 40;

/// Input channels of the 3x3 convolution: the direct product's and
/// Winograd's (kWinogradMinChannels, with kMid outputs).
constexpr int64_t kInputChannels[] = {8, 16};

/// X [1, cin, 12, 40] -> Conv 3x3 pad 1 (W, B) -> Conv 1x1 (P) -> Z. W is an
/// initializer, or with `wInput` the graph's second input.
struct TwoConvModel {
  Model model;
  Graph *g;
  TwoConvModel(int64_t kCin, const std::vector<float> &w, const std::vector<float> &b,
               const std::vector<float> &p, bool wInput) {
    model.opsetImport.push_back(OpsetId{"", 13, {}});
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
    Value *x = g->addInput("X", Type::tensor(DataType::Float));
    Value *wv = wInput ? g->addInput("W", Type::tensor(DataType::Float))
                       : g->addInitializer("W", Tensor::fromValues(DataType::Float,
                                                                   {kMid, kCin, 3, 3}, w));
    Value *bv = g->addInitializer("B", Tensor::fromValues(DataType::Float, {kMid}, b));
    Node *conv = g->createNode("Conv", {x, wv, bv}, {"Y"});
    conv->setAttr(Attribute::makeInts("pads", {1, 1, 1, 1}));
    g->append(conv);
    Value *pv =
        g->addInitializer("P", Tensor::fromValues(DataType::Float, {kOut, kMid, 1, 1}, p));
    Node *pointwise = g->createNode("Conv", {conv->result(0), pv}, {"Z"});
    g->append(pointwise);
    g->addOutput(pointwise->result(0));
  }
};

std::vector<uint8_t> bytesOf(const RtValue &v) {
  EXPECT_TRUE(v.isTensor());
  if (!v.isTensor())
    return {};
  return std::vector<uint8_t>(v.tensor->rawData(), v.tensor->rawData() + v.tensor->byteSize());
}

/// Output Z of one run of `interp` on `inputs`.
std::vector<uint8_t> runOnce(Interpreter &interp, const Graph &g,
                             const std::vector<RtValue> &inputs) {
  std::vector<RtValue> out;
  Status s = interp.run(g, inputs, out);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? bytesOf(out[0]) : std::vector<uint8_t>{};
}

} // namespace

TEST(ConvPackedFilters, ConstantFiltersKeptBetweenRunsGiveAFreshRunsBitsOnEveryEngine) {
  for (int64_t kCin : kInputChannels) {
    SCOPED_TRACE("input channels " + std::to_string(kCin));
    std::mt19937 rng(29);
    const std::vector<float> w = randomFloats(rng, kMid * kCin * 9), b = randomFloats(rng, kMid),
                             p = randomFloats(rng, kOut * kMid);
    TwoConvModel m(kCin, w, b, p, false);
    std::vector<RtValue> in = {RtValue::fromTensor(
        Tensor::fromValues(DataType::Float, {1, kCin, kH, kW}, randomFloats(rng, kCin * kH * kW)))};
    Interpreter kept(m.model);
    const std::string original = gemmEngineName();
    const std::vector<uint8_t> first = runOnce(kept, *m.g, in);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(runOnce(kept, *m.g, in), first) << "second run, " << original;
    // Switching engines between runs: the kept panels are the old engine's,
    // so the next run must pack them again for the new one.
    for (const char *engine : {"baseline", "avx2", "avx512", "baseline", "avx512"}) {
      if (!setGemmEngine(engine))
        continue;
      Interpreter fresh(m.model);
      const std::vector<uint8_t> want = runOnce(fresh, *m.g, in);
      EXPECT_EQ(runOnce(kept, *m.g, in), want) << "after switching to " << engine;
      EXPECT_EQ(runOnce(kept, *m.g, in), want) << "again on " << engine;
    }
    setGemmEngine(original.c_str());
  }
}

TEST(ConvPackedFilters, FiltersFromAGraphInputArePackedOnEveryRun) {
  for (int64_t kCin : kInputChannels) {
    SCOPED_TRACE("input channels " + std::to_string(kCin));
    std::mt19937 rng(31);
    const std::vector<float> w1 = randomFloats(rng, kMid * kCin * 9),
                             w2 = randomFloats(rng, kMid * kCin * 9), b = randomFloats(rng, kMid),
                             p = randomFloats(rng, kOut * kMid);
    TwoConvModel m(kCin, w1, b, p, true);
    TensorPtr x =
        Tensor::fromValues(DataType::Float, {1, kCin, kH, kW}, randomFloats(rng, kCin * kH * kW));
    TensorPtr w = Tensor::fromValues(DataType::Float, {kMid, kCin, 3, 3}, w1);
    std::vector<RtValue> in = {RtValue::fromTensor(x), RtValue::fromTensor(w)};
    Interpreter interp(m.model);
    const std::vector<uint8_t> withW1 = runOnce(interp, *m.g, in);
    // The caller writes new filters into the same bytes (as a program that
    // wraps its own buffer in a tensor may), and runs again.
    std::memcpy(const_cast<uint8_t *>(w->rawData()), w2.data(), w2.size() * sizeof(float));
    const std::vector<uint8_t> withW2 = runOnce(interp, *m.g, in);
    Interpreter fresh(m.model);
    EXPECT_EQ(withW2, runOnce(fresh, *m.g, in));
    EXPECT_NE(withW2, withW1);
  }
}
