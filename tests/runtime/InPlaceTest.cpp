//===- tests/runtime/InPlaceTest.cpp - Outputs over dying inputs ----------===//
//
// Float unary and binary kernels write their output over an input that the
// node reads for the last time (KernelContext::reusableInput). Checked two
// ways: on a kernel called directly, the output shares the input's bytes
// exactly when the input is marked as dying and nothing else holds it; and
// on whole graphs, values still read later (a second reader, a graph output,
// a Reshape view of the same bytes, a caller's input) are never changed.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

/// A fresh float tensor made the way kernels make them (sole owner).
TensorPtr fresh(std::vector<int64_t> dims, const std::vector<float> &v) {
  TensorBuilder b(DataType::Float, std::move(dims), TensorBuilder::Fill::Uninitialized);
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b.finish();
}

std::vector<float> values(const TensorPtr &t) {
  std::vector<float> out(static_cast<size_t>(t->numElements()));
  std::memcpy(out.data(), t->rawData(), out.size() * sizeof(float));
  return out;
}

/// Runs `op` directly on `inputs` (each input slot owns its tensor), with the
/// inputs in `dying` marked as read for the last time.
TensorPtr runKernel(const std::string &op, std::vector<RtValue> &slots,
                    const std::vector<size_t> &dying) {
  Graph g;
  std::vector<Value *> operands;
  for (size_t i = 0; i < slots.size(); ++i)
    operands.push_back(g.addInput("in" + std::to_string(i)));
  Node *n = g.append(g.createNode(op, operands, {"out"}));
  std::vector<const RtValue *> in;
  for (RtValue &s : slots)
    in.push_back(&s);
  KernelContext ctx(*n, 17, in, nullptr);
  for (size_t i : dying)
    ctx.markLastUse(i);
  const KernelDef *k = OpRegistry::builtin().find("", op, 17);
  EXPECT_TRUE(k);
  EXPECT_TRUE(k && k->fn(ctx).ok());
  return ctx.outputs()[0].tensor;
}

TEST(InPlace, UnaryWritesOverADyingSoleOwnedInput) {
  std::vector<float> x = {-1.5f, 0.0f, 2.0f, -0.0f, 3.5f, -7.0f, 1.0f, NAN, 0.25f};
  std::vector<RtValue> slots = {RtValue::fromTensor(fresh({3, 3}, x))};
  const uint8_t *bytes = slots[0].tensor->rawData();
  TensorPtr y = runKernel("Relu", slots, {0});
  EXPECT_EQ(y->rawData(), bytes) << "the dying input's bytes are reused";
  std::vector<float> got = values(y);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]))
      EXPECT_TRUE(std::isnan(got[i]));
    else
      EXPECT_EQ(got[i], x[i] < 0 ? 0.0f : x[i]) << i;
  }
  EXPECT_TRUE(std::signbit(got[3])) << "-0 passes through Relu";

  // Not marked as dying, or held elsewhere too: a new buffer.
  std::vector<RtValue> kept = {RtValue::fromTensor(fresh({3, 3}, x))};
  EXPECT_NE(runKernel("Relu", kept, {})->rawData(), kept[0].tensor->rawData());
  TensorPtr other = kept[0].tensor; // a second holder
  EXPECT_NE(runKernel("Relu", kept, {0})->rawData(), other->rawData());
  EXPECT_EQ(values(other)[0], -1.5f) << "a shared input is untouched";
  // Bytes shared by two tensors (a view) are never reused.
  auto view = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{9},
                                       other->buffer());
  std::vector<RtValue> viewed = {RtValue::fromTensor(view)};
  EXPECT_NE(runKernel("Relu", viewed, {0})->rawData(), other->rawData());
  EXPECT_EQ(values(other)[0], -1.5f);
}

