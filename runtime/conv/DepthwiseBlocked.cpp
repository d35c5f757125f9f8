//===- runtime/conv/DepthwiseBlocked.cpp - Depthwise over channel blocks --===//
//
// Float 2-D depthwise convolution (one output channel per input channel) on
// AVX-512, sixteen channels at a time in a channels-last block: the block's
// input planes are transposed into a zero-padded buffer of pixels of 16
// channels, each output pixel is the sum of its taps as full-width
// multiply-adds of a pixel by the tap's 16 weights, and the block of sums is
// transposed back into the output planes. On small planes (7x7, 14x14) a
// row of a plane fills a fraction of a vector and a plane costs more to set
// up than its taps; across channels every lane works, at any stride.
//
// Each output sums its taps in multiTapRow's order (kernel rows, then
// columns, from zero, fused multiply-adds; the padding's taps add zeros),
// then adds the bias and clamps: the bits of depthwisePadded.
//
//===----------------------------------------------------------------------===//
#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/ClampSimd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace onnxslim::rt::nn {
namespace {

/// Widest output row taken, by kernel (bench/conv_notes.md): the 3x3 row
/// kernels of DepthwiseRows.cpp, which read unit-stride rows straight from
/// the input, beat the two transposes from 9 outputs a row on; strided 3x3
/// rows up to 16 outputs (from 28 the stride-2 plane kernel is faster), and
/// dilated ones up to 16, run faster here. Kernels 3, 5
/// or 7 wide at column strides 1 and 2 (rowTile: each input pixel loaded
/// once per kernel row) beat multiTapRow, their only row kernel, at every
/// width up to 256; other kernels (one-sided, dilated) from 16 outputs a
/// row at unit stride, 64 strided or 7x7.
[[maybe_unused]] int64_t maxBlockedWidth(const Window::Dims3 &g) {
  const bool strided = g.strides[1] > 1 || g.strides[2] > 1;
  const bool dilated = g.dilations[1] > 1 || g.dilations[2] > 1;
  const int64_t kw = g.kernel[2];
  if (g.kernel[1] == 3 && kw == 3)
    return strided ? 16 : dilated ? 16 : 8;
  if (!dilated && g.strides[2] <= 2 && (kw == 3 || kw == 5 || kw == 7))
    return 256;
  return g.kernel[1] * kw >= 49 || strided ? 64 : 16;
}

/// Most taps of a kernel taken (a 7x7 kernel; the offsets live on the stack).
constexpr int64_t kMaxBlockedTaps = 49;

/// Most taps of a max pooling taken (13x13, a YOLO SPP window).
constexpr int64_t kMaxBlockedPoolTaps = 169;

/// Largest input plane of a max pooling taken: its padded block, 16
/// channels deep, stays within about a megabyte (the L2 cache).
constexpr int64_t kMaxBlockedPoolPlane = 128 * 128;

/// Output pixels summed at once: their chains of multiply-adds overlap, and
/// each tap's weights are loaded once for all of them.
constexpr int kPixelTile = 8;

#ifdef ONNXSLIM_ISA_X86

using simd::firstLanes;
using simd::transpose16;

/// dst[16 j + c] = src[c * stride + j] for j < len and c < rows; lanes c >=
/// rows are zero. (simd::transposeFloatsAvx512 with a destination stride
/// of 16 leaves those lanes, and called per row of a block ran 15-35%
/// slower here.)
__attribute__((target("avx512f"))) void toBlock(const float *src, int64_t stride, int64_t rows,
                                                int64_t len, float *dst) {
  for (int64_t j0 = 0; j0 < len; j0 += 16) {
    const int64_t n = std::min<int64_t>(16, len - j0);
    const __mmask16 m = firstLanes(n);
    __m512 r[16];
    #pragma GCC unroll 16
    for (int64_t c = 0; c < 16; ++c)
      r[c] = c < rows ? _mm512_maskz_loadu_ps(m, src + c * stride + j0) : _mm512_setzero_ps();
    transpose16(r);
    #pragma GCC unroll 16
    for (int64_t j = 0; j < n; ++j)
      _mm512_storeu_ps(dst + 16 * (j0 + j), r[j]);
  }
}

/// dst[c * stride + j] = src[16 j + c] for j < len and c < rows.
__attribute__((target("avx512f"))) void fromBlock(const float *src, int64_t len, int64_t rows,
                                                  float *dst, int64_t stride) {
  for (int64_t j0 = 0; j0 < len; j0 += 16) {
    const int64_t n = std::min<int64_t>(16, len - j0);
    const __mmask16 m = firstLanes(n);
    __m512 r[16];
    #pragma GCC unroll 16
    for (int64_t j = 0; j < 16; ++j)
      r[j] = j < n ? _mm512_loadu_ps(src + 16 * (j0 + j)) : _mm512_setzero_ps();
    transpose16(r);
    #pragma GCC unroll 16
    for (int64_t c = 0; c < rows; ++c)
      _mm512_mask_storeu_ps(dst + c * stride + j0, m, r[c]);
  }
}

/// V output pixels from `in` on, pixel v's taps at in + 16 S v + off[t]
/// (S: the column stride; 0 when only `step` says it), stored as
/// out[16 v + c]. Convolution (Max false): the sum of the taps times their
/// weights, each from zero over the taps in order, plus the bias, clamped.
/// Max pooling: from -infinity, each tap in order taken where it is greater
/// (NaN never is), as the MaxPool kernel compares.
template <bool Max, int V, int S>
__attribute__((target("avx512f"))) void pixelTile(const float *in, int64_t step,
                                                  const int64_t *off, int64_t taps,
                                                  const float *wt, __m512 bias,
                                                  const StoreClamp *clamp, float *out) {
  const int64_t st = S > 0 ? 16 * S : step;
  __m512 acc[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v)
    acc[v] = Max ? _mm512_set1_ps(-INFINITY) : _mm512_setzero_ps();
  for (int64_t t = 0; t < taps; ++t) {
    const float *p = in + off[t];
    if constexpr (Max) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        const __m512 x = _mm512_loadu_ps(p + v * st);
        acc[v] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, acc[v], _CMP_GT_OQ), acc[v], x);
      }
    } else {
      const __m512 wv = _mm512_loadu_ps(wt + 16 * t);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v)
        acc[v] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(p + v * st), acc[v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v)
    _mm512_storeu_ps(out + 16 * v,
                     Max ? acc[v] : clampAvx512(_mm512_add_ps(acc[v], bias), clamp));
}

