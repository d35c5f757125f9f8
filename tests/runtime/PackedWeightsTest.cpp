//===- tests/runtime/PackedWeightsTest.cpp - Weights kept packed ---------===//
//
// A float MatMul or Gemm whose B is an initializer keeps B packed for the
// GEMM engine in its node state (nn::keptPackedB) from its second run on.
// Every run must give the bits a fresh interpreter's first run gives (that
// one multiplies B as it is): on every engine, after the engine changes
// between runs, and on one thread or three. A B that is a graph input is
// never kept. The shapes take several K slices, a last column panel cut
// short, a row count off the micro-kernel's and, for Gemm, transposed B
// with a C; a product of few columns (dot products) is never packed.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Interpreter.h"
#include "runtime/ThreadPool.h"

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

constexpr int64_t kRows = 41, kBatch = 2, kK = 300, kN = 300, kFew = 5;

/// X [2, 41, 300] -> MatMul(W [300, 300]) -> Y; MatMul(F [300, 5]) -> V (few
/// columns); A [82, 300] -> Gemm(G [300, 300], transB, C [300]) -> Z. With
/// `bInputs`, W and G are graph inputs instead of initializers.
struct ProductModel {
  Model model;
  Graph *g;
  ProductModel(std::mt19937 &rng, bool bInputs) {
    model.opsetImport.push_back(OpsetId{"", 13, {}});
    model.setGraph(std::make_unique<Graph>());
    g = model.graph();
    g->name = "main";
    Value *x = g->addInput("X", Type::tensor(DataType::Float));
    Value *a = g->addInput("A", Type::tensor(DataType::Float));
    auto weights = [&](const char *name, std::vector<int64_t> dims) {
      int64_t n = 1;
      for (int64_t d : dims)
        n *= d;
      return bInputs ? g->addInput(name, Type::tensor(DataType::Float))
                     : g->addInitializer(name, Tensor::fromValues(DataType::Float, dims, randomFloats(rng, n)));
    };
    Value *w = weights("W", {kK, kN});
    Value *gw = weights("G", {kN, kK});
    Value *f = g->addInitializer("F", Tensor::fromValues(DataType::Float, {kK, kFew}, randomFloats(rng, kK * kFew)));
    Value *c = g->addInitializer("C", Tensor::fromValues(DataType::Float, {kN}, randomFloats(rng, kN)));
    Node *mm = g->createNode("MatMul", {x, w}, {"Y"});
    g->append(mm);
    Node *few = g->createNode("MatMul", {x, f}, {"V"});
    g->append(few);
    Node *gemm = g->createNode("Gemm", {a, gw, c}, {"Z"});
    gemm->setAttr(Attribute::makeInt("transB", 1));
    gemm->setAttr(Attribute::makeFloat("alpha", 0.75f));
    gemm->setAttr(Attribute::makeFloat("beta", 1.5f));
    g->append(gemm);
    g->addOutput(mm->result(0));
    g->addOutput(few->result(0));
    g->addOutput(gemm->result(0));
  }
};

using Outputs = std::vector<std::vector<uint8_t>>;

Outputs runOnce(Interpreter &interp, const Graph &g, const std::vector<RtValue> &inputs) {
  std::vector<RtValue> out;
  Status s = interp.run(g, inputs, out);
  EXPECT_TRUE(s.ok()) << s.message();
  Outputs bytes;
  for (const RtValue &v : out) {
    EXPECT_TRUE(v.isTensor());
    if (v.isTensor())
      bytes.emplace_back(v.tensor->rawData(), v.tensor->rawData() + v.tensor->byteSize());
  }
  return bytes;
}

RtValue randomTensor(std::mt19937 &rng, std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return RtValue::fromTensor(Tensor::fromValues(DataType::Float, dims, randomFloats(rng, n)));
}

} // namespace

TEST(PackedWeights, ConstantWeightsKeptBetweenRunsGiveAFreshRunsBits) {
  std::mt19937 rng(37);
  ProductModel m(rng, false);
  std::vector<RtValue> in = {randomTensor(rng, {kBatch, kRows, kK}), randomTensor(rng, {kBatch * kRows, kK})};
  const std::string original = gemmEngineName();
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    setThreadCount(threads);
    Interpreter kept(m.model);
    const Outputs first = runOnce(kept, *m.g, in);
    ASSERT_EQ(first.size(), 3u);
    EXPECT_EQ(runOnce(kept, *m.g, in), first) << "second run (packs), " << original;
    EXPECT_EQ(runOnce(kept, *m.g, in), first) << "third run (kept), " << original;
    // The kept panels are the old engine's: the next run packs them again.
    for (const char *engine : {"baseline", "avx2", "avx512", "baseline", "avx512"}) {
      if (!setGemmEngine(engine))
        continue;
      Interpreter fresh(m.model);
      const Outputs want = runOnce(fresh, *m.g, in);
      EXPECT_EQ(runOnce(kept, *m.g, in), want) << "after switching to " << engine;
      EXPECT_EQ(runOnce(kept, *m.g, in), want) << "again on " << engine;
    }
    setGemmEngine(original.c_str());
  }
  setThreadCount(1);
  Interpreter one(m.model);
  const Outputs oneThread = runOnce(one, *m.g, in);
  setThreadCount(3);
  Interpreter three(m.model);
  runOnce(three, *m.g, in);
  EXPECT_EQ(runOnce(three, *m.g, in), oneThread) << "kept weights on three threads against one";
  setThreadCount(1);
}

TEST(PackedWeights, WeightsFromAGraphInputAreReadOnEveryRun) {
  std::mt19937 rng(41);
  ProductModel m(rng, true);
  TensorPtr w = Tensor::fromValues(DataType::Float, {kK, kN}, randomFloats(rng, kK * kN));
  TensorPtr gw = Tensor::fromValues(DataType::Float, {kN, kK}, randomFloats(rng, kN * kK));
  std::vector<RtValue> in = {randomTensor(rng, {kBatch, kRows, kK}), randomTensor(rng, {kBatch * kRows, kK}),
                             RtValue::fromTensor(w), RtValue::fromTensor(gw)};
  Interpreter interp(m.model);
  const Outputs before = runOnce(interp, *m.g, in);
  runOnce(interp, *m.g, in);
  // New weights in the same bytes (a caller's own buffer), then run again.
  for (TensorPtr t : {w, gw}) {
    std::vector<float> fresh = randomFloats(rng, t->numElements());
    std::memcpy(const_cast<uint8_t *>(t->rawData()), fresh.data(), fresh.size() * sizeof(float));
  }
  const Outputs after = runOnce(interp, *m.g, in);
  Interpreter fresh(m.model);
  EXPECT_EQ(after, runOnce(fresh, *m.g, in));
  ASSERT_EQ(after.size(), 3u);
  EXPECT_NE(after[0], before[0]);
  EXPECT_NE(after[2], before[2]);
}
