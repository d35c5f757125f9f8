//===- tests/runtime/MathKernelsTest.cpp - Math kernel unit tests ---------===//
//
// Runs the math kernels (elementwise, casts, reductions, activations,
// softmax family, misc math) directly through OpRegistry::builtin() and a
// KernelContext on small hand-made tensors: expected values, broadcasting,
// float16 rounding, integer division/modulo signs, Cast string parsing, and
// error cases (incompatible shapes, wrong dtypes) that must return an error
// instead of crashing. A last test times 1M-element Add/Mul/Relu/Sigmoid
// against a plain scalar loop in the same process and prints the ratio.
//
//===----------------------------------------------------------------------===//
#include "runtime/Float16.h"
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

template <typename T> TensorPtr make(DataType dt, std::vector<int64_t> dims, std::vector<T> values) {
  return Tensor::fromValues<T>(dt, std::move(dims), values);
}
TensorPtr f32(std::vector<int64_t> dims, std::vector<float> v) {
  return make<float>(DataType::Float, std::move(dims), std::move(v));
}
TensorPtr f64(std::vector<int64_t> dims, std::vector<double> v) {
  return make<double>(DataType::Double, std::move(dims), std::move(v));
}
TensorPtr i32(std::vector<int64_t> dims, std::vector<int32_t> v) {
  return make<int32_t>(DataType::Int32, std::move(dims), std::move(v));
}
TensorPtr i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return make<int64_t>(DataType::Int64, std::move(dims), std::move(v));
}
TensorPtr u8(std::vector<int64_t> dims, std::vector<uint8_t> v) {
  return make<uint8_t>(DataType::UInt8, std::move(dims), std::move(v));
}
TensorPtr i8(std::vector<int64_t> dims, std::vector<int8_t> v) {
  return make<int8_t>(DataType::Int8, std::move(dims), std::move(v));
}
TensorPtr boolean(std::vector<int64_t> dims, std::vector<uint8_t> v) {
  return make<uint8_t>(DataType::Bool, std::move(dims), std::move(v));
}
TensorPtr f16(std::vector<int64_t> dims, const std::vector<float> &v) {
  std::vector<uint16_t> bits;
  for (float f : v)
    bits.push_back(floatToHalfBits(f));
  return make<uint16_t>(DataType::Float16, std::move(dims), bits);
}
TensorPtr strings(std::vector<int64_t> dims, std::vector<std::string> v) {
  return Tensor::fromStrings(std::move(dims), std::move(v));
}

template <typename T> std::vector<T> values(const TensorPtr &t) {
  std::vector<T> out(static_cast<size_t>(t->numElements()));
  if (!out.empty())
    std::memcpy(out.data(), t->rawData(), out.size() * sizeof(T));
  return out;
}
std::vector<float> halfValues(const TensorPtr &t) {
  std::vector<float> out;
  for (uint16_t b : values<uint16_t>(t))
    out.push_back(halfBitsToFloat(b));
  return out;
}

/// Runs one node of `op` at `opset` on `inputs` (null = omitted) with `attrs`.
struct Run {
  Status status;
  std::vector<TensorPtr> outputs;
  /// Why the kernel noted its result as undefined by the spec (empty: defined).
  std::string undefined;
  TensorPtr out(size_t i = 0) const { return i < outputs.size() ? outputs[i] : nullptr; }
};

/// A copyable attribute description (Attribute itself is move-only).
struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::Int;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  Attribute make() const {
    switch (kind) {
    case AttrKind::Int:
      return Attribute::makeInt(name, i);
    case AttrKind::Float:
      return Attribute::makeFloat(name, f);
    case AttrKind::String:
      return Attribute::makeString(name, s);
    case AttrKind::Floats:
      return Attribute::makeFloats(name, floats);
    default:
      return Attribute::makeInts(name, ints);
    }
  }
};

Run run(const std::string &op, int64_t opset, std::vector<TensorPtr> inputs,
        const std::vector<AttrSpec> &attrs = {}, size_t numOutputs = 1) {
  Run r;
  Graph g;
  std::vector<Value *> operands;
  for (size_t i = 0; i < inputs.size(); ++i)
    operands.push_back(inputs[i] ? g.addInput("in" + std::to_string(i)) : nullptr);
  std::vector<std::string> names;
  for (size_t i = 0; i < numOutputs; ++i)
    names.push_back("out" + std::to_string(i));
  Node *n = g.append(g.createNode(op, operands, names));
  for (const AttrSpec &a : attrs)
    n->setAttr(a.make());
  const KernelDef *k = OpRegistry::builtin().find("", op, opset);
  if (!k) {
    r.status = Status::error("no kernel for " + op + "-" + std::to_string(opset));
    return r;
  }
  std::vector<RtValue> vals(inputs.size());
  std::vector<const RtValue *> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i])
      vals[i] = RtValue::fromTensor(inputs[i]);
    ptrs.push_back(&vals[i]);
  }
  KernelContext ctx(*n, opset, ptrs, nullptr);
  r.status = k->fn(ctx);
  r.undefined = ctx.undefinedReason();
  for (RtValue &v : ctx.outputs())
    r.outputs.push_back(v.kind == RtValue::Kind::Tensor ? v.tensor : nullptr);
  return r;
}

AttrSpec spec(const std::string &n, AttrKind kind) {
  AttrSpec a;
  a.name = n;
  a.kind = kind;
  return a;
}
AttrSpec attrI(const std::string &n, int64_t v) {
  AttrSpec a = spec(n, AttrKind::Int);
  a.i = v;
  return a;
}
AttrSpec attrF(const std::string &n, float v) {
  AttrSpec a = spec(n, AttrKind::Float);
  a.f = v;
  return a;
}
AttrSpec attrS(const std::string &n, std::string v) {
  AttrSpec a = spec(n, AttrKind::String);
  a.s = std::move(v);
  return a;
}
AttrSpec attrIs(const std::string &n, std::vector<int64_t> v) {
  AttrSpec a = spec(n, AttrKind::Ints);
  a.ints = std::move(v);
  return a;
}

#define EXPECT_OK(r) ASSERT_TRUE((r).status.ok()) << (r).status.message()
#define EXPECT_FAILS(r) EXPECT_FALSE((r).status.ok())

void expectNear(const std::vector<float> &got, const std::vector<float> &want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Float16
//===----------------------------------------------------------------------===//

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00); // ties to even -> inf
  EXPECT_EQ(floatToHalfBits(1e10f), 0x7c00);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(floatToHalfBits(1.0f + 0x1p-11f), 0x3c00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: to even (1+2^-9).
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(floatToHalfBits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  // Subnormals: 2^-24 is the smallest; 2^-25 ties to zero; 3*2^-25 -> 2*2^-24.
  EXPECT_EQ(floatToHalfBits(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToHalfBits(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalfBits(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(std::nanf("")))));
  EXPECT_EQ(halfBitsToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(halfBitsToFloat(0xfc00)));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = halfBitsToFloat(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(floatToHalfBits(f), b);
    }
  }
}

TEST(Float16, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16Bits(std::bit_cast<float>(0x3f808000u)), 0x3f80); // tie -> even
  EXPECT_EQ(floatToBFloat16Bits(std::bit_cast<float>(0x3f818000u)), 0x3f82); // tie -> even
  EXPECT_EQ(floatToBFloat16Bits(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(std::nanf("")))));
  EXPECT_EQ(bfloat16BitsToFloat(0x4040), 3.0f);
}

//===----------------------------------------------------------------------===//
// Binary ops and broadcasting
//===----------------------------------------------------------------------===//

