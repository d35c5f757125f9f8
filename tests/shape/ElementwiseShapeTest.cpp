//===- tests/shape/ElementwiseShapeTest.cpp - Elementwise op inference ----===//
//
// Broadcasting (symbols kept against 1, equal symbols kept), comparison and
// logic result types, casts, Where, quantization, random generators, the
// legacy (opset < 7) broadcast, and malformed broadcasts; tracked contents
// as their element type holds them (casts wrap and round like ONNX Runtime).
//
//===----------------------------------------------------------------------===//
#include "tests/shape/ShapeTestUtil.h"

#include "ir/shape/InferContext.h"

namespace onnxslim::testing {
namespace {

/// The number a SymDim holds, or nullopt when unknown / symbolic.
std::optional<int64_t> held(const SymDim &d) { return d.constantValue(); }

TEST(ElementwiseShape, ContentsAreWhatTheElementTypeHolds) {
  using shape::castElement;
  using shape::representElement;
  auto c = [](int64_t v) { return SymDim::constant(v); };
  // Integer casts wrap (two's complement) to the target width.
  EXPECT_EQ(held(castElement(c(300), DataType::Int64, DataType::UInt8)), 44);
  EXPECT_EQ(held(castElement(c(-1), DataType::Int64, DataType::UInt32)), 4294967295);
  EXPECT_EQ(held(castElement(c(40000), DataType::Int32, DataType::Int16)), -25536);
  EXPECT_EQ(held(castElement(c(-1), DataType::Int64, DataType::UInt64)), std::nullopt); // 2^64 - 1
  // Float to integer out of range is undefined: not known; in range it is kept.
  EXPECT_EQ(held(castElement(c(300), DataType::Float, DataType::UInt8)), std::nullopt);
  EXPECT_EQ(held(castElement(c(255), DataType::Float, DataType::UInt8)), 255);
  EXPECT_EQ(held(castElement(c(-3), DataType::Float, DataType::Bool)), 1);
  // Floating types round to nearest even; float16 overflows to infinity.
  EXPECT_EQ(held(representElement(c(2049), DataType::Float16)), 2048);
  EXPECT_EQ(held(representElement(c(2051), DataType::Float16)), 2052);
  EXPECT_EQ(held(representElement(c(65519), DataType::Float16)), 65504);
  EXPECT_EQ(held(representElement(c(65520), DataType::Float16)), std::nullopt);
  EXPECT_EQ(held(representElement(c(16785409), DataType::Float)), 16785408);
  EXPECT_EQ(held(representElement(c(16777219), DataType::Float)), 16777220);
  EXPECT_EQ(held(representElement(c(-16777219), DataType::Float)), -16777220);
  EXPECT_EQ(held(representElement(c(INT64_MAX), DataType::Float)), std::nullopt); // 2^63
  EXPECT_EQ(held(representElement(c(INT64_MIN), DataType::Double)), INT64_MIN);
  EXPECT_EQ(held(representElement(c(256), DataType::BFloat16)), 256);
  EXPECT_EQ(held(representElement(c(257), DataType::BFloat16)), std::nullopt);
  // Narrow integers: out of range (an overflowed op) is not known.
  EXPECT_EQ(held(representElement(c(INT32_MAX + int64_t{1}), DataType::Int32)), std::nullopt);
  EXPECT_EQ(held(representElement(c(-5), DataType::UInt8)), std::nullopt);
  // Sizes (symbols) live in int64 only.
  EXPECT_TRUE(representElement(SymDim::named("batch"), DataType::Int64).isKnown());
  EXPECT_TRUE(representElement(SymDim::named("batch"), DataType::Int32).isUnknown());
  EXPECT_TRUE(representElement(SymDim::named("batch"), DataType::Float).isUnknown());
}

TEST(ElementwiseShape, BroadcastKeepsSymbols) {
  auto r = infer(withOpset(17, R"(
    g (float[batch, 1, 4] a, float[3, 1] b, float[batch, seq] c, float[batch, seq] d, float[1] e)
      => (float[batch, 3, 4] y) {
      y = Add(a, b)
      z = Mul(c, d)
      w = Sub(c, e)
      v = Div(e, e)
    })"));
  EXPECT_EQ(r.type("y"), "float[batch,3,4]");
  EXPECT_EQ(r.type("z"), "float[batch,seq]");
  EXPECT_EQ(r.type("w"), "float[batch,seq]");
  EXPECT_EQ(r.type("v"), "float[1]");
  EXPECT_TRUE(r.result.warnings.empty()) << r.warnings();
}

TEST(ElementwiseShape, DifferentSymbolsBroadcastToUnknown) {
  auto r = infer(withOpset(17, R"(
    g (float[N] a, float[M] b, float[?] c, float[5] d) => (float[?] y) {
      y = Add(a, b)
      z = Add(c, d)
      u = Add(a, c)
    })"));
  EXPECT_EQ(r.type("y"), "float[?]");
  EXPECT_EQ(r.type("z"), "float[5]"); // an unknown dim broadcast with 5 is 5
  EXPECT_EQ(r.type("u"), "float[?]");
}

TEST(ElementwiseShape, ComparisonsAndLogicAreBool) {
  auto r = infer(withOpset(17, R"(
    g (int64[2, 3] a, int64[3] b, bool[2, 3] p) => (bool[2, 3] y) {
      y = Equal(a, b)
      l = Less(a, b)
      ge = GreaterOrEqual(a, b)
      n = Not(p)
      x = Xor(p, y)
      nan = IsNaN(a)
    })"));
  for (const char *v : {"y", "l", "ge", "n", "x", "nan"})
    EXPECT_EQ(r.type(v), "bool[2,3]") << v;
}

TEST(ElementwiseShape, UnaryOpsKeepTheType) {
  auto r = infer(withOpset(17, R"(
    g (float16[N, 8] x) => (float16[N, 8] y) {
      a = Relu(x)
      b = Sigmoid(a)
      c = LeakyRelu <alpha = 0.1> (b)
      d = Softmax <axis = -1> (c)
      e = Clip(d)
      f, mask = Dropout(e)
      y = HardSwish(f)
    })"));
  EXPECT_EQ(r.type("y"), "float16[N,8]");
  EXPECT_EQ(r.type("mask"), "bool[N,8]");
}

TEST(ElementwiseShape, CastAndCastLike) {
  auto r = infer(withOpset(17, R"(
    g (float[batch, 2] x, int32[3] t) => (int64[batch, 2] y) {
      y = Cast <to = 7> (x)
      h = Cast <to = 10> (x)
      z = CastLike(x, t)
    })"));
  EXPECT_EQ(r.type("y"), "int64[batch,2]");
  EXPECT_EQ(r.type("h"), "float16[batch,2]");
  EXPECT_EQ(r.type("z"), "int32[batch,2]");
}

TEST(ElementwiseShape, VariadicAndWhere) {
  auto r = infer(withOpset(17, R"(
    g (float[2, 1] a, float[1, 3] b, float[3] c, bool[2, 1] p) => (float[2, 3] y) {
      y = Sum(a, b, c)
      m = Max(a, c)
      w = Where(p, b, a)
      pw = Pow(a, c)
    })"));
  EXPECT_EQ(r.type("y"), "float[2,3]");
  EXPECT_EQ(r.type("m"), "float[2,3]");
  EXPECT_EQ(r.type("w"), "float[2,3]");
  EXPECT_EQ(r.type("pw"), "float[2,3]");
}

TEST(ElementwiseShape, PowKeepsTheBaseType) {
  auto r = infer(withOpset(17, R"(
    g (float[4] x, int64 e) => (float[4] y) {
      y = Pow(x, e)
    })"));
  EXPECT_EQ(r.type("y"), "float[4]");
}

TEST(ElementwiseShape, LegacyBroadcastBeforeOpset7) {
  auto r = infer(withOpset(6, R"(
    g (float[2, 3, 4] a, float[3] b) => (float[2, 3, 4] y) {
      y = Add <broadcast = 1, axis = 1> (a, b)
    })"));
  EXPECT_EQ(r.type("y"), "float[2,3,4]");
}

TEST(ElementwiseShape, IncompatibleBroadcastWarns) {
  auto r = infer(withOpset(17, R"(
    g (float[2, 3] a, float[4, 3] b) => (float[2, 3] y) {
      [bad_add] y = Add(a, b)
      z = Relu(y)
    })"));
  EXPECT_TRUE(r.warned("node 'bad_add' (Add)")) << r.warnings();
  EXPECT_TRUE(r.warned("cannot be broadcast")) << r.warnings();
  EXPECT_EQ(r.type("y"), "none");
  EXPECT_EQ(r.type("z"), "none");
}

TEST(ElementwiseShape, CastWithoutTargetWarns) {
  auto r = infer(withOpset(17, R"(
    g (float[2] a) => (float[2] y) {
      [c] y = Cast(a)
    })"));
  EXPECT_TRUE(r.warned("node 'c' (Cast): missing or invalid 'to'")) << r.warnings();
  EXPECT_EQ(r.type("y"), "none");
}

TEST(ElementwiseShape, Quantization) {
  auto r = infer(withOpset(13, R"(
    g (float[N, 4] x, float s, int8 z, uint8[N, 4] q) => (int8[N, 4] y) {
      y = QuantizeLinear(x, s, z)
      u = QuantizeLinear(x, s)
      d = DequantizeLinear(q, s, z)
      dq, scale, zp = DynamicQuantizeLinear(x)
    })"));
  EXPECT_EQ(r.type("y"), "int8[N,4]");
  EXPECT_EQ(r.type("u"), "uint8[N,4]");
  EXPECT_EQ(r.type("d"), "float[N,4]");
  EXPECT_EQ(r.type("dq"), "uint8[N,4]");
  EXPECT_EQ(r.type("scale"), "float");
  EXPECT_EQ(r.type("zp"), "uint8");
}

TEST(ElementwiseShape, RandomOpsUseTheDtypeAttribute) {
  auto r = infer(withOpset(17, R"(
    g (float[N, 3] x) => (double[2, 5] y) {
      y = RandomNormal <shape = [2, 5], dtype = 11> ()
      u = RandomUniform <shape = [4]> ()
      l = RandomUniformLike <dtype = 10> (x)
      k = RandomNormalLike(x)
      m = Multinomial <sample_size = 7> (x)
      b = Bernoulli(x)
    })"));
  EXPECT_EQ(r.type("y"), "double[2,5]");
  EXPECT_EQ(r.type("u"), "float[4]");
  EXPECT_EQ(r.type("l"), "float16[N,3]");
  EXPECT_EQ(r.type("k"), "float[N,3]");
  EXPECT_EQ(r.type("m"), "int32[N,7]");
  EXPECT_EQ(r.type("b"), "float[N,3]");
}

} // namespace
} // namespace onnxslim::testing
