//===- tests/runtime/IntGemmTest.cpp - Exact 8-bit integer products -------===//
//
// runtime/IntGemm's product and runtime/conv/IntConv's convolution against
// plain int64 sums reduced modulo 2^32: every combination of operand signs,
// scalar and per-row / per-column zero points, shapes that leave partial
// tiles, panels and quads (M, N, K not multiples of 8, 32, 4), one and two
// threads, and every micro-kernel family the CPU runs (the results must be
// the same bits). The convolution covers padding (which reads the zero
// point), strides, dilations, groups, 1-D and 3-D windows and the in-place
// 1x1 path. DynamicQuantizeLinear's range and quantization helpers against
// their scalar definitions.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/IntGemm.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/IntConv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

/// The families to try: those this CPU runs.
std::vector<std::string> engines() {
  std::vector<std::string> out;
  for (const char *e : {"baseline", "avx2", "avx512"})
    if (setGemmEngine(e))
      out.push_back(e);
  return out;
}

struct EngineReset {
  std::string saved = gemmEngineName();
  ~EngineReset() {
    setGemmEngine(saved.c_str());
    setThreadCount(1);
  }
};

int32_t valueOf(uint8_t b, bool isSigned) { return isSigned ? static_cast<int8_t>(b) : b; }

std::vector<uint8_t> randomBytes(std::mt19937 &rng, size_t n) {
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<uint8_t> v(n);
  for (auto &b : v)
    b = static_cast<uint8_t>(d(rng));
  return v;
}

/// A zero point in the operand's type.
int32_t randomZero(std::mt19937 &rng, bool isSigned) {
  std::uniform_int_distribution<int> d(isSigned ? -128 : 0, isSigned ? 127 : 255);
  return d(rng);
}

struct Case {
  int64_t M, N, K;
  bool aSigned, bSigned, aPerRow, bPerColumn;
};

TEST(IntGemm, MatchesInt64SumsOnEveryFamilyAndThreadCount) {
  EngineReset reset;
  std::mt19937 rng(7);
  std::vector<Case> cases;
  for (auto [M, N, K] : {std::array<int64_t, 3>{1, 1, 1}, {3, 5, 7}, {8, 32, 4}, {9, 33, 5},
                         {17, 70, 131}, {64, 300, 27}, {5, 1000, 600}})
    for (int signs = 0; signs < 4; ++signs)
      cases.push_back({M, N, K, (signs & 1) != 0, (signs & 2) != 0, signs == 1, signs == 2 || signs == 3});
  for (const Case &c : cases) {
    const auto A = randomBytes(rng, static_cast<size_t>(c.M * c.K));
    const auto B = randomBytes(rng, static_cast<size_t>(c.K * c.N));
    std::vector<int32_t> az(c.aPerRow ? c.M : 1), bz(c.bPerColumn ? c.N : 1);
    for (auto &z : az)
      z = randomZero(rng, c.aSigned);
    for (auto &z : bz)
      z = randomZero(rng, c.bSigned);
    std::vector<int32_t> want(static_cast<size_t>(c.M * c.N));
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t n = 0; n < c.N; ++n) {
        int64_t sum = 0;
        for (int64_t k = 0; k < c.K; ++k)
          sum += int64_t{valueOf(A[m * c.K + k], c.aSigned) - az[c.aPerRow ? m : 0]} *
                 (valueOf(B[k * c.N + n], c.bSigned) - bz[c.bPerColumn ? n : 0]);
        want[m * c.N + n] = static_cast<int32_t>(static_cast<uint32_t>(sum));
      }
    for (const std::string &engine : engines())
      for (int threads : {1, 2}) {
        ASSERT_TRUE(setGemmEngine(engine.c_str()));
        setThreadCount(threads);
        std::vector<int32_t> got(want.size(), -1);
        intGemm(c.M, c.N, c.K, A.data(), c.K, IntOperand{c.aSigned, az.data(), c.aPerRow},
                DenseRows(B.data(), c.N), IntOperand{c.bSigned, bz.data(), c.bPerColumn}, got.data(),
                c.N);
        ASSERT_EQ(got, want) << c.M << "x" << c.N << "x" << c.K << " signs " << c.aSigned << c.bSigned
                             << " on " << engine << " (" << intGemmKernelName() << "), " << threads
                             << " threads";
      }
  }
}

TEST(IntGemm, WrapsModulo2To32LikeAnInt32Accumulator) {
  EngineReset reset;
  // 255 * 255 * 40000 exceeds 2^31: the result is the sum modulo 2^32.
  const int64_t K = 40000;
  std::vector<uint8_t> A(K, 255), B(K, 255);
  const int64_t exact = int64_t{255} * 255 * K;
  for (const std::string &engine : engines()) {
    ASSERT_TRUE(setGemmEngine(engine.c_str()));
    int32_t got = 0;
    intGemm(1, 1, K, A.data(), K, IntOperand{}, DenseRows(B.data(), 1), IntOperand{}, &got, 1);
    EXPECT_EQ(got, static_cast<int32_t>(static_cast<uint32_t>(exact))) << engine;
  }
}

struct ConvCase {
  int64_t N, C, M, group;
  std::vector<int64_t> in, kernel, strides, dilations, padBegin, padEnd;
  bool xSigned, wSigned, perChannel;
};