TEST(MathKernels, AddSameShapeScalarAndChannel) {
  auto r = run("Add", 14, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 3}, {10, 20, 30, 40, 50, 60})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  r = run("Add", 14, {f32({}, {100}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{101, 102, 103, 104, 105, 106}));
  // Per-channel [1,2,2,2] + [1,2,1,1].
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i)
    x[i] = float(i);
  r = run("Mul", 14, {f32({1, 2, 2, 2}, x), f32({1, 2, 1, 1}, {10, 100})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{0, 10, 20, 30, 400, 500, 600, 700}));
  // Row vector and outer product.
  r = run("Sub", 14, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 1, 1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  r = run("Mul", 14, {f32({3, 1}, {1, 2, 3}), f32({1, 2}, {10, 100})});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{10, 100, 20, 200, 30, 300}));
  // Long runs exercise the SIMD body and the scalar tail.
  std::vector<float> a(37), b(37), want(37);
  for (int i = 0; i < 37; ++i) {
    a[i] = float(i) * 0.5f;
    b[i] = float(100 - i);
    want[i] = a[i] - b[i];
  }
  r = run("Sub", 14, {f32({37}, a), f32({37}, b)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), want);
  // Zero-size broadcast.
  r = run("Add", 14, {f32({0, 3}, {}), f32({1, 3}, {1, 2, 3})});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dims(), (std::vector<int64_t>{0, 3}));
}

TEST(MathKernels, BinaryErrors) {
  EXPECT_FAILS(run("Add", 14, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}));
  EXPECT_FAILS(run("Add", 14, {f32({2}, {1, 2}), i32({2}, {1, 2})}));
  EXPECT_FAILS(run("Add", 14, {boolean({2}, {1, 0}), boolean({2}, {1, 1})}));
  EXPECT_FAILS(run("Add", 14, {f32({2}, {1, 2})}));
  EXPECT_FAILS(run("Div", 14, {i32({2}, {1, 2}), i32({2}, {1, 0})}));
  EXPECT_FAILS(run("And", 7, {f32({2}, {1, 2}), f32({2}, {1, 0})}));
  // A tensor whose data does not match its dims.
  auto bad = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{4},
                                      Buffer::copyOf("abcd", 4));
  EXPECT_FAILS(run("Add", 14, {bad, f32({4}, {1, 2, 3, 4})}));
  EXPECT_FAILS(run("PRelu", 16, {f32({2}, {1, 2}), f32({2, 2}, {1, 2, 3, 4})}));
}

TEST(MathKernels, IntegerDivisionAndModSigns) {
  auto r = run("Div", 14, {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{3, -3, -3, 3}));
  r = run("Div", 14, {i32({1}, {std::numeric_limits<int32_t>::min()}), i32({1}, {-1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out())[0], std::numeric_limits<int32_t>::min());
  r = run("Mod", 13, {i32({4}, {7, -7, 7, -7}), i32({4}, {3, 3, -3, -3})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{1, 2, -2, -1}));
  r = run("Mod", 13, {i32({4}, {7, -7, 7, -7}), i32({4}, {3, 3, -3, -3})}, {attrI("fmod", 1)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{1, -1, 1, -1}));
  r = run("Mod", 13, {f32({2}, {-4.3f, 4.3f}), f32({2}, {2.1f, -2.1f})}, {attrI("fmod", 1)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {std::fmod(-4.3f, 2.1f), std::fmod(4.3f, -2.1f)});
  EXPECT_FAILS(run("Mod", 13, {i32({1}, {7}), i32({1}, {0})}));
  r = run("Add", 14, {u8({2}, {250, 3}), u8({2}, {10, 4})});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{4, 7}));
  r = run("Mul", 14, {i64({1}, {std::numeric_limits<int64_t>::max()}), i64({1}, {2})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int64_t>(r.out())[0], -2);
}

TEST(MathKernels, PowMixedTypes) {
  auto r = run("Pow", 15, {f32({3}, {1, 2, 3}), i64({3}, {2, 3, 0})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {1, 8, 1});
  r = run("Pow", 15, {i32({3}, {2, 3, -2}), f32({1}, {2})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{4, 9, 4}));
  r = run("Pow", 15, {f32({3}, {4, 9, 16}), f32({}, {0.5f})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {2, 3, 4});
}

TEST(MathKernels, ComparisonsLogicalBitwise) {
  auto r = run("Less", 13, {f32({3}, {1, 2, 3}), f32({1}, {2})});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dtype(), DataType::Bool);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{1, 0, 0}));
  r = run("Equal", 19, {strings({3}, {"a", "b", "c"}), strings({1}, {"b"})});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0, 1, 0}));
  r = run("GreaterOrEqual", 16, {i64({3}, {1, 2, 3}), i64({3}, {2, 2, 2})});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0, 1, 1}));
  r = run("Xor", 7, {boolean({2, 2}, {0, 1, 0, 1}), boolean({2, 1}, {0, 1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0, 1, 1, 0}));
  r = run("BitShift", 11, {u8({3}, {1, 2, 128}), u8({3}, {1, 9, 7})}, {attrS("direction", "RIGHT")});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_FAILS(run("BitShift", 11, {u8({1}, {1}), u8({1}, {1})}));
  r = run("BitwiseXor", 18, {i32({2}, {5, -1}), i32({2}, {3, 1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{6, -2}));
}

TEST(MathKernels, VariadicAndLegacyBroadcast) {
  auto r = run("Sum", 13, {f32({3}, {1, 2, 3}), f32({1}, {10}), f32({2, 1}, {100, 200})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{111, 112, 113, 211, 212, 213}));
  r = run("Mean", 13, {f32({2}, {1, 2}), f32({2}, {3, 6})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{2, 4}));
  r = run("Max", 13, {f32({3}, {1, NAN, 3}), f32({3}, {2, 2, NAN})});
  EXPECT_OK(r);
  auto mx = values<float>(r.out());
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]) && std::isnan(mx[2]));
  // Opset 6: B broadcast along axis 1 of A.
  r = run("Add", 6, {f32({2, 3, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), f32({3}, {1, 2, 3})},
          {attrI("broadcast", 1), attrI("axis", 1)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  r = run("Add", 13, {f16({2}, {1.0f, 2048.0f}), f16({2}, {0x1p-11f, 1.0f})});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dtype(), DataType::Float16);
  EXPECT_EQ(halfValues(r.out()), (std::vector<float>{1.0f, 2048.0f})); // both ties round to even
  r = run("PRelu", 16, {f32({2, 2}, {-1, 2, -3, 4}), f32({2}, {0.5f, 0.25f})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{-0.5f, 2, -1.5f, 4}));
}

//===----------------------------------------------------------------------===//
// Unary ops and activations
//===----------------------------------------------------------------------===//

TEST(MathKernels, UnaryMath) {
  std::vector<float> x = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f, -3.7f, 0.0f};
  auto r = run("Round", 11, {f32({9}, x)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{-2, -2, -0, 0, 2, 2, 4, -4, 0}));
  r = run("Floor", 13, {f32({9}, x)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out())[0], -3.0f);
  r = run("Abs", 13, {i32({3}, {-3, 4, std::numeric_limits<int32_t>::min()})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()),
            (std::vector<int32_t>{3, 4, std::numeric_limits<int32_t>::min()}));
  r = run("Sign", 13, {f32({4}, {-2, 0, 3, NAN})});
  EXPECT_OK(r);
  auto sg = values<float>(r.out());
  EXPECT_EQ(sg[0], -1);
  EXPECT_EQ(sg[1], 0);
  EXPECT_EQ(sg[2], 1);
  EXPECT_TRUE(std::isnan(sg[3]));
  // Long input: SIMD body + tail agree with libm.
  std::vector<float> big(101), wantExp(101), wantTanh(101), wantErf(101);
  for (int i = 0; i < 101; ++i) {
    big[i] = -5.0f + 0.1f * float(i);
    wantExp[i] = std::exp(big[i]);
    wantTanh[i] = std::tanh(big[i]);
    wantErf[i] = std::erf(big[i]);
  }
  r = run("Exp", 13, {f32({101}, big)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), wantExp, 1e-6f);
  r = run("Tanh", 13, {f32({101}, big)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), wantTanh, 1e-6f);
  r = run("Erf", 13, {f32({101}, big)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), wantErf, 1e-6f);
  r = run("Sqrt", 13, {f64({2}, {4.0, 2.0})});
  EXPECT_OK(r);
  EXPECT_EQ(values<double>(r.out()), (std::vector<double>{2.0, std::sqrt(2.0)}));
  r = run("Neg", 13, {f16({2}, {1.5f, -0.25f})});
  EXPECT_OK(r);
  EXPECT_EQ(halfValues(r.out()), (std::vector<float>{-1.5f, 0.25f}));
  r = run("IsInf", 10, {f32({4}, {INFINITY, -INFINITY, NAN, 1})}, {attrI("detect_negative", 0)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{1, 0, 0, 0}));
  r = run("IsNaN", 13, {f32({2}, {NAN, 1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{1, 0}));
  r = run("Not", 1, {boolean({2}, {1, 0})});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0, 1}));
  // Wrong dtypes are errors.
  EXPECT_FAILS(run("Sqrt", 13, {i32({1}, {4})}));
  EXPECT_FAILS(run("Not", 1, {f32({1}, {1})}));
  EXPECT_FAILS(run("Neg", 13, {u8({1}, {1})}));
  EXPECT_FAILS(run("Exp", 13, {strings({1}, {"1"})}));
}