TEST(InPlace, BinaryReusesTheFullSizeOperandUnderBroadcast) {
  // A [2, 3, 4] * B [3, 1]: only A has the output's shape.
  std::vector<float> a(24), b = {2.0f, -1.0f, 0.5f};
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(i) - 7.0f;
  for (size_t which : {size_t{0}, size_t{1}}) {
    std::vector<RtValue> slots = {RtValue::fromTensor(fresh({2, 3, 4}, a)),
                                  RtValue::fromTensor(fresh({3, 1}, b))};
    const uint8_t *aBytes = slots[0].tensor->rawData();
    TensorPtr y = runKernel("Mul", slots, {which});
    if (which == 0)
      EXPECT_EQ(y->rawData(), aBytes);
    else
      EXPECT_NE(y->rawData(), aBytes) << "B dies but has the wrong shape";
    EXPECT_EQ(y->dims(), (std::vector<int64_t>{2, 3, 4}));
    std::vector<float> got = values(y);
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(got[i], a[i] * b[(i / 4) % 3]) << i;
  }
  // Sub(B, A) reusing the second operand keeps the operand order.
  std::vector<RtValue> slots = {RtValue::fromTensor(fresh({3, 1}, b)),
                                RtValue::fromTensor(fresh({2, 3, 4}, a))};
  const uint8_t *aBytes = slots[1].tensor->rawData();
  TensorPtr y = runKernel("Sub", slots, {0, 1});
  EXPECT_EQ(y->rawData(), aBytes);
  std::vector<float> got = values(y);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(got[i], b[(i / 4) % 3] - a[i]) << i;
}

TEST(InPlace, GraphValuesStillReadLaterAreNotOverwritten) {
  // A = X + 1; R = Relu(A); V = Reshape(A); S = Sub(A, R); N = Neg(V);
  // outputs: A, S, N, and T = Add(S, S). A is an output, read by three nodes
  // and viewed by V; S dies in Add(S, S).
  Model model;
  model.opsetImport.push_back(OpsetId{"", 17, {}});
  model.setGraph(std::make_unique<Graph>());
  Graph *g = model.graph();
  Value *x = g->addInput("X", Type::tensor(DataType::Float));
  Value *one =
      g->addInitializer("one", Tensor::fromValues(DataType::Float, {}, std::vector<float>{1}));
  Value *shape = g->addInitializer("shape", Tensor::fromValues(DataType::Int64, {1},
                                                               std::vector<int64_t>{-1}));
  auto node = [&](const std::string &op, std::vector<Value *> in, const std::string &out) {
    return g->append(g->createNode(op, in, {out}))->result(0);
  };
  Value *a = node("Add", {x, one}, "A");
  Value *r = node("Relu", {a}, "R");
  Value *v = node("Reshape", {a, shape}, "V");
  Value *s = node("Sub", {a, r}, "S");
  Value *n = node("Neg", {v}, "N");
  Value *t = node("Add", {s, s}, "T");
  for (Value *o : {a, s, n, t})
    g->addOutput(o);
  std::vector<float> xv = {-3.0f, -0.5f, 0.0f, 0.5f, 2.0f, 9.0f};
  TensorPtr xt = fresh({2, 3}, xv);
  std::vector<RtValue> out;
  Interpreter interp(model);
  ASSERT_TRUE(interp.run(*g, {RtValue::fromTensor(xt)}, out).ok());
  ASSERT_EQ(out.size(), 4u);
  std::vector<float> av = values(out[0].tensor), sv = values(out[1].tensor),
                     nv = values(out[2].tensor), tv = values(out[3].tensor);
  for (size_t i = 0; i < xv.size(); ++i) {
    float ai = xv[i] + 1.0f, si = ai - (ai < 0 ? 0.0f : ai);
    EXPECT_EQ(av[i], ai) << i;
    EXPECT_EQ(sv[i], si) << i;
    EXPECT_EQ(nv[i], -ai) << i;
    EXPECT_EQ(tv[i], si + si) << i;
  }
  EXPECT_EQ(values(xt), xv) << "the caller's input is untouched";
}

} // namespace