using TileFn = void (*)(const float *, int64_t, const int64_t *, int64_t, const float *, __m512,
                        const StoreClamp *, float *);

template <bool Max, int S> TileFn tileFor(int64_t v) {
  switch (v) {
  case 1: return pixelTile<Max, 1, S>;
  case 2: return pixelTile<Max, 2, S>;
  case 3: return pixelTile<Max, 3, S>;
  case 4: return pixelTile<Max, 4, S>;
  case 5: return pixelTile<Max, 5, S>;
  case 6: return pixelTile<Max, 6, S>;
  case 7: return pixelTile<Max, 7, S>;
  default: return pixelTile<Max, 8, S>;
  }
}

template <bool Max> TileFn tileFor(int64_t v, int64_t stride) {
  return stride == 1   ? tileFor<Max, 1>(v)
         : stride == 2 ? tileFor<Max, 2>(v)
                       : tileFor<Max, 0>(v);
}

/// A convolution's V output pixels from `in` on, column stride S, a kernel
/// KW wide at dilation 1, kh rows `pitch` floats apart: pixelTile's sums
/// in its tap order (rows, then columns), each kernel row's (V - 1) S + KW
/// input pixels loaded once for all its taps instead of once per tap.
template <int V, int S, int KW>
__attribute__((target("avx512f"))) void rowTile(const float *in, int64_t pitch, int64_t kh,
                                                const float *wt, __m512 bias,
                                                const StoreClamp *clamp, float *out) {
  constexpr int L = (V - 1) * S + KW;
  __m512 acc[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v)
    acc[v] = _mm512_setzero_ps();
  for (int64_t ky = 0; ky < kh; ++ky) {
    const float *p = in + ky * pitch;
    __m512 x[L];
#pragma GCC unroll 32
    for (int i = 0; i < L; ++i)
      x[i] = _mm512_loadu_ps(p + 16 * i);
#pragma GCC unroll 8
    for (int kx = 0; kx < KW; ++kx) {
      const __m512 wv = _mm512_loadu_ps(wt + 16 * (ky * KW + kx));
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v)
        acc[v] = _mm512_fmadd_ps(wv, x[v * S + kx], acc[v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v)
    _mm512_storeu_ps(out + 16 * v, clampAvx512(_mm512_add_ps(acc[v], bias), clamp));
}

using RowTileFn = void (*)(const float *, int64_t, int64_t, const float *, __m512,
                           const StoreClamp *, float *);

template <int S, int KW> RowTileFn rowTileFor(int64_t v) {
  switch (v) {
  case 1: return rowTile<1, S, KW>;
  case 2: return rowTile<2, S, KW>;
  case 3: return rowTile<3, S, KW>;
  case 4: return rowTile<4, S, KW>;
  case 5: return rowTile<5, S, KW>;
  case 6: return rowTile<6, S, KW>;
  case 7: return rowTile<7, S, KW>;
  default: return rowTile<8, S, KW>;
  }
}

/// The row tile for v pixels of a kernel kw wide at column stride sx
/// (strides 1 and 2, kernels 3, 5 and 7 wide), or null.
RowTileFn rowTileFor(int64_t v, int64_t sx, int64_t kw) {
  if (sx == 1)
    return kw == 3 ? rowTileFor<1, 3>(v) : kw == 5 ? rowTileFor<1, 5>(v)
                                         : kw == 7 ? rowTileFor<1, 7>(v) : nullptr;
  if (sx == 2)
    return kw == 3 ? rowTileFor<2, 3>(v) : kw == 5 ? rowTileFor<2, 5>(v)
                                         : kw == 7 ? rowTileFor<2, 7>(v) : nullptr;
  return nullptr;
}

/// The tiles that compute the rows of one padded block.
struct BlockTiles {
  TileFn full = nullptr, tail = nullptr;
  RowTileFn rowFull = nullptr, rowTail = nullptr; ///< convolution at dilation 1
  int64_t off[kMaxBlockedPoolTaps];
  int64_t taps = 0, pitch = 0;

  template <bool Max> void plan(const Window::Dims3 &g, int64_t pw) {
    const int64_t kh = g.kernel[1], kw = g.kernel[2], ow = g.out[2], sx = g.strides[2];
    taps = kh * kw;
    pitch = pw * 16;
    for (int64_t ky = 0, t = 0; ky < kh; ++ky)
      for (int64_t kx = 0; kx < kw; ++kx, ++t)
        off[t] = (ky * g.dilations[1] * pw + kx * g.dilations[2]) * 16;
    full = tileFor<Max>(kPixelTile, sx);
    tail = tileFor<Max>(ow % kPixelTile, sx);
    if (!Max && g.dilations[1] == 1 && g.dilations[2] == 1) {
      rowFull = rowTileFor(kPixelTile, sx, kw);
      rowTail = rowTileFor(ow % kPixelTile, sx, kw);
    }
  }

  /// Output row oy of the block at `pad` into out[16 ox + c].
  __attribute__((target("avx512f"))) void row(const float *pad, int64_t oy,
                                              const Window::Dims3 &g, const float *wt, __m512 b,
                                              const StoreClamp *clamp, float *out) const {
    const int64_t ow = g.out[2], sx = g.strides[2], kh = g.kernel[1];
    const float *r = pad + oy * g.strides[1] * pitch;
    int64_t ox = 0;
    if (rowFull) {
      for (; ox + kPixelTile <= ow; ox += kPixelTile)
        rowFull(r + ox * sx * 16, pitch, kh, wt, b, clamp, out + ox * 16);
      if (ox < ow)
        rowTail(r + ox * sx * 16, pitch, kh, wt, b, clamp, out + ox * 16);
      return;
    }
    for (; ox + kPixelTile <= ow; ox += kPixelTile)
      full(r + ox * sx * 16, sx * 16, off, taps, wt, b, clamp, out + ox * 16);
    if (ox < ow)
      tail(r + ox * sx * 16, sx * 16, off, taps, wt, b, clamp, out + ox * 16);
  }
};

/// The geometry of a block of 2-D planes padded for a window: the padded
/// rows and columns some output reads (rows past them are never read,
/// however large the end padding).
struct PaddedBlock {
  int64_t ih, iw, oh, ow, kh, kw, taps, pt, pl, sy, sx, ph, pw, inS, outS;
  explicit PaddedBlock(const Window::Dims3 &g)
      : ih(g.in[1]), iw(g.in[2]), oh(g.out[1]), ow(g.out[2]), kh(g.kernel[1]), kw(g.kernel[2]),
        taps(kh * kw), pt(g.padBegin[1]), pl(g.padBegin[2]), sy(g.strides[1]), sx(g.strides[2]),
        ph((oh - 1) * sy + (kh - 1) * g.dilations[1] + 1),
        pw((ow - 1) * sx + (kw - 1) * g.dilations[2] + 1), inS(ih * iw), outS(oh * ow) {}
};

/// Channels [c0, c0 + cn) of image n: the padded block (zeros, or
/// -infinity for max pooling, which no input loses to), the weights, the
/// outputs, and the planes written back (then the convolution's epilogue,
/// or the pooling's empty windows).
template <bool Max>
__attribute__((target("avx512f"))) void
runBlock(const float *x, const float *w, const float *bias, float *y, int64_t n, int64_t C,
         int64_t c0, int64_t cn, const Window::Dims3 &g, const Epilogue<float> *epilogue,
         const StoreClamp *clamp) {
  const PaddedBlock k(g);
  const int64_t ih = k.ih, iw = k.iw, oh = k.oh, ow = k.ow, kh = k.kh, taps = k.taps;
  const int64_t pt = k.pt, pl = k.pl, sy = k.sy, ph = k.ph, pw = k.pw, inS = k.inS, outS = k.outS;
  float *pad = scratch<float, 7>(ph * pw * 16);
  float *wt = Max ? nullptr : scratch<float, 8>(taps * 16);
  float *outs = scratch<float, 9>(outS * 16);
  const __m512 fill = Max ? _mm512_set1_ps(-INFINITY) : _mm512_setzero_ps();
  for (int64_t i = 0; i < ph * pw * 16; i += 16)
    _mm512_storeu_ps(pad + i, fill);
  const float *plane = x + (n * C + c0) * inS;
  const int64_t x0 = std::max<int64_t>(0, -pl), x1 = std::min(iw, pw - pl);
  for (int64_t iy = std::max<int64_t>(0, -pt); iy < std::min(ih, ph - pt); ++iy)
    if (x1 > x0)
      toBlock(plane + iy * iw + x0, inS, cn, x1 - x0, pad + ((iy + pt) * pw + pl + x0) * 16);
  if (!Max)
    toBlock(w + c0 * taps, taps, cn, taps, wt);
  BlockTiles tiles;
  tiles.plan<Max>(g, pw);
  const __m512 b = bias ? _mm512_maskz_loadu_ps(firstLanes(cn), bias + c0) : _mm512_setzero_ps();
  for (int64_t oy = 0; oy < oh; ++oy)
    tiles.row(pad, oy, g, wt, b, clamp, outs + oy * ow * 16);
  float *yo = y + (n * C + c0) * outS;
  fromBlock(outs, outS, cn, yo, outS);
  if constexpr (Max) {
    // Outputs whose window holds no input (ceil_mode's last ones, in the
    // padding only) are the lowest float, as the per-output loop gives.
    auto empty = [](int64_t o, int64_t s, int64_t d, int64_t k, int64_t p, int64_t in) {
      for (int64_t j = 0; j < k; ++j)
        if (o * s + j * d - p >= 0 && o * s + j * d - p < in)
          return false;
      return true;
    };
    constexpr float kLowest = std::numeric_limits<float>::lowest();
    for (int64_t oy = 0; oy < oh; ++oy) {
      const bool emptyRow = empty(oy, sy, g.dilations[1], kh, pt, ih);
      for (int64_t ox = 0; ox < ow; ++ox)
        if (emptyRow || empty(ox, k.sx, g.dilations[2], k.kw, pl, iw))
          for (int64_t c = 0; c < cn; ++c)
            yo[c * outS + oy * ow + ox] = kLowest;
    }
  } else if (!clamp) {
    for (int64_t c = 0; c < cn; ++c)
      (*epilogue)(yo + c * outS, outS);
  }
}

/// Channels [c0, c0 + cn) of image n of a convolution with a channels-last
/// output: the padded block is filled with 16-channel pixels read straight
/// from the input's pixels (x[(n * inS + p) * C + c]) when xLast, else
/// transposed from its planes (as runBlock's); the outputs are stored to
/// y's pixels the same way. Sums and clamp as runBlock's.
__attribute__((target("avx512f"))) void runBlockLast(const float *x, bool xLast, const float *w,
                                                     const float *bias, float *y, int64_t n,
                                                     int64_t C, int64_t c0, int64_t cn,
                                                     const Window::Dims3 &g,
                                                     const StoreClamp *clamp) {
  const PaddedBlock k(g);
  const int64_t ih = k.ih, iw = k.iw, oh = k.oh, ow = k.ow, taps = k.taps;
  const int64_t pt = k.pt, pl = k.pl, ph = k.ph, pw = k.pw, inS = k.inS, outS = k.outS;
  float *pad = scratch<float, 7>(ph * pw * 16);
  float *wt = scratch<float, 8>(taps * 16);
  float *outs = scratch<float, 9>(ow * 16);
  const __mmask16 m = firstLanes(cn);
  const int64_t x0 = std::max<int64_t>(0, -pl), x1 = std::min(iw, pw - pl);
  const int64_t y0 = std::max<int64_t>(0, -pt), y1 = std::min(ih, ph - pt);
  if (!xLast) {
    for (int64_t i = 0; i < ph * pw * 16; i += 16)
      _mm512_storeu_ps(pad + i, _mm512_setzero_ps());
    const float *plane = x + (n * C + c0) * inS;
    for (int64_t iy = y0; iy < y1; ++iy)
      if (x1 > x0)
        toBlock(plane + iy * iw + x0, inS, cn, x1 - x0, pad + ((iy + pt) * pw + pl + x0) * 16);
  }
  // Zeros where no input row or column lands, the pixels elsewhere.
  for (int64_t r = 0; r < ph && xLast; ++r) {
    float *row = pad + r * pw * 16;
    const int64_t iy = r - pt;
    if (iy < y0 || iy >= y1 || x1 <= x0) {
      for (int64_t j = 0; j < pw; ++j)
        _mm512_storeu_ps(row + 16 * j, _mm512_setzero_ps());
      continue;
    }
    for (int64_t j = 0; j < pl + x0; ++j)
      _mm512_storeu_ps(row + 16 * j, _mm512_setzero_ps());
    const float *src = x + (n * inS + iy * iw) * C + c0;
    for (int64_t ix = x0; ix < x1; ++ix)
      _mm512_storeu_ps(row + 16 * (ix + pl), _mm512_maskz_loadu_ps(m, src + ix * C));
    for (int64_t j = x1 + pl; j < pw; ++j)
      _mm512_storeu_ps(row + 16 * j, _mm512_setzero_ps());
  }
  toBlock(w + c0 * taps, taps, cn, taps, wt);
  BlockTiles tiles;
  tiles.plan<false>(g, pw);
  const __m512 b = bias ? _mm512_maskz_loadu_ps(m, bias + c0) : _mm512_setzero_ps();
  for (int64_t oy = 0; oy < oh; ++oy) {
    tiles.row(pad, oy, g, wt, b, clamp, outs);
    float *dst = y + (n * outS + oy * ow) * C + c0;
    for (int64_t j = 0; j < ow; ++j)
      _mm512_mask_storeu_ps(dst + j * C, m, _mm512_loadu_ps(outs + 16 * j));
  }
}

#endif

} // namespace

bool depthwiseBlockedFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group) {
#ifdef ONNXSLIM_ISA_X86
  return simd::currentIsa().load() == simd::Isa::Avx512 && Cin == group && M == group &&
         g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.out[2] <= maxBlockedWidth(g) &&
         g.kernel[1] * g.kernel[2] <= kMaxBlockedTaps;
#else
  (void)g, (void)Cin, (void)M, (void)group;
  return false;
#endif
}