TEST(MathKernels, Activations) {
  std::vector<float> x = {-3, -1, -0.25f, 0, 0.25f, 1, 3, 10, -10};
  auto want = [&](auto f) {
    std::vector<float> w;
    for (float v : x)
      w.push_back(f(v));
    return w;
  };
  auto r = run("Relu", 14, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), want([](float v) { return v > 0 ? v : 0; }));
  r = run("Relu", 14, {i8({3}, {-3, 0, 5})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int8_t>(r.out()), (std::vector<int8_t>{0, 0, 5}));
  r = run("Sigmoid", 13, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), want([](float v) { return 1 / (1 + std::exp(-v)); }));
  r = run("LeakyRelu", 16, {f32({9}, x)}, {attrF("alpha", 0.1f)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), want([](float v) { return v >= 0 ? v : 0.1f * v; }));
  r = run("Elu", 6, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), want([](float v) { return v >= 0 ? v : std::exp(v) - 1; }));
  r = run("Softplus", 1, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), want([](float v) { return std::log1p(std::exp(v)); }));
  r = run("HardSwish", 14, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()),
             want([](float v) { return v * std::max(0.0f, std::min(1.0f, v / 6 + 0.5f)); }));
  r = run("Gelu", 20, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()),
             want([](float v) { return 0.5f * v * (1 + std::erf(v / std::sqrt(2.0f))); }));
  r = run("Gelu", 20, {f32({9}, x)}, {attrS("approximate", "tanh")});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), want([](float v) {
               return 0.5f * v *
                      (1 + std::tanh(std::sqrt(2 / float(M_PI)) * (v + 0.044715f * v * v * v)));
             }));
  EXPECT_FAILS(run("Gelu", 20, {f32({1}, {1})}, {attrS("approximate", "bogus")}));
  r = run("Mish", 18, {f32({9}, x)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()),
             want([](float v) { return v * std::tanh(std::log1p(std::exp(v))); }));
  r = run("Shrink", 9, {f32({5}, {-2, -0.5f, 0, 0.5f, 2})}, {attrF("lambd", 1), attrF("bias", 0.5f)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{-1.5f, 0, 0, 0, 1.5f}));
}

TEST(MathKernels, ClipVersions) {
  auto r = run("Clip", 6, {f32({4}, {-2, 0, 2, 4})}, {attrF("min", -1), attrF("max", 3)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{-1, 0, 2, 3}));
  r = run("Clip", 13, {f32({4}, {-2, 0, 2, 4}), nullptr, f32({}, {1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{-2, 0, 1, 1}));
  r = run("Clip", 13, {i8({3}, {-100, 5, 100}), i8({}, {-10}), i8({}, {10})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int8_t>(r.out()), (std::vector<int8_t>{-10, 5, 10}));
  EXPECT_FAILS(run("Clip", 13, {f32({1}, {1}), f32({2}, {0, 1})}));
  EXPECT_FAILS(run("Clip", 13, {f32({1}, {1}), i32({}, {0})}));
}

//===----------------------------------------------------------------------===//
// Edge values against ONNX Runtime
//
// Expected values are ONNX Runtime 1.30's (x86-64 CPU), measured by running
// one-op models through tools/oracle/oracle.js on the same inputs. The input
// has 20 elements so that both the SIMD body and the scalar tail see NaN.
//===----------------------------------------------------------------------===//

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const float kMax = std::numeric_limits<float>::max();

const std::vector<float> kEdges = {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, 1, -1, kNaN, 2,
                                   -2,   kNaN,  0.5f, -0.5f, kNaN, 3,     kNaN, 5, -5, kNaN};

/// NaN where ORT has NaN, the sign of zeros when `zeroSign`, values within
/// 2e-5 relative (ORT's Sigmoid is a fast approximation).
void expectOrt(const std::string &what, const std::vector<float> &got, const std::vector<float> &want,
               bool zeroSign = true) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": " << got[i];
    } else if (want[i] == 0 && zeroSign) {
      EXPECT_TRUE(got[i] == 0 && std::signbit(got[i]) == std::signbit(want[i]))
          << what << " at " << i << ": " << got[i] << " vs " << want[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], 2e-5f * std::fabs(want[i])) << what << " at " << i;
    }
  }
}

TEST(MathKernelsOrt, ActivationsKeepNaNAsOnnxRuntime) {
  struct Case {
    const char *op;
    int64_t opset;
    std::vector<float> want;
  };
  const float n = kNaN, inf = kInf;
  std::vector<Case> cases = {
      {"Relu", 14, {n, n, inf, 0, 0, -0.0f, 1, 0, n, 2, 0, n, 0.5f, 0, n, 3, n, 5, 0, n}},
      {"LeakyRelu", 16, {n, n, inf, -inf, 0, -0.0f, 1, -0.01f, n, 2, -0.02f, n, 0.5f, -0.005f, n, 3, n, 5, -0.05f, n}},
      {"Elu", 6, {n, n, inf, -1, 0, -0.0f, 1, -0.63212055f, n, 2, -0.86466473f, n, 0.5f, -0.39346933f, n, 3, n, 5,
                  -0.99326205f, n}},
      {"Selu", 6, {n, n, inf, -1.7580993f, 0, 0, 1.050701f, -1.1113307f, n, 2.101402f, -1.5201665f, n, 0.5253505f,
                   -0.69175816f, n, 3.152103f, n, 5.253505f, -1.7462534f, n}},
      {"Celu", 12, {n, n, inf, -1, 0, 0, 1, -0.63212055f, n, 2, -0.86466473f, n, 0.5f, -0.39346933f, n, 3, n, 5,
                    -0.99326205f, n}},
      {"Sigmoid", 13, {n, n, 1, 0, 0.5f, 0.5f, 0.7310586f, 0.26894143f, n, 0.8807971f, 0.11920291f, n, 0.6224593f,
                       0.3775407f, n, 0.95257413f, n, 0.9933071f, 0.00669292f, n}},
      {"HardSigmoid", 6, {n, n, 1, 0, 0.5f, 0.5f, 0.7f, 0.3f, n, 0.9f, 0.1f, n, 0.6f, 0.4f, n, 1, n, 1, 0, n}},
      {"HardSwish", 14, {n, n, inf, n, 0, -0.0f, 0.6666667f, -0.3333333f, n, 1.6666667f, -0.3333333f, n,
                         0.29166666f, -0.20833333f, n, 3, n, 5, -0.0f, n}},
      {"Softplus", 1, {n, n, inf, 0, 0.6931472f, 0.6931472f, 1.3132617f, 0.3132617f, n, 2.126928f, 0.126928f, n,
                       0.974077f, 0.474077f, n, 3.0485873f, n, 5.0067153f, 0.00671535f, n}},
      {"Softsign", 1, {n, n, n, n, 0, -0.0f, 0.5f, -0.5f, n, 0.6666667f, -0.6666667f, n, 0.33333334f, -0.33333334f,
                       n, 0.75f, n, 0.8333334f, -0.8333334f, n}},
      {"ThresholdedRelu", 10, {0, 0, inf, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 5, 0, 0}},
      {"Mish", 18, {n, n, inf, n, 0, -0.0f, 0.8650985f, -0.30340144f, n, 1.943959f, -0.25250146f, n, 0.37524524f,
                    -0.22074378f, n, 2.9865355f, n, 4.9995522f, -0.03357624f, n}},
      {"Shrink", 9, {0, 0, inf, -inf, 0, 0, 1, -1, 0, 2, -2, 0, 0, 0, 0, 3, 0, 5, -5, 0}},
      {"Sign", 13, {n, n, 1, -1, 0, 0, 1, -1, n, 1, -1, n, 1, -1, n, 1, n, 1, -1, n}},
      {"Floor", 13, {n, n, inf, -inf, 0, -0.0f, 1, -1, n, 2, -2, n, 0, -1, n, 3, n, 5, -5, n}},
      {"Ceil", 13, {n, n, inf, -inf, 0, -0.0f, 1, -1, n, 2, -2, n, 1, -0.0f, n, 3, n, 5, -5, n}},
      {"Round", 11, {n, n, inf, -inf, 0, -0.0f, 1, -1, n, 2, -2, n, 0, -0.0f, n, 3, n, 5, -5, n}},
  };
  for (const Case &c : cases) {
    auto r = run(c.op, c.opset, {f32({20}, kEdges)});
    EXPECT_OK(r);
    expectOrt(c.op, values<float>(r.out()), c.want);
  }
}

