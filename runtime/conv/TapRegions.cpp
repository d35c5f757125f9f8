//===- runtime/conv/TapRegions.cpp - A product per tap over its live outputs ===//
//
// A float 2-D convolution whose taps mostly read padding: an atrous
// convolution on a small plane (DeepLab's ASPP, 3x3 at dilation 12 on
// 14x14 planes: of the 196 outputs, a corner tap reads input for 4), or a
// kernel nearly as large as the plane. The other algorithms multiply every
// tap by every output, padding included; here each tap is one product over
// just the outputs whose receptive field it lands inside, a rectangle: its
// input positions gathered channel by channel (C x n), multiplied as the
// GEMM's transposed A by the tap's filters kept packed as B (C x M), and
// the n x M sums added into the output planes. Outputs sum their taps in
// kernel order from zero, then the bias, then the epilogue: operations that
// do not depend on the thread count (the GEMM cuts its own work).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/conv/Algorithms.h"

#include <algorithm>
#include <cstring>

namespace onnxslim::rt::nn {
namespace {

/// Per kernel tap along one dim: the outputs [lo, hi) it reads input for.
void tapOutputs(const Window::Dims3 &g, size_t dim, int64_t k, int64_t &lo, int64_t &hi) {
  validRange(k * g.dilations[dim] - g.padBegin[dim], g.strides[dim], g.in[dim], g.out[dim], lo,
             hi);
}

/// Tap-output pairs that read input along one dim.
int64_t liveAlong(const Window::Dims3 &g, size_t dim) {
  int64_t live = 0;
  for (int64_t k = 0; k < g.kernel[dim]; ++k) {
    int64_t lo = 0, hi = 0;
    tapOutputs(g, dim, k, lo, hi);
    live += hi - lo;
  }
  return live;
}

/// The filters as one packed-B matrix per tap (tap t: C x M, row c the
/// weights of input channel c), kept in `kept` when given.
const float *tapFilters(const float *w, int64_t M, int64_t C, int64_t taps, PackedFilters *kept) {
  const int64_t width = gemmPanelWidth<float>(), panels = (M + width - 1) / width;
  const int64_t size = panels * C * width;
  if (kept && kept->holds(w, 1, M, C * taps, true, taps * size))
    return kept->data.data();
  float *packed = kept ? kept->data.data() : scratch<float, 14>(taps * size);
  for (int64_t t = 0; t < taps; ++t)
    packFilterColumns(w + t, C * taps, taps, M, C, packed + t * size);
  return packed;
}

} // namespace

bool tapRegionsFit(const Window::Dims3 &g, int64_t group) {
  if (group != 1 || g.in[0] != 1 || g.kernel[0] != 1 || g.kernel[1] * g.kernel[2] < 2)
    return false;
  const int64_t all = g.out[1] * g.out[2] * g.kernel[1] * g.kernel[2];
  return 2 * liveAlong(g, 1) * liveAlong(g, 2) <= all;
}

void convTapRegions(const float *x, const float *w, const float *bias, float *y, int64_t N,
                    int64_t Cin, int64_t M, const Window::Dims3 &g,
                    const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t kh = g.kernel[1], kw = g.kernel[2], taps = kh * kw;
  const int64_t inS = ih * iw, outS = oh * ow;
  const int64_t width = gemmPanelWidth<float>();
  const int64_t size = (M + width - 1) / width * Cin * width;
  const float *filters = tapFilters(w, M, Cin, taps, kept);
  float *cols = scratch<float, 15>(Cin * outS);
  float *sums = scratch<float, 16>(outS * M);
  for (int64_t n = 0; n < N; ++n) {
    float *yn = y + n * M * outS;
    std::fill(yn, yn + M * outS, 0.0f);
    for (int64_t ky = 0; ky < kh; ++ky)
      for (int64_t kx = 0; kx < kw; ++kx) {
        int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
        tapOutputs(g, 1, ky, y0, y1);
        tapOutputs(g, 2, kx, x0, x1);
        const int64_t rh = y1 - y0, rw = x1 - x0, count = rh * rw;
        if (count == 0)
          continue;
        // Input row of output row oy, and column of output column ox.
        const int64_t rowOff = ky * g.dilations[1] - g.padBegin[1];
        const int64_t colOff = kx * g.dilations[2] - g.padBegin[2];
        for (int64_t c = 0; c < Cin; ++c) {
          const float *plane = x + (n * Cin + c) * inS;
          float *dst = cols + c * count;
          for (int64_t oy = y0; oy < y1; ++oy, dst += rw) {
            const float *src = plane + (oy * g.strides[1] + rowOff) * iw + colOff;
            if (g.strides[2] == 1)
              std::memcpy(dst, src + x0, sizeof(float) * static_cast<size_t>(rw));
            else
              for (int64_t ox = x0; ox < x1; ++ox)
                dst[ox - x0] = src[ox * g.strides[2]];
          }
        }
        gemmPackedB(true, count, M, Cin, 1.0f, cols, count, filters + (ky * kw + kx) * size,
                    width, 0.0f, sums, M);
        // sums is positions x channels: sixteen channels at a time, so that
        // each of its rows is read once.
        for (int64_t m0 = 0; m0 < M; m0 += 16) {
          const int64_t mn = std::min<int64_t>(16, M - m0);
          for (int64_t r = 0; r < count; ++r) {
            const float *src = sums + r * M + m0;
            float *dst = yn + m0 * outS + (y0 + r / rw) * ow + x0 + r % rw;
            for (int64_t j = 0; j < mn; ++j)
              dst[j * outS] += src[j];
          }
        }
      }
    for (int64_t m = 0; m < M; ++m) {
      float *ym = yn + m * outS;
      if (bias)
        for (int64_t i = 0; i < outS; ++i)
          ym[i] += bias[m];
      if (epilogue.on())
        epilogue(ym, outS);
    }
  }
}

} // namespace onnxslim::rt::nn
