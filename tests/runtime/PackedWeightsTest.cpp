//===- tests/runtime/PackedWeightsTest.cpp - Weights kept packed ---------===//
//
// A float MatMul or Gemm whose B is an initializer keeps B packed for the
// GEMM engine in its node state (nn::keptPackedB) from its second run on.
// Every run must give the bits a fresh interpreter's first run gives (that
// one multiplies B as it is): on every engine, after the engine changes
// between runs, and on one thread or three. A B that is a graph input is
// never kept. The shapes take several K slices, a last column panel cut
// short, a row count off the micro-kernel's and, for Gemm, transposed B
// with a C; a product of few columns (dot products) is never packed. And
// products of at most 16 columns, which sgemm runs on the AVX2 kernel on
// the AVX-512 engine, give the bits of the AVX-512 kernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Interpreter.h"
#include "runtime/Simd.h"
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

/// On the AVX-512 engine a product of at most 16 columns runs on the AVX2
/// micro-kernel (6x16 tiles instead of half-empty 12x32 ones): each output
/// is the same chain of fused multiply-adds, so sgemm must give the bits
/// of the 12x32 kernel, which gemmPackedB still runs on B packed 32 wide.
/// Column counts past the dot-product cut (8) up to 16, row counts off both
/// tiles, one K slice and two, alpha 1 and not, beta 0 and 1, a row bias.
TEST(PackedWeights, NarrowProductsGiveTheWideKernelsBits) {
  const std::string original = gemmEngineName();
  if (!setGemmEngine("avx512")) {
    setGemmEngine(original.c_str());
    GTEST_SKIP() << "this CPU has no AVX-512: the AVX2 kernel is the engine's own";
  }
  std::mt19937 rng(53);
  const int64_t width = gemmPanelWidth<float>();
  ASSERT_EQ(width, 32);
  for (int64_t N : {9, 13, 16})
    for (int64_t M : {2, 5, 13, 65})
      for (int64_t K : {1, 16, 65, 1100})
        for (float alpha : {1.0f, 0.75f})
          for (float beta : {0.0f, 1.0f})
            for (bool bias : {false, true}) {
              const std::vector<float> a = randomFloats(rng, M * K), b = randomFloats(rng, K * N),
                                       c0 = randomFloats(rng, M * N), rb = randomFloats(rng, M);
              std::vector<float> narrow = c0, wide = c0;
              sgemm(false, false, M, N, K, alpha, a.data(), K, b.data(), N, beta, narrow.data(), N,
                    bias ? rb.data() : nullptr);
              simd::AlignedVector<float> packed(static_cast<size_t>(K * width)); // the kernels' aligned loads
              packBPanels(false, K, N, b.data(), N, packed.data());
              gemmPackedB(false, M, N, K, alpha, a.data(), K, packed.data(), width, beta, wide.data(), N,
                          bias ? rb.data() : nullptr, N);
              ASSERT_EQ(0, std::memcmp(narrow.data(), wide.data(), narrow.size() * sizeof(float)))
                  << "M " << M << " N " << N << " K " << K << " alpha " << alpha << " beta " << beta << " bias "
                  << bias;
            }
  setGemmEngine(original.c_str());
}

namespace {

/// Matrix-vector products (one row of A, or one column of B) and products
/// of a few columns over a matrix large enough to be cut across the
/// threads (gemv's and gemmFewColumns' row ranges): the same
/// bits on one, two and three threads, and on one thread each output is
/// that row's dot product alone (the product of a one-row slice).
TEST(MatrixVector, LargeProductsGiveTheSameBitsOnEveryThreadCount) {
  std::mt19937 rng(71);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  const int64_t N = 1003, K = 1280; // 1.28M matrix elements, rows off every cut
  std::vector<float> a(static_cast<size_t>(K)), w(static_cast<size_t>(N * K));
  for (float &v : a)
    v = d(rng);
  for (float &v : w)
    v = d(rng);
  const std::string original = gemmEngineName();
  for (const char *engine : {"baseline", "avx2", "avx512"}) {
    if (!setGemmEngine(engine))
      continue;
    SCOPED_TRACE(engine);
    auto rowTimesW = [&](int threads) { // 1 x K by (N x K)^T
      setThreadCount(threads);
      std::vector<float> c(static_cast<size_t>(N));
      sgemm(false, true, 1, N, K, 1.0f, a.data(), K, w.data(), K, 0.0f, c.data(), N);
      return c;
    };
    auto wTimesColumn = [&](int threads) { // (N x K) by K x 1
      setThreadCount(threads);
      std::vector<float> c(static_cast<size_t>(N));
      sgemm(false, false, N, 1, K, 1.0f, w.data(), K, a.data(), 1, 0.0f, c.data(), 1);
      return c;
    };
    // A few columns (gemmFewColumns' dot products), on a matrix the size of
    // a squeeze-excitation layer's weights: 961 x 240, cut from 128K.
    auto wTimesThreeColumns = [&](int threads) { // (961 x 240) by 240 x 3
      setThreadCount(threads);
      std::vector<float> c(961 * 3);
      sgemm(false, false, 961, 3, 240, 1.0f, w.data(), 240, a.data(), 3, 0.0f, c.data(), 3);
      return c;
    };
    const std::vector<float> r1 = rowTimesW(1), c1 = wTimesColumn(1), f1 = wTimesThreeColumns(1);
    for (int threads : {2, 3}) {
      const std::vector<float> r = rowTimesW(threads), c = wTimesColumn(threads),
                               f = wTimesThreeColumns(threads);
      EXPECT_EQ(0, std::memcmp(r1.data(), r.data(), r.size() * sizeof(float))) << threads;
      EXPECT_EQ(0, std::memcmp(c1.data(), c.data(), c.size() * sizeof(float))) << threads;
      EXPECT_EQ(0, std::memcmp(f1.data(), f.data(), f.size() * sizeof(float))) << threads;
    }
    setThreadCount(1);
    for (int64_t j : {int64_t{0}, int64_t{500}, N - 1}) {
      float one = 0;
      sgemm(false, true, 1, 1, K, 1.0f, a.data(), K, w.data() + j * K, K, 0.0f, &one, 1);
      EXPECT_EQ(one, r1[static_cast<size_t>(j)]) << "row " << j;
    }
  }
  setThreadCount(1);
  setGemmEngine(original.c_str());
}

} // namespace