/// HardSwish on AVX-512 (sixteen lanes, the multiply and the add rounded
/// apart) gives the bits of the build's batches: values across both clamps
/// and the edges, a length off the vector width.
TEST(MathKernels, HardSwishGivesTheSameBitsOnEveryFamily) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> d(-8.0f, 8.0f);
  std::vector<float> x(1003);
  for (float &v : x)
    v = d(rng);
  std::copy(kEdges.begin(), kEdges.end(), x.begin());
  const std::string original = gemmEngineName();
  std::vector<std::vector<float>> outs;
  for (const char *engine : {"baseline", "avx2", "avx512"}) {
    if (!setGemmEngine(engine))
      continue;
    auto r = run("HardSwish", 14, {f32({static_cast<int64_t>(x.size())}, x)});
    EXPECT_OK(r);
    outs.push_back(values<float>(r.out()));
  }
  setGemmEngine(original.c_str());
  for (size_t i = 1; i < outs.size(); ++i)
    EXPECT_EQ(std::memcmp(outs[0].data(), outs[i].data(), x.size() * sizeof(float)), 0)
        << "family " << i;
}

TEST(MathKernelsOrt, ClipMaxMinPReluKeepNaNAsOnnxRuntime) {
  const float n = kNaN, inf = kInf;
  std::vector<float> clipped = {n, n, 1, -1, 0, -0.0f, 1, -1, n, 1, -1, n, 0.5f, -0.5f, n, 1, n, 1, -1, n};
  auto r = run("Clip", 13, {f32({20}, kEdges), f32({}, {-1}), f32({}, {1})});
  EXPECT_OK(r);
  expectOrt("Clip(-1, 1)", values<float>(r.out()), clipped);
  r = run("Clip", 6, {f32({20}, kEdges)}, {attrF("min", -1), attrF("max", 1)});
  EXPECT_OK(r);
  expectOrt("Clip-6(-1, 1)", values<float>(r.out()), clipped);
  // No bounds: the spec's defaults are the largest finite floats, not infinities.
  std::vector<float> none = {n, n, kMax, -kMax, 0, -0.0f, 1, -1, n, 2, -2, n, 0.5f, -0.5f, n, 3, n, 5, -5, n};
  r = run("Clip", 13, {f32({20}, kEdges)});
  EXPECT_OK(r);
  expectOrt("Clip()", values<float>(r.out()), none);
  r = run("Clip", 6, {f32({20}, kEdges)});
  EXPECT_OK(r);
  expectOrt("Clip-6()", values<float>(r.out()), none);
  r = run("Clip", 13, {f32({20}, kEdges), nullptr, f32({}, {1})});
  EXPECT_OK(r);
  expectOrt("Clip(, 1)", values<float>(r.out()),
            {n, n, 1, -kMax, 0, -0.0f, 1, -1, n, 1, -2, n, 0.5f, -0.5f, n, 1, n, 1, -5, n});
  // A NaN bound clips nothing.
  r = run("Clip", 13, {f32({20}, kEdges), f32({}, {n}), f32({}, {1})});
  EXPECT_OK(r);
  expectOrt("Clip(NaN, 1)", values<float>(r.out()),
            {n, n, 1, -inf, 0, -0.0f, 1, -1, n, 1, -2, n, 0.5f, -0.5f, n, 1, n, 1, -5, n});
  // float16: the default bounds are +-65504.
  r = run("Clip", 13, {f16({3}, {kInf, -kInf, kNaN})});
  EXPECT_OK(r);
  expectOrt("Clip() float16", halfValues(r.out()), {65504, -65504, n});

  // Max/Min propagate NaN from either side. Between +0 and -0 (the spec
  // leaves the choice open) ORT returns the second operand, but evaluates a
  // one-element first operand as op(other, it): Max(0, -0) is +0 then.
  std::vector<float> mx = {n, n, inf, 0, 0, 0, 1, 0, n, 2, 0, n, 0.5f, 0, n, 3, n, 5, 0, n};
  std::vector<float> mn = {n, n, 0, -inf, 0, 0, 0, -1, n, 0, -2, n, 0, -0.5f, n, 0, n, 0, -5, n};
  for (bool zeroFirst : {false, true}) {
    auto in = [&](TensorPtr a, TensorPtr b) {
      return zeroFirst ? std::vector<TensorPtr>{b, a} : std::vector<TensorPtr>{a, b};
    };
    r = run("Max", 13, in(f32({20}, kEdges), f32({}, {0})));
    EXPECT_OK(r);
    expectOrt("Max", values<float>(r.out()), mx);
    r = run("Min", 13, in(f32({20}, kEdges), f32({}, {0})));
    EXPECT_OK(r);
    expectOrt("Min", values<float>(r.out()), mn);
  }
  std::vector<float> negPos(20, 0.0f), posNeg(20, 0.0f);
  for (size_t i = 0; i < 10; ++i)
    negPos[i] = posNeg[i + 10] = -0.0f;
  for (const char *op : {"Max", "Min"}) {
    r = run(op, 13, {f32({20}, negPos), f32({20}, posNeg)});
    EXPECT_OK(r);
    expectOrt(op, values<float>(r.out()), posNeg);
  }
  r = run("PRelu", 16, {f32({20}, kEdges), f32({1}, {0.1f})});
  EXPECT_OK(r);
  expectOrt("PRelu", values<float>(r.out()),
            {n, n, inf, -inf, 0, -0.0f, 1, -0.1f, n, 2, -0.2f, n, 0.5f, -0.05f, n, 3, n, 5, -0.5f, n});
}