bool maxPoolBlockedFits(const Window::Dims3 &g) {
#ifdef ONNXSLIM_ISA_X86
  return simd::currentIsa().load() == simd::Isa::Avx512 && g.in[0] == 1 && g.kernel[0] == 1 &&
         g.out[0] == 1 && g.kernel[1] * g.kernel[2] <= kMaxBlockedPoolTaps &&
         g.in[1] * g.in[2] <= kMaxBlockedPoolPlane;
#else
  (void)g;
  return false;
#endif
}

void maxPoolBlocked(const float *x, float *y, int64_t planes, const Window::Dims3 &g,
                    bool split) {
#ifdef ONNXSLIM_ISA_X86
  const int64_t blocks = (planes + 15) / 16;
  parallelForIf(split && blocks > 1, blocks, [&](int64_t b) {
    runBlock<true>(x, nullptr, nullptr, y, 0, planes, 16 * b,
                   std::min<int64_t>(16, planes - 16 * b), g, nullptr, nullptr);
  });
#else
  (void)x, (void)y, (void)planes, (void)g, (void)split;
#endif
}

bool depthwiseChannelsLastFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group) {
#ifdef ONNXSLIM_ISA_X86
  return simd::currentIsa().load() == simd::Isa::Avx512 && Cin == group && M == group &&
         g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 &&
         g.kernel[1] * g.kernel[2] <= kMaxBlockedTaps;
#else
  (void)g, (void)Cin, (void)M, (void)group;
  return false;
#endif
}

