//===- tests/runtime/VecMathTest.cpp - Wide transcendental functions ------===//
//
// runtime/VecMath's AVX2 and AVX-512 exp, sigmoid, tanh, erf and GELU against the
// functions in double on a dense grid over their whole float range (and
// the specials: +-0, +-inf, NaN, the overflow and subnormal edges): within
// the ulps the header promises, NaN where the function is NaN, the
// saturation values exact; and the same bits whatever the span is cut
// into (threads split tensors anywhere). Skipped with a message only where
// the CPU has no AVX2 (the kernels then keep their portable loops).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/VecMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace onnxslim;

namespace {

using SpanFn = void (*)(const float *, float *, int64_t);

/// The grid: steps of 1/256 over [-110, 110], fine steps near 0, and the specials.
std::vector<float> grid() {
  std::vector<float> x;
  for (int i = -110 * 256; i <= 110 * 256; ++i)
    x.push_back(static_cast<float>(i) / 256.0f);
  for (int i = -2000; i <= 2000; ++i)
    x.push_back(static_cast<float>(i) * 1e-6f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float s : {0.0f, -0.0f, inf, -inf, std::nanf(""), 88.72f, 88.73f, -87.33f, -87.34f, -100.0f, -103.9f,
                  -104.0f, 1e-30f, -1e-30f, 0.921875f, -0.921875f, 3.925f, -3.925f, 0.625f, -0.625f})
    x.push_back(s);
  return x;
}

/// |got - want| in units of the float spacing at want.
double ulps(float got, double want) {
  double spacing = std::nextafter(std::abs(static_cast<float>(want)), std::numeric_limits<float>::infinity()) -
                   std::abs(static_cast<float>(want));
  spacing = std::max(spacing, static_cast<double>(std::numeric_limits<float>::denorm_min()));
  return std::abs(static_cast<double>(got) - want) / spacing;
}

/// Given a span function, its reference in double and the ulps allowed
/// (and an absolute floor, for results that cancel to near 0), Execute:
/// checks every grid point, and that cut spans give the same bits.
void check(const char *name, SpanFn f, double (*ref)(double), double maxUlps, double absFloor = 0) {
  SCOPED_TRACE(name);
  std::vector<float> x = grid();
  std::vector<float> y(x.size());
  f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  float worstAt = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double want = ref(static_cast<double>(x[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i])) << "x=" << x[i];
      continue;
    }
    if (std::isinf(static_cast<float>(want))) {
      EXPECT_EQ(y[i], static_cast<float>(want)) << "x=" << x[i];
      continue;
    }
    if (std::abs(static_cast<double>(y[i]) - want) <= absFloor)
      continue;
    double u = ulps(y[i], want);
    if (u > worst) {
      worst = u;
      worstAt = x[i];
    }
  }
  EXPECT_LE(worst, maxUlps) << "worst at x=" << worstAt;
  // Cut into spans of odd lengths (masked tails everywhere): the same bits.
  std::vector<float> z(x.size());
  for (size_t b = 0, len = 1; b < x.size(); b += len, len = len % 13 + 1)
    f(x.data() + b, z.data() + b, static_cast<int64_t>(std::min(len, x.size() - b)));
  EXPECT_EQ(0, std::memcmp(y.data(), z.data(), y.size() * sizeof(float)));
  // In place.
  std::vector<float> w = x;
  f(w.data(), w.data(), static_cast<int64_t>(w.size()));
  EXPECT_EQ(0, std::memcmp(y.data(), w.data(), y.size() * sizeof(float)));
}

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double geluRef(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double expRef(double x) { return std::exp(x); }
double tanhRef(double x) { return std::tanh(x); }
double erfRef(double x) { return std::erf(x); }

TEST(VecMath, WideFunctionsAreAccurate) {
  std::string original = rt::gemmEngineName();
  if (!rt::setGemmEngine("avx2") || !rt::vmath::wide()) {
    rt::setGemmEngine(original.c_str());
    GTEST_SKIP() << "this CPU has no AVX2: the kernels keep their portable loops";
  }
  for (const char *engine : {"avx2", "avx512"}) {
    if (!rt::setGemmEngine(engine))
      continue; // no AVX-512: the AVX2 form alone
    SCOPED_TRACE(engine);
    check("exp", rt::vmath::exp, expRef, 1.5);
    check("sigmoid", rt::vmath::sigmoid, sigmoidRef, 3);
    check("tanh", rt::vmath::tanh, tanhRef, 2);
    check("erf", rt::vmath::erf, erfRef, 3);
    // GELU is 0 below x = -5.55, where the exact value is under 1e-7.
    check("gelu", rt::vmath::gelu, geluRef, 4, 1e-7);
  }
  rt::setGemmEngine("baseline");
  EXPECT_FALSE(rt::vmath::wide());
  rt::setGemmEngine(original.c_str());
}

/// The AVX-512 forms run the AVX2 forms' operations on 16 lanes: the same
/// bits on the whole grid, specials included.
TEST(VecMath, Avx512FormsGiveTheAvx2Bits) {
  std::string original = rt::gemmEngineName();
  if (!rt::setGemmEngine("avx512")) {
    rt::setGemmEngine(original.c_str());
    GTEST_SKIP() << "this CPU has no AVX-512: the AVX2 forms run alone";
  }
  const std::vector<float> x = grid();
  const std::pair<const char *, SpanFn> fns[] = {{"exp", rt::vmath::exp},
                                                 {"sigmoid", rt::vmath::sigmoid},
                                                 {"tanh", rt::vmath::tanh},
                                                 {"erf", rt::vmath::erf},
                                                 {"gelu", rt::vmath::gelu}};
  for (const auto &[name, f] : fns) {
    std::vector<float> wide(x.size()), narrow(x.size());
    ASSERT_TRUE(rt::setGemmEngine("avx512"));
    f(x.data(), wide.data(), static_cast<int64_t>(x.size()));
    ASSERT_TRUE(rt::setGemmEngine("avx2"));
    f(x.data(), narrow.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(0, std::memcmp(wide.data(), narrow.data(), x.size() * sizeof(float))) << name;
  }
  rt::setGemmEngine(original.c_str());
}

/// sigmoidMul (SiLU in one pass) gives sigmoid's bits times the other
/// operand, in the order asked, on every form: cut into spans, and in
/// place over either operand.
TEST(VecMath, SigmoidMulGivesTheSigmoidThenTheProduct) {
  std::string original = rt::gemmEngineName();
  const std::vector<float> in = grid();
  std::vector<float> x(in.rbegin(), in.rend()); // another operand, specials included
  const int64_t n = static_cast<int64_t>(in.size());
  int engines = 0;
  for (const char *engine : {"baseline", "avx2", "avx512"}) {
    if (!rt::setGemmEngine(engine))
      continue;
    ++engines;
    SCOPED_TRACE(engine);
    std::vector<float> s(in.size());
    rt::vmath::sigmoid(in.data(), s.data(), n);
    for (bool xFirst : {false, true}) {
      SCOPED_TRACE(xFirst ? "x first" : "sigmoid first");
      std::vector<float> want(in.size()), got(in.size());
      for (size_t i = 0; i < in.size(); ++i)
        want[i] = xFirst ? x[i] * s[i] : s[i] * x[i];
      rt::vmath::sigmoidMul(in.data(), x.data(), got.data(), n, xFirst);
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * sizeof(float)));
      std::vector<float> cut(in.size());
      for (size_t b = 0, len = 1; b < in.size(); b += len, len = len % 29 + 1)
        rt::vmath::sigmoidMul(in.data() + b, x.data() + b, cut.data() + b,
                              static_cast<int64_t>(std::min(len, in.size() - b)), xFirst);
      EXPECT_EQ(0, std::memcmp(want.data(), cut.data(), cut.size() * sizeof(float)));
      std::vector<float> overIn = in, overX = x;
      rt::vmath::sigmoidMul(overIn.data(), x.data(), overIn.data(), n, xFirst);
      rt::vmath::sigmoidMul(in.data(), overX.data(), overX.data(), n, xFirst);
      EXPECT_EQ(0, std::memcmp(want.data(), overIn.data(), want.size() * sizeof(float)));
      EXPECT_EQ(0, std::memcmp(want.data(), overX.data(), want.size() * sizeof(float)));
    }
  }
  EXPECT_GE(engines, 1);
  rt::setGemmEngine(original.c_str());
}