TEST(MathKernelsOrt, CastFloatToIntegerAsOnnxRuntime) {
  const std::vector<double> x = {NAN,   INFINITY, -INFINITY, -1,          -1.5,      2.9,          3e9,
                                 5e9,   1e19,     2e19,      -3e9,        300,       -129,         65536,
                                 4294967296.0, 1.8446744e19, 9.3e18, -9.3e18, 2147483648.0, -2147483904.0};
  std::vector<float> xf(x.begin(), x.end());
  const uint64_t h = uint64_t{1} << 63;
  const int64_t m = std::numeric_limits<int64_t>::min();
  const int32_t m32 = std::numeric_limits<int32_t>::min();
  auto r = run("Cast", 13, {f32({20}, xf)}, {attrI("to", 12)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint32_t>(r.out()),
            (std::vector<uint32_t>{2147483648u, 0, 2147483648u, 4294967295u, 4294967295u, 2, 3000000000u, 0, 0, 0,
                                   2147483648u, 300, 4294967167u, 65536, 0, 0, 0, 2147483648u, 2147483648u,
                                   2147483648u}));
  EXPECT_NE(r.undefined.find("out of the range of uint32"), std::string::npos) << r.undefined;
  r = run("Cast", 13, {f32({20}, xf)}, {attrI("to", 13)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint64_t>(r.out()),
            (std::vector<uint64_t>{h, 0, h, UINT64_MAX, UINT64_MAX, 2, 3000000000u, 5000000000u,
                                   9999999980506447872u, 0, 18446744070709551616u, 300, 18446744073709551487u,
                                   65536, 4294967296u, 0, 9300000300729368576u, h, 2147483648u,
                                   18446744071562067712u}));
  r = run("Cast", 13, {f64({20}, x)}, {attrI("to", 13)});
  EXPECT_OK(r);
  auto u64 = values<uint64_t>(r.out());
  EXPECT_EQ(u64[8], 10000000000000000000u);
  EXPECT_EQ(u64[15], 18446744000000000000u);
  EXPECT_EQ(u64[16], 9300000000000000000u);
  r = run("Cast", 13, {f32({20}, xf)}, {attrI("to", 7)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int64_t>(r.out()),
            (std::vector<int64_t>{m, m, m, -1, -1, 2, 3000000000, 5000000000, m, m, -3000000000, 300, -129, 65536,
                                  4294967296, m, m, m, 2147483648, -2147483904}));
  r = run("Cast", 13, {f32({20}, xf)}, {attrI("to", 6)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()),
            (std::vector<int32_t>{m32, m32, m32, -1, -1, 2, m32, m32, m32, m32, m32, 300, -129, 65536, m32, m32,
                                  m32, m32, m32, m32}));
  r = run("Cast", 13, {f32({20}, xf)}, {attrI("to", 3)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int8_t>(r.out()),
            (std::vector<int8_t>{0, 0, 0, -1, -1, 2, 0, 0, 0, 0, 0, 44, 127, 0, 0, 0, 0, 0, 0, 0}));
  r = run("Cast", 13, {f32({20}, xf)}, {attrI("to", 4)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint16_t>(r.out()),
            (std::vector<uint16_t>{0, 0, 0, 65535, 65535, 2, 0, 0, 0, 0, 0, 300, 65407, 0, 0, 0, 0, 0, 0, 0}));

  // Undefined by the spec only outside the target's range.
  r = run("Cast", 13, {f32({4}, {2.9f, -2.9f, 3e9f, 4294967040.0f})}, {attrI("to", 12)});
  EXPECT_OK(r);
  EXPECT_EQ(r.undefined, "-2.9 is out of the range of uint32 (element 1)");
  r = run("Cast", 13, {f32({3}, {2.9f, 3e9f, 4294967040.0f})}, {attrI("to", 12)});
  EXPECT_OK(r);
  EXPECT_EQ(r.undefined, "");
  r = run("Cast", 13, {f32({2}, {127.9f, -128.9f})}, {attrI("to", 3)});
  EXPECT_OK(r);
  EXPECT_EQ(r.undefined, "");
  r = run("Cast", 13, {f32({1}, {128.0f})}, {attrI("to", 3)});
  EXPECT_EQ(r.undefined, "128 is out of the range of int8 (element 0)");
  r = run("Cast", 13, {f64({1}, {9223372036854775808.0})}, {attrI("to", 7)});
  EXPECT_NE(r.undefined, "");
  r = run("Cast", 13, {f32({2}, {kNaN, kInf})}, {attrI("to", 9)}); // bool: NaN != 0
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(r.undefined, "");
  r = run("Cast", 13, {f16({1}, {70000.0f})}, {attrI("to", 6)}); // float16 inf
  EXPECT_NE(r.undefined, "");
}

TEST(MathKernelsOrt, CastStringsAsOnnxRuntime) {
  std::vector<std::string> s = {"1e3", "2.5",  "  7 ", "+8",  "-9",   "1000", "1E2",  "-2.7",
                                "-1",  "0x10", "00012", "300", "-129", "7abc", "1.9e2"};
  auto r = run("Cast", 13, {strings({15}, s)}, {attrI("to", 7)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int64_t>(r.out()), (std::vector<int64_t>{1, 2, 7, 8, -9, 1000, 1, -2, -1, 0, 12, 300, -129, 7, 1}));
  EXPECT_EQ(r.undefined, "the string '1e3' is not a plain integer in the range of int64 (element 0)");
  r = run("Cast", 13, {strings({15}, s)}, {attrI("to", 3)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int8_t>(r.out()), (std::vector<int8_t>{1, 2, 7, 8, -9, -24, 1, -2, -1, 0, 12, 44, 127, 7, 1}));
  r = run("Cast", 13, {strings({15}, s)}, {attrI("to", 12)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint32_t>(r.out()),
            (std::vector<uint32_t>{1, 2, 7, 8, 4294967287u, 1000, 1, 4294967294u, 4294967295u, 0, 12, 300,
                                   4294967167u, 7, 1}));
  r = run("Cast", 13, {strings({15}, s)}, {attrI("to", 9)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1}));
  r = run("Cast", 13, {strings({15}, s)}, {attrI("to", 1)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()),
            (std::vector<float>{1000, 2.5f, 7, 8, -9, 1000, 100, -2.7f, -1, 16, 12, 300, -129, 7, 190}));
  EXPECT_EQ(r.undefined, "the string '  7 ' is not a number literal of float (element 2)");
  // ONNX Runtime also fails on these.
  EXPECT_FAILS(run("Cast", 13, {strings({1}, {"abc"})}, {attrI("to", 7)}));
  EXPECT_FAILS(run("Cast", 13, {strings({1}, {""})}, {attrI("to", 1)}));
  EXPECT_FAILS(run("Cast", 13, {strings({1}, {"9223372036854775808"})}, {attrI("to", 7)}));
  EXPECT_FAILS(run("Cast", 13, {strings({1}, {"true"})}, {attrI("to", 9)}));

  // Defined: plain integers that fit, number literals for floats.
  r = run("Cast", 13, {strings({4}, {"1000", "-9", "+8", "00012"})}, {attrI("to", 7)});
  EXPECT_OK(r);
  EXPECT_EQ(r.undefined, "");
  r = run("Cast", 13, {strings({2}, {"255", "0"})}, {attrI("to", 2)});
  EXPECT_EQ(r.undefined, "");
  r = run("Cast", 13, {strings({1}, {"256"})}, {attrI("to", 2)});
  EXPECT_NE(r.undefined, "");
  r = run("Cast", 13, {strings({1}, {"-1"})}, {attrI("to", 12)});
  EXPECT_NE(r.undefined, "");
  r = run("Cast", 13, {strings({7}, {"3.14", "1e-5", "1E8", "-INF", "+inf", "NaN", ".5"})}, {attrI("to", 1)});
  EXPECT_OK(r);
  EXPECT_EQ(r.undefined, "");
  for (const char *odd : {"0x1p3", "infinity", "7abc", " 5", "1e", "-nan"}) {
    r = run("Cast", 13, {strings({1}, {odd})}, {attrI("to", 11)});
    EXPECT_OK(r);
    EXPECT_NE(r.undefined, "") << odd;
  }
}

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

TEST(MathKernels, SoftmaxAxisSemantics) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  // Opset 13, axis 0 of [2,3]: columns.
  auto r = run("Softmax", 13, {f32({2, 3}, x)}, {attrI("axis", 0)});
  EXPECT_OK(r);
  float e = 1 / (1 + std::exp(3.0f));
  expectNear(values<float>(r.out()), {e, e, e, 1 - e, 1 - e, 1 - e});
  // Opset 11, axis 0: the whole tensor is one row.
  r = run("Softmax", 11, {f32({2, 3}, x)}, {attrI("axis", 0)});
  EXPECT_OK(r);
  float sum = 0;
  for (float v : x)
    sum += std::exp(v);
  std::vector<float> want;
  for (float v : x)
    want.push_back(std::exp(v) / sum);
  expectNear(values<float>(r.out()), want);
  r = run("LogSoftmax", 13, {f32({1, 3}, {1000, 1001, 1002})});
  EXPECT_OK(r);
  float lse = 1002 + std::log(std::exp(-2.0f) + std::exp(-1.0f) + 1);
  expectNear(values<float>(r.out()), {1000 - lse, 1001 - lse, 1002 - lse});
  r = run("Hardmax", 13, {f32({2, 3}, {1, 3, 3, 5, 4, 0})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{0, 1, 0, 1, 0, 0}));
  EXPECT_FAILS(run("Softmax", 13, {f32({2, 3}, x)}, {attrI("axis", 2)}));
  EXPECT_FAILS(run("Softmax", 13, {i32({2}, {1, 2})}));
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST(MathKernels, CastNumbersAndStrings) {
  auto r = run("Cast", 13, {f32({5}, {1.9f, -1.9f, 300.0f, -1.0f, NAN})}, {attrI("to", 3)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int8_t>(r.out()), (std::vector<int8_t>{1, -1, 44, -1, 0}));
  r = run("Cast", 13, {f32({2}, {-1.0f, 255.0f})}, {attrI("to", 2)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{255, 255}));
  r = run("Cast", 13, {f32({3}, {0.5f, 0, -2})}, {attrI("to", 9)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{1, 0, 1}));
  r = run("Cast", 13, {f32({2}, {1.0f + 0x1p-11f, 65520.0f})}, {attrI("to", 10)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint16_t>(r.out()), (std::vector<uint16_t>{0x3c00, 0x7c00}));
  // double -> float16 rounds once: 1 + 2^-11 + 2^-40 is just above the tie.
  r = run("Cast", 13, {f64({1}, {1.0 + 0x1p-11 + 0x1p-40})}, {attrI("to", 10)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint16_t>(r.out())[0], 0x3c01);
  r = run("Cast", 13, {f32({4}, {0.039187793f, 1.0f, -INFINITY, NAN})}, {attrI("to", 8)});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->strings(), (std::vector<std::string>{"0.039187793", "1", "-INF", "NaN"}));
  r = run("Cast", 13, {i64({2}, {-5, 1234567890123})}, {attrI("to", 8)});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->strings(), (std::vector<std::string>{"-5", "1234567890123"}));
  r = run("Cast", 13, {strings({6}, {"0.5", "INF", "+INF", "-inf", "NaN", " 1e3 "})},
          {attrI("to", 1)});
  EXPECT_OK(r);
  auto f = values<float>(r.out());
  EXPECT_EQ(f[0], 0.5f);
  EXPECT_TRUE(std::isinf(f[1]) && f[1] > 0);
  EXPECT_TRUE(std::isinf(f[2]) && f[2] > 0);
  EXPECT_TRUE(std::isinf(f[3]) && f[3] < 0);
  EXPECT_TRUE(std::isnan(f[4]));
  EXPECT_EQ(f[5], 1000.0f);
  r = run("Cast", 13, {strings({3}, {"-42", "+7", "9223372036854775807"})}, {attrI("to", 7)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int64_t>(r.out()),
            (std::vector<int64_t>{-42, 7, std::numeric_limits<int64_t>::max()}));
  EXPECT_FAILS(run("Cast", 13, {strings({1}, {"abc"})}, {attrI("to", 1)}));
  EXPECT_FAILS(run("Cast", 13, {f32({1}, {1})}, {attrI("to", 14)}));
  EXPECT_FAILS(run("Cast", 13, {f32({1}, {1})}));
  // Cast-1 names the type.
  r = run("Cast", 1, {i32({2}, {1, 2})}, {attrS("to", "FLOAT")});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{1, 2}));
  r = run("CastLike", 15, {f32({2}, {1.5f, 2.5f}), i32({1}, {0})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{1, 2}));
}

TEST(MathKernels, CastFloat8) {
  // E4M3FN: 448 is the largest; 1000 saturates, or becomes NaN without saturation.
  auto r = run("Cast", 19, {f32({4}, {1.0f, 448.0f, 1000.0f, -0.0f})}, {attrI("to", 17)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0x38, 0x7e, 0x7e, 0x80}));
  r = run("Cast", 19, {f32({1}, {1000.0f})}, {attrI("to", 17), attrI("saturate", 0)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out())[0], 0x7f);
  // E5M2 keeps infinities without saturation.
  r = run("Cast", 19, {f32({2}, {INFINITY, 1.5f})}, {attrI("to", 19), attrI("saturate", 0)});
  EXPECT_OK(r);
  EXPECT_EQ(values<uint8_t>(r.out()), (std::vector<uint8_t>{0x7c, 0x3e}));
  // Round trip through float.
  auto b = make<uint8_t>(DataType::Float8E4M3FN, {3}, {0x38, 0x7e, 0x01});
  r = run("Cast", 19, {b}, {attrI("to", 1)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{1.0f, 448.0f, 0x1p-9f}));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST(MathKernels, Reductions) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto r = run("ReduceSum", 13, {f32({2, 3}, x), i64({1}, {1})}, {attrI("keepdims", 0)});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{6, 15}));
  r = run("ReduceSum", 13, {f32({2, 3}, x)});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{21}));
  r = run("ReduceSum", 13, {f32({2, 3}, x), i64({0}, {})}, {attrI("noop_with_empty_axes", 1)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), x);
  r = run("ReduceMean", 13, {f32({2, 3}, x)}, {attrIs("axes", {0})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  r = run("ReduceMean", 18, {f32({2, 3}, x), i64({1}, {-1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{2, 5}));
  r = run("ReduceMax", 13, {i32({2, 3}, {1, 9, 3, 4, 5, 6})}, {attrIs("axes", {1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{9, 6}));
  r = run("ReduceProd", 13, {f32({2, 3}, x)}, {attrIs("axes", {1}), attrI("keepdims", 0)});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{6, 120}));
  r = run("ReduceL2", 13, {f32({2, 2}, {3, 4, 6, 8})}, {attrIs("axes", {1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{5, 10}));
  r = run("ReduceLogSumExp", 13, {f32({1, 2}, {1000, 1000})}, {attrIs("axes", {1})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {1000 + std::log(2.0f)});
  // A long reduced run (SIMD path) and a middle axis (vertical path).
  std::vector<float> big(2 * 50 * 3);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = float(i % 7) - 3.0f;
  r = run("ReduceSum", 13, {f32({2, 50, 3}, big), i64({1}, {1})});
  EXPECT_OK(r);
  std::vector<float> want(6, 0);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 50; ++b)
      for (int c = 0; c < 3; ++c)
        want[a * 3 + c] += big[(a * 50 + b) * 3 + c];
  EXPECT_EQ(values<float>(r.out()), want);
  r = run("ReduceSumSquare", 13, {f32({300}, big)}, {attrI("keepdims", 0)});
  EXPECT_OK(r);
  float sq = 0;
  for (float v : big)
    sq += v * v;
  EXPECT_FLOAT_EQ(values<float>(r.out())[0], sq);
  // Empty reductions give the identity.
  r = run("ReduceSum", 13, {f32({0, 2}, {}), i64({1}, {0})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{0, 0}));
  EXPECT_FAILS(run("ReduceSum", 13, {f32({2, 3}, x), i64({1}, {2})}));
  EXPECT_FAILS(run("ReduceMean", 13, {strings({1}, {"a"})}));
}

//===----------------------------------------------------------------------===//
// Misc math
//===----------------------------------------------------------------------===//

TEST(MathKernels, EinsumDetMisc) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, 0, 2, 1, 0, 1};
  auto r = run("Einsum", 12, {f32({2, 3}, a), f32({3, 2}, b)}, {attrS("equation", "ij,jk->ik")});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{5, 5, 14, 11}));
  r = run("Einsum", 12, {f32({2, 3}, a)}, {attrS("equation", "ij->ji")});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  r = run("Einsum", 12, {f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, {attrS("equation", "ii")});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{15}));
  r = run("Einsum", 12, {i64({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2, 3}, {1, 1, 1, 2, 2, 2})},
          {attrS("equation", "...j,...j->...")});
  EXPECT_OK(r);
  EXPECT_EQ(values<int64_t>(r.out()), (std::vector<int64_t>{6, 30}));
  EXPECT_FAILS(run("Einsum", 12, {f32({2, 3}, a), f32({2, 3}, a)}, {attrS("equation", "ij,jk->ik")}));
  EXPECT_FAILS(run("Einsum", 12, {f32({2, 3}, a)}, {attrS("equation", "ij->k")}));
  r = run("Det", 11, {f32({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 2})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {-2, 4});
  EXPECT_FAILS(run("Det", 11, {f32({2, 3}, a)}));
  r = run("LpNormalization", 1, {f32({2, 2}, {3, 4, 0, 0})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {0.6f, 0.8f, 0, 0});
  r = run("MeanVarianceNormalization", 13, {f32({1, 1, 1, 4}, {1, 2, 3, 4})});
  EXPECT_OK(r);
  float sd = std::sqrt(1.25f);
  expectNear(values<float>(r.out()), {-1.5f / sd, -0.5f / sd, 0.5f / sd, 1.5f / sd}, 1e-4f);
  r = run("Dropout", 13, {f32({2}, {1, 2})}, {}, 2);
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<uint8_t>(r.out(1)), (std::vector<uint8_t>{1, 1}));
  r = run("Dropout", 13, {f32({1000}, std::vector<float>(1000, 1.0f)), f32({}, {0.5f}),
                          boolean({}, {1})},
          {}, 2);
  EXPECT_OK(r);
  int kept = 0;
  for (float v : values<float>(r.out())) {
    EXPECT_TRUE(v == 0.0f || v == 2.0f);
    kept += v != 0;
  }
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
  EXPECT_FALSE(OpRegistry::builtin().find("", "RandomNormal", 13)->deterministic);
  r = run("RandomUniform", 13, {}, {attrIs("shape", {2, 3}), attrF("low", 2), attrF("high", 3)});
  EXPECT_OK(r);
  for (float v : values<float>(r.out()))
    EXPECT_TRUE(v >= 2 && v <= 3);
  r = run("Multinomial", 7, {f32({1, 3}, {-100, 0, -100})}, {attrI("sample_size", 5)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{1, 1, 1, 1, 1}));
  r = run("Bernoulli", 15, {f32({3}, {0, 1, 1})});
  EXPECT_OK(r);
  EXPECT_EQ(values<float>(r.out()), (std::vector<float>{0, 1, 1}));
}

TEST(MathKernels, CastInt4) {
  auto r = run("Cast", 21, {f32({3}, {1.5f, -2.6f, 9.0f})}, {attrI("to", 22)});
  EXPECT_OK(r);
  EXPECT_EQ(r.out()->byteSize(), 2u);
  // 2 (0x2) | -3 (0xd) << 4, then 9 -> low bits 0x9.
  EXPECT_EQ(values<uint8_t>(make<uint8_t>(DataType::UInt8, {2}, {r.out()->rawData()[0],
                                                                r.out()->rawData()[1]})),
            (std::vector<uint8_t>{0xd2, 0x09}));
  r = run("Cast", 21, {r.out()}, {attrI("to", 6)});
  EXPECT_OK(r);
  EXPECT_EQ(values<int32_t>(r.out()), (std::vector<int32_t>{2, -3, -7}));
}

TEST(MathKernels, LossSignalTrainingGradient) {
  // NLL with ignore_index and mean reduction.
  auto logp = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  auto r = run("NegativeLogLikelihoodLoss", 13, {logp, i64({2}, {2, 0})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {3.5f});
  r = run("NegativeLogLikelihoodLoss", 13, {logp, i64({2}, {2, 0})}, {attrI("ignore_index", 0)});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {3.0f});
  EXPECT_FAILS(run("NegativeLogLikelihoodLoss", 13, {logp, i64({2}, {3, 0})}));
  EXPECT_FAILS(run("NegativeLogLikelihoodLoss", 13, {logp, i64({3}, {0, 0, 0})}));
  r = run("SoftmaxCrossEntropyLoss", 13, {f32({1, 2}, {0, 0}), i64({1}, {1})},
          {attrS("reduction", "none")}, 2);
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {std::log(2.0f)});
  expectNear(values<float>(r.out(1)), {-std::log(2.0f), -std::log(2.0f)});
  // DFT of [1, 0, 0, 0] is all ones; a bad axis is an error.
  r = run("DFT", 17, {f32({1, 4, 1}, {1, 0, 0, 0})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {1, 0, 1, 0, 1, 0, 1, 0});
  EXPECT_FAILS(run("DFT", 17, {f32({1, 4, 1}, {1, 0, 0, 0})}, {attrI("axis", 2)}));
  r = run("HannWindow", 17, {i32({}, {4})});
  EXPECT_OK(r);
  expectNear(values<float>(r.out()), {0, 0.5f, 1, 0.5f});
  EXPECT_FAILS(run("HannWindow", 17, {i32({}, {-1})}));
  // Momentum: first step (T = 0) uses beta 1.
  Graph g;
  {
    Value *R = g.addInput("R"), *T = g.addInput("T"), *X = g.addInput("X"),
          *G = g.addInput("G"), *V = g.addInput("V");
    Node *n = g.append(g.createNode("Momentum", {R, T, X, G, V}, {"X_new", "V_new"},
                                    "ai.onnx.preview.training"));
    n->setAttr(Attribute::makeFloat("alpha", 0.5f));
    n->setAttr(Attribute::makeFloat("beta", 0.25f));
    n->setAttr(Attribute::makeFloat("norm_coefficient", 0));
    n->setAttr(Attribute::makeString("mode", "standard"));
    std::vector<RtValue> vals = {RtValue::fromTensor(f32({}, {0.1f})),
                                 RtValue::fromTensor(i64({}, {0})),
                                 RtValue::fromTensor(f32({1}, {1})),
                                 RtValue::fromTensor(f32({1}, {2})),
                                 RtValue::fromTensor(f32({1}, {4}))};
    std::vector<const RtValue *> ptrs;
    for (auto &v : vals)
      ptrs.push_back(&v);
    KernelContext ctx(*n, 1, ptrs, nullptr);
    const KernelDef *k = OpRegistry::builtin().find("ai.onnx.preview.training", "Momentum", 1);
    ASSERT_TRUE(k);
    ASSERT_TRUE(k->fn(ctx).ok());
    expectNear(values<float>(ctx.outputs()[1].tensor), {0.5f * 4 + 2});
    expectNear(values<float>(ctx.outputs()[0].tensor), {1 - 0.1f * 4});
  }
  // Gradient of d = (a + b) * a: dd/da = 2a + b, dd/db = a.
  Graph h;
  {
    Value *a = h.addInput("a"), *b = h.addInput("b");
    Node *add = h.append(h.createNode("Add", {a, b}, {"c"}));
    Node *mul = h.append(h.createNode("Mul", {add->result(0), a}, {"d"}));
    (void)mul;
    Node *grad = h.append(h.createNode("Gradient", {a, b}, {"da", "db"}, "ai.onnx.preview.training"));
    Attribute xs("xs", AttrKind::Strings);
    xs.strings = {"a", "b"};
    grad->setAttr(std::move(xs));
    grad->setAttr(Attribute::makeString("y", "d"));
    std::vector<RtValue> vals = {RtValue::fromTensor(f32({}, {3})), RtValue::fromTensor(f32({}, {5}))};
    std::vector<const RtValue *> ptrs = {&vals[0], &vals[1]};
    KernelContext ctx(*grad, 1, ptrs, nullptr);
    const KernelDef *k = OpRegistry::builtin().find("ai.onnx.preview.training", "Gradient", 1);
    ASSERT_TRUE(k);
    ASSERT_TRUE(k->fn(ctx).ok());
    EXPECT_EQ(values<float>(ctx.outputs()[0].tensor), (std::vector<float>{11}));
    EXPECT_EQ(values<float>(ctx.outputs()[1].tensor), (std::vector<float>{3}));
  }
}

/// Every math op on every combination of odd inputs (missing, scalar,
/// empty, mixed dtypes, strings) returns ok or an error, never crashes
/// (meaningful under the ASan+UBSan build).
TEST(MathKernels, OddInputsNeverCrash) {
  const char *ops[] = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "BitShift",
      "BitwiseAnd", "BitwiseNot", "And", "Or", "Xor", "Not", "Equal", "Less", "LessOrEqual",
      "Greater", "GreaterOrEqual", "PRelu", "Abs", "Neg", "Sign", "Reciprocal", "Floor", "Ceil",
      "Round", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
      "Tanh", "Asinh", "Acosh", "Atanh", "Erf", "IsNaN", "IsInf", "Relu", "LeakyRelu", "Elu",
      "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Softplus", "Softsign",
      "ThresholdedRelu", "Gelu", "Mish", "Clip", "Shrink", "Cast", "CastLike", "ReduceSum",
      "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Softmax", "LogSoftmax", "Hardmax",
      "Einsum", "Det", "MeanVarianceNormalization", "Dropout", "RandomNormalLike",
      "RandomUniformLike", "Bernoulli", "Multinomial", "LpNormalization",
      "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "DFT", "STFT", "HannWindow",
      "MelWeightMatrix"};
  std::vector<TensorPtr> pool = {
      nullptr,
      f32({}, {2.5f}),
      f32({0, 3}, {}),
      f32({2, 3}, {1, -2, 3, -4, 5, 0}),
      i64({2}, {-1, 7}),
      boolean({2}, {1, 0}),
      strings({1}, {"x"}),
      f16({2, 1}, {1, -1}),
      u8({1}, {200}),
      i32({1, 1}, {0}),
  };
  std::vector<std::vector<AttrSpec>> attrSets = {
      {},
      {attrI("axis", 5), attrIs("axes", {7}), attrI("to", 1), attrS("equation", "ij->"),
       attrS("direction", "LEFT"), attrI("keepdims", 0)},
      {attrI("axis", -1), attrIs("axes", {0}), attrI("to", 8), attrS("equation", "...,..."),
       attrS("reduction", "none"), attrI("onesided", 1)},
  };
  size_t runs = 0;
  for (const char *op : ops) {
    for (int64_t opset : {6, 13, 21}) {
      if (!OpRegistry::builtin().find("", op, opset))
        continue;
      for (const auto &attrs : attrSets) {
        for (size_t n = 0; n <= 3; ++n) {
          size_t combos = 1;
          for (size_t i = 0; i < n; ++i)
            combos *= pool.size();
          for (size_t c = 0; c < combos; ++c) {
            std::vector<TensorPtr> ins;
            for (size_t i = 0, k = c; i < n; ++i, k /= pool.size())
              ins.push_back(pool[k % pool.size()]);
            auto r = run(op, opset, ins, attrs);
            ++runs;
            if (r.status.ok()) {
              for (const TensorPtr &t : r.outputs) {
                if (t) {
                  EXPECT_TRUE(t->isConsistent()) << op;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 10000u);
}

//===----------------------------------------------------------------------===//
// Throughput: kernels vs a plain scalar loop in the same process
//===----------------------------------------------------------------------===//

template <typename Fn> double bestSeconds(Fn &&fn) {
  double best = 1e30;
  for (int rep = 0; rep < 15; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

TEST(MathKernelsPerf, ElementwiseVsScalarLoop) {
  constexpr int64_t n = 1 << 20;
  std::vector<float> a(n), b(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    a[size_t(i)] = float(i % 1000) * 0.01f - 5.0f;
    b[size_t(i)] = float(i % 777) * 0.003f + 0.5f;
  }
  TensorPtr ta = f32({n}, a), tb = f32({n}, b);
  // The reference loops go through a volatile function pointer so the
  // compiler cannot fold them into the measurement or vectorize across calls.
  struct Case {
    const char *op;
    std::vector<TensorPtr> inputs;
    void (*scalar)(const float *, const float *, float *, int64_t);
  };
  std::vector<Case> cases = {
      {"Add", {ta, tb},
       [](const float *x, const float *y, float *o, int64_t m) {
         for (int64_t i = 0; i < m; ++i)
           o[i] = x[i] + y[i];
       }},
      {"Mul", {ta, tb},
       [](const float *x, const float *y, float *o, int64_t m) {
         for (int64_t i = 0; i < m; ++i)
           o[i] = x[i] * y[i];
       }},
      {"Relu", {ta},
       [](const float *x, const float *, float *o, int64_t m) {
         for (int64_t i = 0; i < m; ++i)
           o[i] = x[i] > 0 ? x[i] : 0;
       }},
      {"Sigmoid", {ta},
       [](const float *x, const float *, float *o, int64_t m) {
         for (int64_t i = 0; i < m; ++i)
           o[i] = 1.0f / (1.0f + std::exp(-x[i]));
       }},
  };
  for (Case &c : cases) {
    const KernelDef *k = OpRegistry::builtin().find("", c.op, 14);
    ASSERT_TRUE(k);
    Graph g;
    std::vector<Value *> operands;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      operands.push_back(g.addInput("in" + std::to_string(i)));
    Node *node = g.append(g.createNode(c.op, operands, {"y"}));
    std::vector<RtValue> vals;
    for (auto &t : c.inputs)
      vals.push_back(RtValue::fromTensor(t));
    std::vector<const RtValue *> ptrs;
    for (auto &v : vals)
      ptrs.push_back(&v);
    TensorPtr result;
    double tKernel = bestSeconds([&] {
      result.reset(); // as the interpreter frees a value after its last use
      KernelContext ctx(*node, 14, ptrs, nullptr);
      ASSERT_TRUE(k->fn(ctx).ok());
      result = ctx.outputs()[0].tensor;
    });
    auto *volatile fn = c.scalar;
    double tScalar = bestSeconds([&] { fn(a.data(), b.data(), out.data(), n); });
    // The same loop writing a freshly allocated output, as a kernel must.
    double tScalarAlloc = bestSeconds([&] {
      std::unique_ptr<float[]> fresh(new float[n]);
      fn(a.data(), b.data(), fresh.get(), n);
      out[0] = fresh[0];
    });
    std::vector<float> got = values<float>(result);
    for (int64_t i = 0; i < n; i += 4099)
      EXPECT_NEAR(got[size_t(i)], out[size_t(i)], 1e-5f * (1 + std::fabs(out[size_t(i)])));
    std::printf("[perf] %-8s 1M floats: kernel %.3f ms | scalar loop %.3f ms (x%.2f) | scalar "
                "loop + fresh output %.3f ms (x%.2f)\n",
                c.op, tKernel * 1e3, tScalar * 1e3, tScalar / tKernel, tScalarAlloc * 1e3,
                tScalarAlloc / tKernel);
  }
}

} // namespace
