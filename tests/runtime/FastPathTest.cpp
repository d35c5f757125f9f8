//===- tests/runtime/FastPathTest.cpp - Kernel fast paths vs definitions --===//
//
// Fast paths checked against the op's definition computed here: constant
// Pad that writes only the border (random ranks, positive and negative pads,
// zero and non-zero values, empty copies), Transpose (the tiled copy of a
// transpose of the last two dims, and the strided one), and
// BatchNormalization writing in place over a dying input.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

/// Runs a one-node graph (inputs as graph inputs, except `consts`, which are
/// initializers) and returns output 0.
TensorPtr runOne(const std::string &op, int64_t opset, const std::vector<TensorPtr> &inputs,
                 const std::vector<size_t> &consts, std::vector<Attribute> attrs = {}) {
  Model model;
  model.opsetImport.push_back(OpsetId{"", opset, {}});
  model.setGraph(std::make_unique<Graph>());
  Graph *g = model.graph();
  std::vector<Value *> operands;
  std::vector<RtValue> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    if (std::find(consts.begin(), consts.end(), i) != consts.end()) {
      operands.push_back(g->addInitializer(name, inputs[i]));
    } else {
      operands.push_back(g->addInput(name, Type::tensor(inputs[i]->dtype())));
      feeds.push_back(RtValue::fromTensor(inputs[i]));
    }
  }
  Node *n = g->append(g->createNode(op, operands, {"out"}));
  for (Attribute &a : attrs)
    n->setAttr(std::move(a));
  g->addOutput(n->result(0));
  Interpreter interp(model);
  std::vector<RtValue> out;
  Status s = interp.run(*g, feeds, out);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? out[0].tensor : nullptr;
}

TEST(PadFastPath, ConstantPadMatchesDefinition) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    int64_t rank = 1 + trial % 4;
    std::vector<int64_t> dims(rank), pads(2 * rank), outDims(rank);
    int64_t n = 1;
    for (int64_t a = 0; a < rank; ++a) {
      dims[a] = 1 + static_cast<int64_t>(rng() % 5);
      n *= dims[a];
    }
    for (int64_t a = 0; a < rank; ++a) {
      pads[a] = static_cast<int64_t>(rng() % 5) - 1 - (trial % 7 == 0 ? 3 : 0);
      pads[a + rank] = static_cast<int64_t>(rng() % 4) - 1;
      pads[a] = std::max(pads[a], -dims[a]);
      pads[a + rank] = std::max(pads[a + rank], -(dims[a] + pads[a]));
      outDims[a] = dims[a] + pads[a] + pads[a + rank];
    }
    std::vector<float> x(static_cast<size_t>(n));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i) + 1.0f;
    float value = trial % 3 == 0 ? 2.5f : 0.0f;
    TensorPtr out = runOne(
        "Pad", 13,
        {Tensor::fromValues(DataType::Float, dims, x),
         Tensor::fromValues(DataType::Int64, {2 * rank}, pads),
         Tensor::fromValues(DataType::Float, {}, std::vector<float>{value})},
        {1, 2});
    ASSERT_TRUE(out);
    ASSERT_EQ(out->dims(), outDims);
    const float *y = out->dataAs<float>();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t o = 0; o < out->numElements(); ++o) {
      // Source index of output element o, or none in the padding.
      int64_t src = 0;
      bool inside = true;
      for (int64_t a = 0; a < rank; ++a) {
        int64_t i = idx[a] - pads[a];
        inside = inside && i >= 0 && i < dims[a];
        src = src * dims[a] + i;
      }
      ASSERT_EQ(y[o], inside ? x[static_cast<size_t>(src)] : value)
          << "trial " << trial << " element " << o;
      for (int64_t a = rank - 1; a >= 0; --a) {
        if (++idx[a] < outDims[a])
          break;
        idx[a] = 0;
      }
    }
  }
}

/// Runs Transpose of random bytes of type dt over dims by perm, and checks
/// every output element against out[i] = in[perm-mapped index], byte for
/// byte (NaN payloads included).
void checkTranspose(std::vector<int64_t> dims, const std::vector<int64_t> &perm, DataType dt,
                    std::mt19937 &rng, const std::string &label) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  const size_t es = dt == DataType::UInt8 ? 1 : dt == DataType::Float16 ? 2 : dt == DataType::Int64 ? 8 : 4;
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * es);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(rng());
  TensorBuilder in(dt, dims, TensorBuilder::Fill::Uninitialized);
  std::memcpy(in.data(), bytes.data(), bytes.size());
  std::vector<Attribute> attrs;
  attrs.push_back(Attribute::makeInts("perm", perm));
  TensorPtr out = runOne("Transpose", 13, {in.finish()}, {}, std::move(attrs));
  ASSERT_TRUE(out) << label;
  std::vector<int64_t> outDims(dims.size()), strides(dims.size(), 1);
  for (int64_t a = rank - 2; a >= 0; --a)
    strides[static_cast<size_t>(a)] = strides[static_cast<size_t>(a + 1)] * dims[static_cast<size_t>(a + 1)];
  for (size_t a = 0; a < perm.size(); ++a)
    outDims[a] = dims[static_cast<size_t>(perm[a])];
  ASSERT_EQ(out->dims(), outDims) << label;
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (size_t a = 0; a < perm.size(); ++a)
      src += idx[a] * strides[static_cast<size_t>(perm[a])];
    ASSERT_EQ(std::memcmp(out->rawData() + static_cast<size_t>(o) * es,
                          bytes.data() + static_cast<size_t>(src) * es, es),
              0)
        << label << " element " << o;
    for (int64_t a = rank - 1; a >= 0; --a) {
      if (++idx[static_cast<size_t>(a)] < outDims[static_cast<size_t>(a)])
        break;
      idx[static_cast<size_t>(a)] = 0;
    }
  }
}

