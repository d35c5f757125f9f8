//===- tests/runtime/ChannelsLastTest.cpp - Channels-last convolution -----===//
//
// The channels-last forms of pointwise and depthwise convolution
// (runtime/conv/Algorithms.h) against their channels-first forms, bit for
// bit, on the geometries the interpreter gives them (runtime/Layout.h):
// channel counts off the 16-lane blocks, strides, dilations, uneven pads,
// several images, a clamp; on one thread and three. And the pieces around
// them: the image transposes, and global average pooling's sums over
// channels-last pixels (sumFloats' bits).
//
//===----------------------------------------------------------------------===//
#include "runtime/ElementwiseChain.h"
#include "runtime/Layout.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace onnxslim;
using namespace onnxslim::rt;

namespace {

std::vector<float> randomFloats(std::mt19937 &rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = d(rng);
  return v;
}

/// N images of C planes of P, channels last.
std::vector<float> toLast(const std::vector<float> &x, int64_t N, int64_t C, int64_t P) {
  std::vector<float> out(x.size());
  transposeImages(reinterpret_cast<const uint8_t *>(x.data()), reinterpret_cast<uint8_t *>(out.data()),
                  N, C, P, sizeof(float), true);
  return out;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// A 2-D geometry for the conv algorithms (leading depth of one).
nn::Window::Dims3 geometry(int64_t ih, int64_t iw, int64_t k, int64_t stride, int64_t dilation,
                           int64_t padTop, int64_t padLeft, int64_t padBottom, int64_t padRight) {
  nn::Window::Dims3 g;
  const int64_t in[2] = {ih, iw}, pb[2] = {padTop, padLeft}, pe[2] = {padBottom, padRight};
  g.in[0] = g.kernel[0] = g.strides[0] = g.dilations[0] = g.out[0] = 1;
  g.padBegin[0] = g.padEnd[0] = 0;
  for (int i = 0; i < 2; ++i) {
    g.in[i + 1] = in[i];
    g.kernel[i + 1] = k;
    g.strides[i + 1] = stride;
    g.dilations[i + 1] = dilation;
    g.padBegin[i + 1] = pb[i];
    g.padEnd[i + 1] = pe[i];
    g.out[i + 1] = (in[i] + pb[i] + pe[i] - dilation * (k - 1) - 1) / stride + 1;
  }
  return g;
}

} // namespace

TEST(ChannelsLast, ImageTransposesRoundTrip) {
  std::mt19937 rng(1);
  for (auto [N, C, P] : {std::tuple<int64_t, int64_t, int64_t>{1, 3, 5}, {2, 17, 49}, {3, 40, 33}}) {
    const std::vector<float> x = randomFloats(rng, N * C * P);
    const std::vector<float> last = toLast(x, N, C, P);
    EXPECT_EQ(last[static_cast<size_t>(C)], x[1]); // image 0, pixel 1, channel 0
    std::vector<float> back(x.size());
    transposeImages(reinterpret_cast<const uint8_t *>(last.data()),
                    reinterpret_cast<uint8_t *>(back.data()), N, C, P, sizeof(float), false);
    EXPECT_TRUE(sameBits(x, back)) << N << "x" << C << "x" << P;
  }
}

/// Every combination of layouts gives pointwiseTransposed's bits, with and
/// without a bias and a clamp.
TEST(ChannelsLast, PointwiseGivesTheTransposedProductsBits) {
  std::mt19937 rng(2);
  struct Case {
    int64_t N, K, M, P;
  };
  // (1152 -> 192 on 49: a product the GEMM would split only K slice by K
  // slice, summed in two parts of K, each part on its own thread.)
  for (const Case c : {Case{1, 192, 1152, 49}, Case{1, 1152, 192, 49}, Case{2, 40, 72, 49},
                       Case{1, 17, 33, 25}, Case{1, 320, 1280, 9}}) {
    const std::vector<float> x = randomFloats(rng, c.N * c.K * c.P), w = randomFloats(rng, c.M * c.K),
                             b = randomFloats(rng, c.M);
    const KernelContext::OutputClamp relu6{0.0f, 6.0f};
    for (const bool clamps : {false, true})
      for (const bool bias : {false, true}) {
        std::vector<float> ref(static_cast<size_t>(c.N * c.M * c.P));
        const nn::Epilogue<float> e0(clamps ? &relu6 : nullptr, nullptr, ref.data());
        nn::pointwiseTransposed(x.data(), w.data(), bias ? b.data() : nullptr, ref.data(), c.N, c.K,
                                c.M, 1, c.P, e0, nullptr);
        const std::vector<float> xl = toLast(x, c.N, c.K, c.P), refLast = toLast(ref, c.N, c.M, c.P);
        for (const bool xLast : {false, true})
          for (const bool yLast : {false, true})
            for (int threads : {1, 2, 3}) {
              setThreadCount(threads);
              std::vector<float> y(ref.size());
              const nn::Epilogue<float> e(clamps ? &relu6 : nullptr, nullptr, y.data());
              nn::pointwiseChannelsLast(xLast ? xl.data() : x.data(), xLast, w.data(),
                                        bias ? b.data() : nullptr, y.data(), yLast, c.N, c.K, c.M,
                                        c.P, e, nullptr);
              EXPECT_TRUE(sameBits(y, yLast ? refLast : ref))
                  << c.K << "->" << c.M << " on " << c.P << " xLast " << xLast << " yLast " << yLast
                  << " bias " << bias << " clamp " << clamps << " threads " << threads;
            }
      }
  }
  setThreadCount(1);
}

/// depthwiseChannelsLast gives depthwisePadded's bits on AVX-512, where
/// the interpreter uses it, from a channels-last input and from planes;
/// elsewhere it declines every geometry.
TEST(ChannelsLast, DepthwiseGivesThePaddedLoopsBits) {
  struct Case {
    int64_t N, C, ih, iw, k, stride, dilation, pt, pl, pb, pr;
  };
  const std::vector<Case> cases = {
      {1, 1152, 7, 7, 5, 1, 1, 2, 2, 2, 2},  {2, 72, 14, 14, 3, 2, 1, 1, 1, 1, 1},
      {1, 40, 9, 11, 3, 1, 2, 2, 2, 2, 2},   {1, 23, 8, 8, 7, 1, 1, 3, 1, 3, 2},
      {1, 16, 15, 13, 5, 2, 1, 2, 2, 1, 2},  {1, 5, 3, 4, 3, 1, 1, 0, 0, 0, 0}};
  std::mt19937 rng(3);
  for (const Case &c : cases) {
    const nn::Window::Dims3 g = geometry(c.ih, c.iw, c.k, c.stride, c.dilation, c.pt, c.pl, c.pb, c.pr);
    if (!channelsLastAvailable()) {
      EXPECT_FALSE(nn::depthwiseChannelsLastFits(g, c.C, c.C, c.C));
      continue;
    }
    ASSERT_TRUE(nn::depthwiseChannelsLastFits(g, c.C, c.C, c.C));
    const int64_t inS = c.ih * c.iw, outS = g.out[1] * g.out[2];
    const std::vector<float> x = randomFloats(rng, c.N * c.C * inS),
                             w = randomFloats(rng, c.C * c.k * c.k), b = randomFloats(rng, c.C);
    const KernelContext::OutputClamp relu6{0.0f, 6.0f};
    for (const bool clamps : {false, true}) {
      std::vector<float> ref(static_cast<size_t>(c.N * c.C * outS));
      nn::PaddedPlan plan;
      ASSERT_TRUE(nn::planPadded(g, plan));
      nn::depthwisePadded(x.data(), w.data(), b.data(), ref.data(), c.N, c.C, c.C, c.C, g, plan,
                          nn::Epilogue<float>(clamps ? &relu6 : nullptr, nullptr, ref.data()));
      const std::vector<float> xl = toLast(x, c.N, c.C, inS), refLast = toLast(ref, c.N, c.C, outS);
      // From a channels-last input, and from planes.
      for (int threads : {1, 3})
        for (const bool xLast : {true, false}) {
          setThreadCount(threads);
          std::vector<float> y(ref.size());
          nn::depthwiseChannelsLast(xLast ? xl.data() : x.data(), xLast, w.data(), b.data(),
                                    y.data(), c.N, c.C, g,
                                    nn::Epilogue<float>(clamps ? &relu6 : nullptr, nullptr, y.data()));
          EXPECT_TRUE(sameBits(y, refLast))
              << c.C << " channels " << c.ih << "x" << c.iw << " k " << c.k << " stride "
              << c.stride << " clamp " << clamps << " threads " << threads << " input "
              << (xLast ? "channels last" : "planes");
        }
    }
  }
  setThreadCount(1);
}

TEST(ChannelsLast, ChannelSumsAreSumFloatsBits) {
  std::mt19937 rng(4);
  for (auto [P, C] : {std::pair<int64_t, int64_t>{49, 1152}, {7, 3}, {32, 9}, {100, 17}, {1, 8}}) {
    const std::vector<float> x = randomFloats(rng, P * C);
    std::vector<double> sums(static_cast<size_t>(C));
    sumChannelsLast(x.data(), P, C, sums.data());
    std::vector<float> plane(static_cast<size_t>(P));
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t p = 0; p < P; ++p)
        plane[static_cast<size_t>(p)] = x[static_cast<size_t>(p * C + c)];
      const double ref = sumFloats(plane.data(), P);
      EXPECT_EQ(std::memcmp(&sums[static_cast<size_t>(c)], &ref, sizeof ref), 0)
          << "channel " << c << " of " << C << " over " << P;
    }
  }
}

/// Small planes are summed sixteen at a time (sumPlanes: turned channels
/// last, then sumChannelsLast): each plane's sum has sumFloats' bits, for
/// plane counts around the block of 16 and planes around the 32 lanes.
TEST(ChannelsLast, PlaneSumsAreSumFloatsBits) {
  std::mt19937 rng(5);
  for (int64_t planes : {1, 15, 16, 17, 40})
    for (int64_t P : {1, 7, 32, 49, 255, 300}) {
      const std::vector<float> x = randomFloats(rng, planes * P);
      std::vector<double> sums(static_cast<size_t>(planes));
      sumPlanes(x.data(), planes, P, sums.data());
      for (int64_t p = 0; p < planes; ++p) {
        const double ref = sumFloats(x.data() + p * P, P);
        EXPECT_EQ(std::memcmp(&sums[static_cast<size_t>(p)], &ref, sizeof ref), 0)
            << "plane " << p << " of " << planes << " over " << P;
      }
    }
}