void depthwiseChannelsLast(const float *x, bool xLast, const float *w, const float *bias,
                           float *y, int64_t N, int64_t C, const Window::Dims3 &g,
                           const Epilogue<float> &epilogue) {
#ifdef ONNXSLIM_ISA_X86
  const bool split =
      depthwiseWorthSplitting(N * C * g.out[1] * g.out[2] * g.kernel[1] * g.kernel[2]);
  const StoreClamp sc{epilogue.lo, epilogue.hi};
  const StoreClamp *clamp = epilogue.clamps ? &sc : nullptr;
  const int64_t blocks = (C + 15) / 16;
  parallelForIf(split && N * blocks > 1, N * blocks, [&](int64_t task) {
    const int64_t n = task / blocks, c0 = task % blocks * 16;
    runBlockLast(x, xLast, w, bias, y, n, C, c0, std::min<int64_t>(16, C - c0), g, clamp);
  });
#else
  (void)x, (void)w, (void)bias, (void)y, (void)N, (void)C, (void)g, (void)epilogue;
#endif
}

void depthwiseBlocked(const float *x, const float *w, const float *bias, float *y, int64_t N,
                      int64_t C, const Window::Dims3 &g, const Epilogue<float> &epilogue,
                      bool split) {
#ifdef ONNXSLIM_ISA_X86
  // A clamp alone is applied as the sums are stored; after a fused Add, the
  // epilogue does both over each plane.
  const StoreClamp sc{epilogue.lo, epilogue.hi};
  const StoreClamp *clamp = epilogue.clamps && !epilogue.addend ? &sc : nullptr;
  const int64_t blocks = (C + 15) / 16;
  parallelForIf(split && N * blocks > 1, N * blocks, [&](int64_t task) {
    const int64_t n = task / blocks, c0 = task % blocks * 16;
    runBlock<false>(x, w, bias, y, n, C, c0, std::min<int64_t>(16, C - c0), g, &epilogue,
                    clamp);
  });
#else
  (void)x, (void)w, (void)bias, (void)y, (void)N, (void)C, (void)g, (void)epilogue;
#endif
}

} // namespace onnxslim::rt::nn