/// Softmax rows (vmath::softmax: max, exp and a 16-lane sum fused into the
/// row's passes): the same bits on AVX-512, AVX2 and in place, within a few
/// ulp of a double reference, for row lengths around the 8- and 16-lane
/// groups; a row with -inf entries gives them 0, a row of only -inf and a
/// row holding a NaN give NaN everywhere (as the kernel always has).
TEST(VecMath, SoftmaxRowsAgreeAcrossWidthsAndMatchDouble) {
  const std::string original = rt::gemmEngineName();
  std::vector<const char *> engines;
  for (const char *e : {"avx512", "avx2", "baseline"})
    if (rt::setGemmEngine(e))
      engines.push_back(e);
  for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 33, 65, 1000}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      x[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)) * 9.0);
    if (n > 3)
      x[2] = -std::numeric_limits<float>::infinity();
    std::vector<std::vector<float>> outs;
    for (const char *e : engines) {
      ASSERT_TRUE(rt::setGemmEngine(e));
      std::vector<float> y(x.size()), inPlace = x;
      rt::vmath::softmax(x.data(), y.data(), n);
      rt::vmath::softmax(inPlace.data(), inPlace.data(), n);
      EXPECT_EQ(0, std::memcmp(y.data(), inPlace.data(), y.size() * sizeof(float))) << e << " n " << n;
      double m = -INFINITY, sum = 0;
      for (float v : x)
        m = std::max(m, static_cast<double>(v));
      for (float v : x)
        sum += std::exp(static_cast<double>(v) - m);
      for (int64_t i = 0; i < n; ++i) {
        const double want = std::exp(static_cast<double>(x[static_cast<size_t>(i)]) - m) / sum;
        EXPECT_LE(std::abs(y[static_cast<size_t>(i)] - want), 2e-6 * want + 1e-30) << e << " n " << n << " i " << i;
      }
      outs.push_back(y);
    }
    // The two wide forms agree to the bit (the portable exp is xsimd's).
    for (size_t k = 1; k < outs.size(); ++k) {
      if (std::string(engines[k]) == "baseline")
        continue;
      EXPECT_EQ(0, std::memcmp(outs[0].data(), outs[k].data(), outs[0].size() * sizeof(float)))
          << engines[k] << " against " << engines[0] << ", n " << n;
    }
  }
  for (const char *e : engines) {
    ASSERT_TRUE(rt::setGemmEngine(e));
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> allInf(20, -inf), y(20), withNan(20, 1.0f);
    rt::vmath::softmax(allInf.data(), y.data(), 20);
    for (float v : y)
      EXPECT_TRUE(std::isnan(v)) << e;
    withNan[17] = std::numeric_limits<float>::quiet_NaN();
    rt::vmath::softmax(withNan.data(), y.data(), 20);
    for (float v : y)
      EXPECT_TRUE(std::isnan(v)) << e;
  }
  rt::setGemmEngine(original.c_str());
}

} // namespace