/// Transpose: every permutation of ranks 2 to 4 with dims around the tile
/// edges, elements of 1, 2, 4 and 8 bytes, against the definition. Those
/// whose last two output dims are a transpose in the source over more than
/// 8 rows take the tiled copy (NCHW -> NHWC; 4-byte elements in 16x16
/// register blocks on AVX-512), the others the strided one (NHWC -> NCHW
/// of 4 channels).
TEST(TransposeFastPath, TiledAndStridedCopiesMatchDefinition) {
  std::mt19937 rng(7);
  const DataType types[] = {DataType::UInt8, DataType::Float16, DataType::Float, DataType::Int64};
  for (int trial = 0; trial < 48; ++trial) {
    int64_t rank = 2 + trial % 3;
    std::vector<int64_t> dims(static_cast<size_t>(rank)), perm(dims.size());
    const int64_t choices[] = {1, 3, 4, 31, 33, 70};
    for (int64_t &d : dims)
      d = choices[rng() % (rank == 2 ? 6 : 5)];
    if (trial % 8 == 0 || trial % 8 == 4) { // a small image with 4 channels
      dims = trial % 8 == 0 ? std::vector<int64_t>{1, 9, 70, 4} : std::vector<int64_t>{1, 4, 9, 70};
      perm.resize(4);
    }
    for (size_t a = 0; a < perm.size(); ++a)
      perm[a] = static_cast<int64_t>(a);
    std::shuffle(perm.begin(), perm.end(), rng);
    if (trial % 8 == 0) // NHWC -> NCHW
      perm = {0, 3, 1, 2};
    if (trial % 8 == 4) // NCHW -> NHWC
      perm = {0, 2, 3, 1};
    checkTranspose(dims, perm, types[trial % 4], rng, "trial " + std::to_string(trial));
  }
}

/// The tiled copy of 4-byte elements: ViT's keys turned for the scores
/// (12 heads of 197 x 64), int32 as well as float, edges of 1, 15, 17 and
/// 33 rows and columns, and a transpose under outer dims that stay.
TEST(TransposeFastPath, FourByteTilesMatchDefinition) {
  std::mt19937 rng(11);
  checkTranspose({12, 197, 64}, {0, 2, 1}, DataType::Float, rng, "keys");
  checkTranspose({3, 17, 33}, {0, 2, 1}, DataType::Int32, rng, "int32");
  checkTranspose({15, 9}, {1, 0}, DataType::Float, rng, "15 x 9");
  checkTranspose({2, 3, 33, 17}, {0, 1, 3, 2}, DataType::Float, rng, "outer dims");
  checkTranspose({16, 1, 16}, {2, 1, 0}, DataType::Float, rng, "16 x 16");
}

TEST(BatchNormFastPath, InPlaceOverADyingInputMatchesDefinition) {
  const int64_t N = 2, C = 3, S = 5;
  std::vector<float> x(N * C * S), scale = {1.5f, -2.0f, 0.5f}, bias = {0.1f, 0.2f, -0.3f},
                                   mean = {0.5f, -1.0f, 2.0f}, var = {1.0f, 4.0f, 0.25f};
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) * 0.25f - 3.0f;
  // Made as kernels make outputs (the builder gone, the tensor sole owner).
  auto fresh = [&] {
    TensorBuilder xb(DataType::Float, {N, C, S}, TensorBuilder::Fill::Uninitialized);
    std::memcpy(xb.data(), x.data(), x.size() * sizeof(float));
    return xb.finish();
  };
  std::vector<RtValue> slots = {
      RtValue::fromTensor(fresh()),
      RtValue::fromTensor(Tensor::fromValues(DataType::Float, {C}, scale)),
      RtValue::fromTensor(Tensor::fromValues(DataType::Float, {C}, bias)),
      RtValue::fromTensor(Tensor::fromValues(DataType::Float, {C}, mean)),
      RtValue::fromTensor(Tensor::fromValues(DataType::Float, {C}, var))};
  const uint8_t *bytes = slots[0].tensor->rawData();
  for (bool dying : {false, true}) {
    Graph g;
    std::vector<Value *> operands;
    for (size_t i = 0; i < slots.size(); ++i)
      operands.push_back(g.addInput("in" + std::to_string(i)));
    Node *n = g.append(g.createNode("BatchNormalization", operands, {"out"}));
    std::vector<const RtValue *> in;
    for (RtValue &s : slots)
      in.push_back(&s);
    KernelContext ctx(*n, 15, in, nullptr);
    if (dying)
      ctx.markLastUse(0);
    const KernelDef *k = OpRegistry::builtin().find("", "BatchNormalization", 15);
    ASSERT_TRUE(k);
    ASSERT_TRUE(k->fn(ctx).ok());
    TensorPtr y = ctx.outputs()[0].tensor;
    EXPECT_EQ(y->rawData() == bytes, dying);
    for (int64_t i = 0; i < N * C * S; ++i) {
      int64_t c = (i / S) % C;
      float a = static_cast<float>(scale[c] / std::sqrt(static_cast<double>(var[c]) + 1e-5f));
      float b = bias[c] - mean[c] * a;
      EXPECT_EQ(y->dataAs<float>()[i], x[i] * a + b) << i;
    }
  }
}

} // namespace