TEST(IntConv, MatchesDirectSumsWithPaddingStridesDilationsGroups) {
  EngineReset reset;
  std::mt19937 rng(11);
  const std::vector<ConvCase> cases = {
      {1, 3, 8, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, false},
      {2, 4, 6, 2, {7, 5}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}, true, false, true},
      {1, 16, 20, 1, {12, 12}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false, true, true},
      {1, 5, 9, 1, {6, 40}, {1, 1}, {2, 3}, {1, 1}, {0, 0}, {0, 0}, true, true, false},
      {1, 6, 6, 6, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, true},
      {1, 3, 4, 1, {50}, {5}, {2}, {3}, {4}, {3}, false, true, false},
      {1, 2, 3, 1, {4, 5, 6}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 1, 0}, {0, 1, 1}, true, false, true},
  };
  for (const ConvCase &c : cases) {
    nn::Window win;
    win.rank = c.in.size();
    win.in = c.in, win.kernel = c.kernel, win.strides = c.strides, win.dilations = c.dilations;
    win.padBegin = c.padBegin, win.padEnd = c.padEnd;
    for (size_t i = 0; i < win.rank; ++i)
      win.out.push_back((c.in[i] + c.padBegin[i] + c.padEnd[i] - (c.kernel[i] - 1) * c.dilations[i] - 1) /
                            c.strides[i] + 1);
    const int64_t Cg = c.C / c.group, Mg = c.M / c.group, taps = win.kernelSize();
    const int64_t P = win.outSize(), I = win.inSize();
    const auto x = randomBytes(rng, static_cast<size_t>(c.N * c.C * I));
    const auto w = randomBytes(rng, static_cast<size_t>(c.M * Cg * taps));
    std::vector<int32_t> xz{randomZero(rng, c.xSigned)}, wz(c.perChannel ? c.M : 1);
    for (auto &z : wz)
      z = randomZero(rng, c.wSigned);
    // Direct sums over the 3-D form of the window.
    const nn::Window::Dims3 d = win.to3d();
    std::vector<int32_t> want(static_cast<size_t>(c.N * c.M * P));
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t m = 0; m < c.M; ++m) {
        const int64_t g = m / Mg;
        for (int64_t p = 0; p < P; ++p) {
          const int64_t o[3] = {p / (d.out[1] * d.out[2]), p / d.out[2] % d.out[1], p % d.out[2]};
          int64_t sum = 0;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t kk[3] = {t / (d.kernel[1] * d.kernel[2]), t / d.kernel[2] % d.kernel[1],
                                     t % d.kernel[2]};
              int64_t pos = 0;
              bool inside = true;
              for (int i = 0; i < 3; ++i) {
                const int64_t at = o[i] * d.strides[i] - d.padBegin[i] + kk[i] * d.dilations[i];
                inside = inside && at >= 0 && at < d.in[i];
                pos = pos * d.in[i] + at;
              }
              const int32_t xv = inside ? valueOf(x[(n * c.C + g * Cg + ci) * I + pos], c.xSigned) : xz[0];
              sum += int64_t{xv - xz[0]} *
                     (valueOf(w[(m * Cg + ci) * taps + t], c.wSigned) - wz[c.perChannel ? m : 0]);
            }
          want[(n * c.M + m) * P + p] = static_cast<int32_t>(sum);
        }
      }
    for (const std::string &engine : engines())
      for (int threads : {1, 2}) {
        ASSERT_TRUE(setGemmEngine(engine.c_str()));
        setThreadCount(threads);
        std::vector<int32_t> got(want.size(), -1);
        nn::integerConvolution({x.data(), c.xSigned, xz.data(), false},
                               {w.data(), c.wSigned, wz.data(), c.perChannel}, c.N, c.C, c.M, c.group,
                               win, got.data());
        ASSERT_EQ(got, want) << "case in " << c.in.size() << "-D, C " << c.C << ", group " << c.group
                             << " on " << engine << ", " << threads << " threads";
      }
  }
}

TEST(IntGemm, QuantizationHelpersMatchTheirDefinitions) {
  EngineReset reset;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-40.0f, 25.0f);
  std::vector<float> x(1003);
  for (auto &v : x)
    v = d(rng);
  x[17] = std::nanf("");
  x[500] = 0.5f * 0.25f; // a tie after the division below
  for (const std::string &engine : engines()) {
    ASSERT_TRUE(setGemmEngine(engine.c_str()));
    float lo = 0, hi = 0;
    extendRange(x.data(), static_cast<int64_t>(x.size()), lo, hi);
    float wantLo = 0, wantHi = 0;
    for (float v : x)
      if (!std::isnan(v))
        wantLo = std::min(wantLo, v), wantHi = std::max(wantHi, v);
    EXPECT_EQ(lo, wantLo) << engine;
    EXPECT_EQ(hi, wantHi) << engine;
    const float scale = 0.25f, zero = 17.0f;
    std::vector<uint8_t> y(x.size());
    quantizeToUint8(x.data(), static_cast<int64_t>(x.size()), scale, zero, y.data());
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]))
        continue;
      const float want = std::clamp(std::nearbyint(x[i] / scale) + zero, 0.0f, 255.0f);
      ASSERT_EQ(y[i], static_cast<uint8_t>(want)) << engine << " at " << i << ": " << x[i];
    }
  }
}

} // namespace
