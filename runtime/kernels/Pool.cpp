//===- runtime/kernels/Pool.cpp - Pooling kernels -------------------------===//
//
// MaxPool (with the Indices output, storage_order, dilations, ceil_mode;
// int8/uint8 at opset 12), AveragePool (count_include_pad, ceil_mode,
// dilations at 19; AveragePool-1 excludes padding), LpPool (p as float in
// version 1, int after), GlobalAveragePool, GlobalMaxPool, GlobalLpPool and
// MaxUnpool, over 1-D, 2-D and 3-D inputs.
//
// For every output position the range of kernel taps that land inside the
// input is precomputed per spatial dim, so the inner loops never test bounds.
// With count_include_pad the divisor counts the taps inside the padded
// extent [-pad_begin, in + pad_end), as ONNX Runtime does.
//
//===----------------------------------------------------------------------===//
#include "runtime/ElementwiseChain.h"
#include "runtime/Kernel.h"
#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace onnxslim::rt {
namespace {

using namespace nn;

/// Per spatial dim and output index: the kernel taps [lo, hi) inside the
/// input, and the number of taps inside the padded extent.
struct TapRanges {
  std::array<std::vector<int64_t>, 3> lo, hi, padded;
};

TapRanges tapRanges(const Window::Dims3 &g) {
  TapRanges t;
  for (size_t i = 0; i < 3; ++i) {
    size_t n = static_cast<size_t>(g.out[i]);
    t.lo[i].resize(n);
    t.hi[i].resize(n);
    t.padded[i].resize(n);
    for (int64_t o = 0; o < g.out[i]; ++o) {
      int64_t base = o * g.strides[i] - g.padBegin[i];
      int64_t lo = 0, hi = 0, count = 0;
      for (int64_t k = 0; k < g.kernel[i]; ++k) {
        int64_t pos = base + k * g.dilations[i];
        if (pos < 0)
          lo = k + 1;
        if (pos < g.in[i])
          hi = k + 1;
        if (pos >= -g.padBegin[i] && pos < g.in[i] + g.padEnd[i])
          ++count;
      }
      t.lo[i][o] = std::min(lo, hi);
      t.hi[i][o] = hi;
      t.padded[i][o] = count;
    }
  }
  return t;
}

/// Output positions [lo, hi) along the innermost dim for which input
/// index ox * stride + offset lies in [0, extent).
void validRange(int64_t offset, int64_t stride, int64_t extent, int64_t count, int64_t &lo,
                int64_t &hi) {
  auto ceilDiv = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  lo = offset >= 0 ? 0 : ceilDiv(-offset, stride);
  hi = extent - offset <= 0 ? 0 : ceilDiv(extent - offset, stride);
  lo = std::min(lo, count);
  hi = std::clamp(hi, lo, count);
}

/// y[i] = src[2i] > y[i] ? src[2i] : y[i] for i < n (max pooling's combine
/// step at stride 2; AVX-512 or SSE for float).
template <typename C> inline void maxEven(const C *src, int64_t n, C *y) {
  if constexpr (std::is_same_v<C, float>) {
    maxEvenFloats(src, n, y);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    y[i] = src[2 * i] > y[i] ? src[2 * i] : y[i];
}

/// Max or sum pooling's combine step at unit stride, for i < n:
/// y[i] = src[i] > y[i] ? src[i] : y[i] (Max) or y[i] += src[i]. Float
/// runs in SIMD batches with the same comparison (NaN keeps y) or addition
/// per element, so results equal the scalar loop's. A tap's outputs are
/// independent of each other, so this is the per-output loop's order too.
/// (MaxPool 3x3 over mlsd_tiny's 160x160 plane spent 7 ns an output in the
/// scalar loop, which the compiler does not vectorize: src and y may alias.)
template <typename C, bool IsMax> inline void combineRow(const C *src, int64_t n, C *y) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float>) {
    using B = xsimd::batch<float>;
    constexpr int64_t kLanes = static_cast<int64_t>(B::size);
    for (; i + kLanes <= n; i += kLanes) {
      const B v = B::load_unaligned(src + i), d = B::load_unaligned(y + i);
      if constexpr (IsMax)
        xsimd::select(v > d, v, d).store_unaligned(y + i);
      else
        (d + v).store_unaligned(y + i);
    }
  }
  for (; i < n; ++i) {
    if constexpr (IsMax)
      y[i] = src[i] > y[i] ? src[i] : y[i];
    else
      y[i] += src[i];
  }
}

/// Input elements of a pooling from which it splits its output rows over
/// the threads (256 KB of floats, kParallelMinElements: as for depthwise
/// convolutions, its input was usually written by both cores, and the next
/// node reads its output on both).
constexpr int64_t kPoolSplitElements = kParallelMinElements;

/// Max or sum pooling computed a whole output row at a time: for every
/// kernel tap, one tight loop over the output positions it reaches. Each
/// output still combines its taps in (kz, ky, kx) order, so results equal
/// the per-output loop's. Max starts from -infinity (floats) and outputs
/// whose window holds no input get the type's lowest value, as the
/// per-output loop gives. Large poolings run bands of output rows (across
/// all planes) as tasks, each row the same operations on any thread.
template <typename C, bool IsMax>
void rowwisePool(const C *x, C *y, int64_t planes, const Window::Dims3 &g, const TapRanges &t) {
  const int64_t inS = g.in[0] * g.in[1] * g.in[2], outS = g.out[0] * g.out[1] * g.out[2];
  const int64_t ow = g.out[2], sx = g.strides[2], gridRows = g.out[0] * g.out[1];
  std::vector<int64_t> los(static_cast<size_t>(g.kernel[2])), his(los.size()), offs(los.size());
  for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
    offs[kx] = kx * g.dilations[2] - g.padBegin[2];
    validRange(offs[kx], sx, g.in[2], ow, los[kx], his[kx]);
  }
  std::vector<int64_t> emptyColumns; // outputs whose window misses the input's columns
  for (int64_t ox = 0; ox < ow; ++ox)
    if (t.hi[2][ox] <= t.lo[2][ox])
      emptyColumns.push_back(ox);
  const C start = IsMax ? (std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                                 : std::numeric_limits<C>::lowest())
                        : C(0);
  // Grid rows [r0, r1) of every plane.
  auto rows = [&](int64_t r0, int64_t r1) {
    for (int64_t p = 0; p < planes; ++p) {
      const C *xp = x + p * inS;
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t oz = r / g.out[1], oy = r % g.out[1];
        C *yrow = y + p * outS + r * ow;
        std::fill(yrow, yrow + ow, start);
        int64_t z0 = oz * g.strides[0] - g.padBegin[0];
        int64_t y0 = oy * g.strides[1] - g.padBegin[1];
        for (int64_t kz = t.lo[0][oz]; kz < t.hi[0][oz]; ++kz)
          for (int64_t ky = t.lo[1][oy]; ky < t.hi[1][oy]; ++ky) {
            const C *row =
                xp + ((z0 + kz * g.dilations[0]) * g.in[1] + y0 + ky * g.dilations[1]) * g.in[2];
            for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
              const C *src = row + offs[kx];
              if constexpr (IsMax)
                if (sx == 2) {
                  maxEven(src + 2 * los[kx], his[kx] - los[kx], yrow + los[kx]);
                  continue;
                }
              if (sx == 1) {
                combineRow<C, IsMax>(src + los[kx], his[kx] - los[kx], yrow + los[kx]);
                continue;
              }
              for (int64_t ox = los[kx]; ox < his[kx]; ++ox) {
                C v = src[ox * sx];
                if constexpr (IsMax)
                  yrow[ox] = v > yrow[ox] ? v : yrow[ox];
                else
                  yrow[ox] += v;
              }
            }
          }
        if constexpr (IsMax) {
          if (t.hi[0][oz] <= t.lo[0][oz] || t.hi[1][oy] <= t.lo[1][oy])
            std::fill(yrow, yrow + ow, std::numeric_limits<C>::lowest());
          for (int64_t ox : emptyColumns)
            yrow[ox] = std::numeric_limits<C>::lowest();
        }
      }
    }
  };
  parallelRowBands(gridRows, planes * inS >= kPoolSplitElements ? gridRows : 1, rows);
}

#ifdef ONNXSLIM_ISA_X86
/// Whether maxPoolSeparable takes a max pooling: AVX-512 in use, a 2-D (or
/// 1-D) window, a column stride of 1 or 2.
bool maxPoolSeparableFits(const Window::Dims3 &g) {
  return simd::currentIsa().load() == simd::Isa::Avx512 && g.in[0] == 1 && g.kernel[0] == 1 &&
         g.out[0] == 1 && (g.strides[2] == 1 || g.strides[2] == 2);
}

/// Whether maxPoolSeparable beats maxPoolBlocked where both fit: on rows of
/// at least 32 outputs (16 for windows 3 wide at a column stride of 2,
/// whose first pass reads the input rows directly), or windows of at least
/// 25 taps (which the blocked form visits one by one for every output).
/// Figures: bench/conv_notes.md ("Max pooling as two passes", and the
/// section of 2026-11-29, second session).
bool separableBeatsBlocked(const Window::Dims3 &g) {
  const bool direct = g.kernel[2] == 3 && g.strides[2] == 2 && g.dilations[2] == 1 &&
                      (g.padBegin[2] == 0 || g.padBegin[2] == 1);
  return g.out[2] >= (direct ? 16 : 32) || g.kernel[1] * g.kernel[2] >= 25;
}

__attribute__((target("avx512f"), always_inline)) inline __mmask16 firstLanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

/// The first pass of maxPoolSeparablePlane for a window 3 wide at a column
/// stride of 2 and dilation 1, a left padding PL of 0 or 1: h[ox] for ox <
/// n (a multiple of 16) straight from the input row (no padded copy), the
/// row's columns loaded in pairs of vectors at even positions (-infinity
/// past the row) and split into even and odd columns by two permutes; the
/// column before (PL = 1) or after (PL = 0) a step is shifted in by a lane.
/// The taps in order, each taken where strictly greater: the same bits.
/// (The padded copy it replaces was read back right after memcpy wrote it,
/// and its taps' loop branched per tap.)
/// row[c ...] for 16 lanes, -infinity past iw.
__attribute__((target("avx512f"))) inline __m512 loadOrNegInf(const float *row, int64_t c,
                                                              int64_t iw) {
  if (c + 16 <= iw)
    return _mm512_loadu_ps(row + c);
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  return c < iw ? _mm512_mask_loadu_ps(ninf, firstLanes(iw - c), row + c) : ninf;
}

template <int PL>
__attribute__((target("avx512f"))) void maxRow3Stride2(const float *row, int64_t iw, int64_t n,
                                                       float *h) {
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  for (int64_t ox = 0; ox < n; ox += 16) {
    const int64_t c = 2 * ox;
    const __m512 a = loadOrNegInf(row, c, iw), b = loadOrNegInf(row, c + 16, iw);
    const __m512 e = _mm512_permutex2var_ps(a, evens, b), o = _mm512_permutex2var_ps(a, odds, b);
    __m512 t0, t1, t2;
    if constexpr (PL == 1) {
      const __m512 before = c >= 1 && c - 1 < iw ? _mm512_set1_ps(row[c - 1]) : ninf;
      t0 = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xFFFF, _mm512_castps_si512(o),
                                                         _mm512_castps_si512(before), 15));
      t1 = e;
      t2 = o;
    } else {
      const __m512 after = c + 32 < iw ? _mm512_set1_ps(row[c + 32]) : ninf;
      t0 = e;
      t1 = o;
      t2 = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xFFFF, _mm512_castps_si512(after),
                                                         _mm512_castps_si512(e), 1));
    }
    __m512 m = _mm512_maskz_max_ps(0xFFFF, t0, ninf);
    m = _mm512_maskz_max_ps(0xFFFF, t1, m);
    m = _mm512_maskz_max_ps(0xFFFF, t2, m);
    _mm512_storeu_ps(h + ox, m);
  }
}

/// Float max pooling as two passes over a plane, with AVX-512: first every
/// input row's maxima over the window's columns (h[ox] over the taps kx in
/// order), then each output row's maxima over the window's rows of those
/// (ky in order). Each pass takes a tap where it is strictly greater
/// (VMAXPS with the running maximum second: NaN never, and of equal values
/// the first), so an output is the first of its window's greatest inputs in
/// (ky, kx) order: the per-output loop's value, bit for bit. A row is
/// padded with -infinity, which no tap loses to; outputs whose window holds
/// no input are then set to the lowest float, as that loop gives. At a
/// column stride of 2, the padded row is split into its even and odd
/// columns first, so that every tap is a unit-stride run. A 3x3 window at
/// stride 2 then costs about three vector maxima and two permutes per 16
/// outputs, where the row-wise loop made nine strided passes over every
/// output row.
__attribute__((target("avx512f"))) void maxPoolSeparablePlane(const float *xp, float *yp,
                                                              const Window::Dims3 &g,
                                                              const TapRanges &t,
                                                              const std::vector<int64_t> &emptyColumns) {
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t kw = g.kernel[2], sx = g.strides[2], dx = g.dilations[2], pl = g.padBegin[2];
  const int64_t sy = g.strides[1], dy = g.dilations[1], pt = g.padBegin[1];
  const int64_t pitch = (ow + 15) / 16 * 16; // floats per row of maxima
  // Padded columns some output reads, and the buffers' lengths with room
  // for whole vectors past them (-infinity there).
  const int64_t pw = (ow - 1) * sx + (kw - 1) * dx + 1;
  const int64_t padLen = (pw + 31) / 32 * 32 + 32, halfLen = padLen / 2 + pitch + 16;
  float *rows = scratch<float, 13>(ih * pitch + padLen + 2 * halfLen);
  float *pad = rows + ih * pitch, *even = pad + padLen, *odd = even + halfLen;
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < padLen; i += 16)
    _mm512_storeu_ps(pad + i, ninf);
  for (int64_t i = 0; i + 16 <= 2 * halfLen; i += 16)
    _mm512_storeu_ps(even + i, ninf);
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  // Input columns [c0, c1) land in the padded row at c + pl.
  const int64_t c0 = std::max<int64_t>(0, -pl), c1 = std::min(iw, pw - pl);
  const bool direct = kw == 3 && sx == 2 && dx == 1 && (pl == 0 || pl == 1);
  for (int64_t iy = 0; iy < ih; ++iy) {
    if (direct) {
      pl == 1 ? maxRow3Stride2<1>(xp + iy * iw, iw, pitch, rows + iy * pitch)
              : maxRow3Stride2<0>(xp + iy * iw, iw, pitch, rows + iy * pitch);
      continue;
    }
    if (c1 > c0)
      std::memcpy(pad + c0 + pl, xp + iy * iw + c0, sizeof(float) * static_cast<size_t>(c1 - c0));
    if (sx == 2)
      for (int64_t j = 0; j < padLen / 2; j += 16) {
        const __m512 a = _mm512_loadu_ps(pad + 2 * j), b = _mm512_loadu_ps(pad + 2 * j + 16);
        _mm512_storeu_ps(even + j, _mm512_permutex2var_ps(a, evens, b));
        _mm512_storeu_ps(odd + j, _mm512_permutex2var_ps(a, odds, b));
      }
    float *h = rows + iy * pitch;
    for (int64_t ox = 0; ox < pitch; ox += 16) {
      __m512 m = ninf;
      for (int64_t kx = 0; kx < kw; ++kx) {
        const int64_t o = kx * dx;
        const float *src = sx == 1 ? pad + o : (o % 2 == 0 ? even : odd) + o / 2;
        m = _mm512_maskz_max_ps(0xFFFF, _mm512_loadu_ps(src + ox), m);
      }
      _mm512_storeu_ps(h + ox, m);
    }
  }
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  for (int64_t oy = 0; oy < oh; ++oy) {
    float *out = yp + oy * ow;
    const int64_t y0 = oy * sy - pt;
    for (int64_t ox = 0; ox < ow; ox += 16) {
      __m512 m = ninf;
      for (int64_t ky = t.lo[1][oy]; ky < t.hi[1][oy]; ++ky)
        m = _mm512_maskz_max_ps(0xFFFF, _mm512_loadu_ps(rows + (y0 + ky * dy) * pitch + ox), m);
      _mm512_mask_storeu_ps(out + ox, firstLanes(ow - ox), m);
    }
    if (t.hi[1][oy] <= t.lo[1][oy])
      std::fill(out, out + ow, kLowest);
    for (int64_t ox : emptyColumns)
      out[ox] = kLowest;
  }
}

/// maxPoolSeparablePlane over every plane, the planes across the threads
/// when `split`.
void maxPoolSeparable(const float *x, float *y, int64_t planes, const Window::Dims3 &g,
                      const TapRanges &t, bool split) {
  std::vector<int64_t> emptyColumns; // outputs whose window misses the input's columns
  for (int64_t ox = 0; ox < g.out[2]; ++ox)
    if (t.hi[2][ox] <= t.lo[2][ox])
      emptyColumns.push_back(ox);
  const int64_t inS = g.in[1] * g.in[2], outS = g.out[1] * g.out[2];
  parallelForIf(split && planes > 1, planes, [&](int64_t p) {
    maxPoolSeparablePlane(x + p * inS, y + p * outS, g, t, emptyColumns);
  });
}

/// Float 2-D (or 1-D) average pooling of one plane with AVX-512, 16 outputs
/// of a row at a time: each output's sum from zero over its window's taps
/// in (ky, kx) order, the padding's taps adding zeros (a sum from +0 is
/// never -0, so adding +0 changes no bit: the row-wise loop's sums, which
/// skip them), then divided by `divisors` (the output's tap count, 0 for
/// none: the output is then 0). Input rows are padded with zeros once per
/// plane, and at a column stride of 2 split into their even and odd
/// columns, so that every tap is a unit-stride run.
__attribute__((target("avx512f"))) void averagePoolPlane(const float *xp, float *yp,
                                                         const Window::Dims3 &g, const TapRanges &t,
                                                         const float *divisors) {
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t kw = g.kernel[2], sx = g.strides[2], dx = g.dilations[2], pl = g.padBegin[2];
  const int64_t sy = g.strides[1], dy = g.dilations[1], pt = g.padBegin[1];
  const int64_t pitch = (ow + 15) / 16 * 16;
  const int64_t pw = (ow - 1) * sx + (kw - 1) * dx + 1;
  const int64_t padLen = (pw + 31) / 32 * 32 + 32;
  // Per input row: the padded row (sx 1), or its even then odd columns.
  const int64_t rowLen = sx == 1 ? padLen : 2 * (padLen / 2 + pitch + 16);
  float *rows = scratch<float, 18>(ih * rowLen + padLen);
  float *pad = rows + ih * rowLen;
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < padLen; i += 16)
    _mm512_storeu_ps(pad + i, zero);
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const int64_t c0 = std::max<int64_t>(0, -pl), c1 = std::min(iw, pw - pl);
  for (int64_t iy = 0; iy < ih; ++iy) {
    float *row = rows + iy * rowLen;
    float *dst = sx == 1 ? row : pad;
    if (sx == 1)
      for (int64_t i = 0; i < padLen; i += 16)
        _mm512_storeu_ps(row + i, zero);
    if (c1 > c0)
      std::memcpy(dst + c0 + pl, xp + iy * iw + c0, sizeof(float) * static_cast<size_t>(c1 - c0));
    if (sx == 2) {
      const int64_t half = rowLen / 2;
      for (int64_t i = 0; i < rowLen; i += 16)
        _mm512_storeu_ps(row + i, zero);
      for (int64_t j = 0; j < padLen / 2; j += 16) {
        const __m512 a = _mm512_loadu_ps(pad + 2 * j), b = _mm512_loadu_ps(pad + 2 * j + 16);
        _mm512_storeu_ps(row + j, _mm512_permutex2var_ps(a, evens, b));
        _mm512_storeu_ps(row + half + j, _mm512_permutex2var_ps(a, odds, b));
      }
    }
  }
  for (int64_t oy = 0; oy < oh; ++oy) {
    const int64_t y0 = oy * sy - pt;
    for (int64_t ox = 0; ox < ow; ox += 16) {
      __m512 acc = zero;
      for (int64_t ky = t.lo[1][oy]; ky < t.hi[1][oy]; ++ky) {
        const float *row = rows + (y0 + ky * dy) * rowLen;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t o = kx * dx;
          const float *src = sx == 1 ? row + o : row + (o % 2 == 0 ? 0 : rowLen / 2) + o / 2;
          acc = _mm512_add_ps(acc, _mm512_loadu_ps(src + ox));
        }
      }
      const __mmask16 m = firstLanes(ow - ox);
      const __m512 d = _mm512_maskz_loadu_ps(m, divisors + oy * ow + ox);
      const __mmask16 some = _mm512_mask_cmp_ps_mask(m, d, zero, _CMP_GT_OQ);
      _mm512_mask_storeu_ps(yp + oy * ow + ox, m, _mm512_maskz_div_ps(some, acc, d));
    }
  }
}

/// averagePoolPlane over every plane, the planes across the threads when
/// `split`; the divisors computed once.
void averagePoolRows(const float *x, float *y, int64_t planes, const Window::Dims3 &g,
                     const TapRanges &t, bool includePad, bool split) {
  std::vector<float> divisors(static_cast<size_t>(g.out[1] * g.out[2]));
  for (int64_t oy = 0, o = 0; oy < g.out[1]; ++oy)
    for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
      const int64_t count = includePad ? t.padded[0][0] * t.padded[1][oy] * t.padded[2][ox]
                                       : (t.hi[0][0] - t.lo[0][0]) * (t.hi[1][oy] - t.lo[1][oy]) *
                                             (t.hi[2][ox] - t.lo[2][ox]);
      divisors[static_cast<size_t>(o)] = count > 0 ? static_cast<float>(count) : 0.0f;
    }
  const int64_t inS = g.in[1] * g.in[2], outS = g.out[1] * g.out[2];
  parallelForIf(split && planes > 1, planes, [&](int64_t p) {
    averagePoolPlane(x + p * inS, y + p * outS, g, t, divisors.data());
  });
}
#endif

/// Reads kernel_shape and computes the pooling window over X's spatial dims.
Status poolWindow(const KernelContext &ctx, const std::vector<int64_t> &xDims, bool dilations,
                  Window &win) {
  if (xDims.size() < 3)
    return KernelContext::error("input must have rank >= 3, got " + shapeString(xDims));
  std::vector<int64_t> kernel = ctx.attrInts("kernel_shape");
  if (kernel.empty())
    return KernelContext::error("kernel_shape attribute is required");
  WindowOptions opts;
  opts.ceilMode = ctx.attrInt("ceil_mode", 0) != 0;
  opts.allowDilations = dilations;
  return computeWindow(ctx, std::vector<int64_t>(xDims.begin() + 2, xDims.end()), kernel, opts,
                       win);
}

std::vector<int64_t> poolOutDims(const std::vector<int64_t> &xDims, const Window &win) {
  std::vector<int64_t> out = {xDims[0], xDims[1]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

//===----------------------------------------------------------------------===//
// MaxPool
//===----------------------------------------------------------------------===//

template <typename T> Status maxPoolTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  Window win;
  ONNXSLIM_RETURN_IF_ERROR(poolWindow(ctx, X.dims(), ctx.opsetVersion() >= 10, win));
  int64_t storageOrder = ctx.attrInt("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return KernelContext::error("storage_order must be 0 or 1");
  std::vector<int64_t> outDims = poolOutDims(X.dims(), win);
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(outDims));
  bool wantIndices = ctx.wantsOutput(1);
  std::optional<TensorBuilder> I;
  if (wantIndices)
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Int64, outDims, I));
  Window::Dims3 g = win.to3d();
  TapRanges t = tapRanges(g);
  int64_t planes = X.dims()[0] * X.dims()[1], inS = win.inSize(), outS = win.outSize();
  // Index strides for the Indices output: row-major, or column-major over
  // the real spatial dims when storage_order is 1.
  std::array<int64_t, 3> idxStride = {g.in[1] * g.in[2], g.in[2], 1};
  if (storageOrder == 1) {
    size_t lead = 3 - win.rank;
    int64_t s = 1;
    for (size_t i = lead; i < 3; ++i) {
      idxStride[i] = s;
      s *= g.in[i];
    }
  }
  const C *x = X.data();
  C *y = Y.data();
  int64_t *ind = wantIndices ? I->dataAs<int64_t>() : nullptr;
  const C lowest = std::numeric_limits<C>::lowest();
  // Without Indices the row-wise loop gives the same maxima faster; the
  // per-output loop below then has nothing left to do.
  if constexpr (std::is_same_v<T, float>) {
#ifdef ONNXSLIM_ISA_X86
    if (!ind && maxPoolSeparableFits(g) && (!maxPoolBlockedFits(g) || separableBeatsBlocked(g))) {
      maxPoolSeparable(x, y, planes, g, t, planes * inS >= kPoolSplitElements);
      ctx.setOutput(0, Y.finish());
      return Status::success();
    }
#endif
    if (!ind && maxPoolBlockedFits(g)) {
      maxPoolBlocked(x, y, planes, g, planes * inS >= kPoolSplitElements);
      ctx.setOutput(0, Y.finish());
      return Status::success();
    }
  }
  if (!ind)
    rowwisePool<C, true>(x, y, planes, g, t);
  int64_t perOutputPlanes = ind ? planes : 0;
  for (int64_t p = 0; p < perOutputPlanes; ++p) {
    const C *xp = x + p * inS;
    int64_t o = p * outS;
    for (int64_t oz = 0; oz < g.out[0]; ++oz)
      for (int64_t oy = 0; oy < g.out[1]; ++oy)
        for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
          C best = lowest;
          int64_t bz = -1, by = -1, bx = -1;
          int64_t z0 = oz * g.strides[0] - g.padBegin[0];
          int64_t y0 = oy * g.strides[1] - g.padBegin[1];
          int64_t x0 = ox * g.strides[2] - g.padBegin[2];
          for (int64_t kz = t.lo[0][oz]; kz < t.hi[0][oz]; ++kz) {
            int64_t iz = z0 + kz * g.dilations[0];
            for (int64_t ky = t.lo[1][oy]; ky < t.hi[1][oy]; ++ky) {
              int64_t iy = y0 + ky * g.dilations[1];
              const C *row = xp + (iz * g.in[1] + iy) * g.in[2];
              for (int64_t kx = t.lo[2][ox]; kx < t.hi[2][ox]; ++kx) {
                int64_t ix = x0 + kx * g.dilations[2];
                if (row[ix] > best || bz < 0) {
                  best = row[ix];
                  bz = iz;
                  by = iy;
                  bx = ix;
                }
              }
            }
          }
          y[o] = best;
          if (ind)
            ind[o] = bz < 0 ? -1
                            : p * inS + bz * idxStride[0] + by * idxStride[1] + bx * idxStride[2];
        }
  }
  ctx.setOutput(0, Y.finish());
  if (wantIndices)
    ctx.setOutput(1, I->finish());
  return Status::success();
}

using MaxPoolTypes = TypeList<float, double, Half, BFloat16, int8_t, uint8_t>;

Status maxPoolKernel(KernelContext &ctx) {
  const Tensor *x = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  return dispatchType<MaxPoolTypes>(
      x->dtype(), [&](auto tag) { return maxPoolTyped<typename decltype(tag)::type>(ctx); });
}

//===----------------------------------------------------------------------===//
// AveragePool and LpPool
//===----------------------------------------------------------------------===//

enum class SumKind { Average, Lp };

/// Reads LpPool's p: a float attribute in version 1, an int after.
double lpExponent(const KernelContext &ctx) {
  const Attribute *a = ctx.attr("p");
  if (a && a->kind == AttrKind::Float)
    return a->f;
  if (a && a->kind == AttrKind::Int)
    return static_cast<double>(a->i);
  return 2.0;
}

template <typename T> Status sumPoolTyped(KernelContext &ctx, SumKind kind) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  bool dilations = kind == SumKind::Average ? ctx.opsetVersion() >= 19 : ctx.opsetVersion() >= 18;
  Window win;
  ONNXSLIM_RETURN_IF_ERROR(poolWindow(ctx, X.dims(), dilations, win));
  bool includePad = kind == SumKind::Average && ctx.attrInt("count_include_pad", 0) != 0;
  double p = kind == SumKind::Lp ? lpExponent(ctx) : 1.0;
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(poolOutDims(X.dims(), win)));
  Window::Dims3 g = win.to3d();
  TapRanges t = tapRanges(g);
  int64_t planes = X.dims()[0] * X.dims()[1], inS = win.inSize(), outS = win.outSize();
  const C *x = X.data();
  C *y = Y.data();
#ifdef ONNXSLIM_ISA_X86
  if constexpr (std::is_same_v<T, float>)
    if (kind == SumKind::Average && maxPoolSeparableFits(g)) {
      averagePoolRows(x, y, planes, g, t, includePad, planes * inS >= kPoolSplitElements);
      ctx.setOutput(0, Y.finish());
      return Status::success();
    }
#endif
  if (kind == SumKind::Average) {
    // Sum row-wise, then divide by each output's tap count.
    rowwisePool<C, false>(x, y, planes, g, t);
    for (int64_t pl = 0; pl < planes; ++pl) {
      C *yp = y + pl * outS;
      for (int64_t oz = 0, o = 0; oz < g.out[0]; ++oz)
        for (int64_t oy = 0; oy < g.out[1]; ++oy)
          for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
            int64_t count =
                includePad ? t.padded[0][oz] * t.padded[1][oy] * t.padded[2][ox]
                           : (t.hi[0][oz] - t.lo[0][oz]) * (t.hi[1][oy] - t.lo[1][oy]) *
                                 (t.hi[2][ox] - t.lo[2][ox]);
            yp[o] = count > 0 ? yp[o] / static_cast<C>(count) : C(0);
          }
    }
  }
  // LpPool: one output at a time.
  int64_t perOutputPlanes = kind == SumKind::Lp ? planes : 0;
  for (int64_t pl = 0; pl < perOutputPlanes; ++pl) {
    const C *xp = x + pl * inS;
    int64_t o = pl * outS;
    for (int64_t oz = 0; oz < g.out[0]; ++oz)
      for (int64_t oy = 0; oy < g.out[1]; ++oy)
        for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
          C sum = 0;
          int64_t z0 = oz * g.strides[0] - g.padBegin[0];
          int64_t y0 = oy * g.strides[1] - g.padBegin[1];
          int64_t x0 = ox * g.strides[2] - g.padBegin[2];
          for (int64_t kz = t.lo[0][oz]; kz < t.hi[0][oz]; ++kz) {
            int64_t iz = z0 + kz * g.dilations[0];
            for (int64_t ky = t.lo[1][oy]; ky < t.hi[1][oy]; ++ky) {
              const C *row = xp + (iz * g.in[1] + y0 + ky * g.dilations[1]) * g.in[2];
              for (int64_t kx = t.lo[2][ox]; kx < t.hi[2][ox]; ++kx) {
                C v = row[x0 + kx * g.dilations[2]];
                if (kind == SumKind::Average)
                  sum += v;
                else if (p == 1.0)
                  sum += std::abs(v);
                else if (p == 2.0)
                  sum += v * v;
                else
                  sum += static_cast<C>(std::pow(std::abs(static_cast<double>(v)), p));
              }
            }
          }
          if (kind == SumKind::Average) {
            int64_t count =
                includePad ? t.padded[0][oz] * t.padded[1][oy] * t.padded[2][ox]
                           : (t.hi[0][oz] - t.lo[0][oz]) * (t.hi[1][oy] - t.lo[1][oy]) *
                                 (t.hi[2][ox] - t.lo[2][ox]);
            y[o] = count > 0 ? sum / static_cast<C>(count) : C(0);
          } else {
            y[o] = p == 1.0   ? sum
                   : p == 2.0 ? std::sqrt(sum)
                              : static_cast<C>(std::pow(static_cast<double>(sum), 1.0 / p));
          }
        }
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status averagePoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return sumPoolTyped<typename decltype(tag)::type>(ctx, SumKind::Average);
  });
}

Status lpPoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return sumPoolTyped<typename decltype(tag)::type>(ctx, SumKind::Lp);
  });
}

//===----------------------------------------------------------------------===//
// Global pooling
//===----------------------------------------------------------------------===//

enum class GlobalKind { Average, Max, Lp };

template <typename T> Status globalPoolTyped(KernelContext &ctx, GlobalKind kind) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  if (X.rank() < 2)
    return KernelContext::error("input must have rank >= 2, got " + shapeString(X.dims()));
  std::vector<int64_t> outDims = X.dims();
  for (size_t i = 2; i < outDims.size(); ++i)
    outDims[i] = 1;
  int64_t planes = X.dims()[0] * X.dims()[1];
  int64_t inS = product(X.dims(), 2);
  double p = kind == GlobalKind::Lp ? lpExponent(ctx) : 1.0;
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(outDims));
  if (kind == GlobalKind::Max && inS == 0 && planes > 0)
    return KernelContext::error("GlobalMaxPool over an empty spatial extent");
  // The mean of plane pl: summed in double, in an order fixed on every
  // machine (sumFloats); large poolings take the planes across the threads.
  auto mean = [&](int64_t pl) {
    const C *xp = X.data() + pl * inS;
    double sum = 0;
    if constexpr (std::is_same_v<C, float>)
      sum = sumFloats(xp, inS);
    else
      for (int64_t i = 0; i < inS; ++i)
        sum += static_cast<double>(xp[i]);
    Y.data()[pl] = inS ? static_cast<C>(sum / static_cast<double>(inS)) : C(0);
  };
  if (kind == GlobalKind::Average && ctx.inputChannelsLast(0)) {
    // A channels-last image (runtime/Layout.h; float only): the same sums.
    if constexpr (std::is_same_v<C, float>) {
      const int64_t N = X.dims()[0], Cn = X.dims()[1];
      std::vector<double> sums(static_cast<size_t>(Cn));
      for (int64_t n = 0; n < N; ++n) {
        sumChannelsLast(X.data() + n * Cn * inS, inS, Cn, sums.data());
        for (int64_t c = 0; c < Cn; ++c)
          Y.data()[n * Cn + c] =
              inS ? static_cast<C>(sums[static_cast<size_t>(c)] / static_cast<double>(inS)) : C(0);
      }
      ctx.setOutput(0, Y.finish());
      return Status::success();
    }
  }
  if (kind == GlobalKind::Average) {
    if constexpr (std::is_same_v<C, float>)
      if (inS > 0 && inS < kSmallPlaneSums) {
        // Small planes sixteen at a time (sumPlanes: the same sums).
        const int64_t blocks = (planes + 15) / 16;
        parallelForIf(blocks > 1 && planes * inS >= kPoolSplitElements, blocks, [&](int64_t b) {
          const int64_t p0 = b * 16, pn = std::min<int64_t>(16, planes - p0);
          double sums[16];
          sumPlanes(X.data() + p0 * inS, pn, inS, sums);
          for (int64_t i = 0; i < pn; ++i)
            Y.data()[p0 + i] = static_cast<C>(sums[i] / static_cast<double>(inS));
        });
        ctx.setOutput(0, Y.finish());
        return Status::success();
      }
    parallelForIf(planes > 1 && planes * inS >= kPoolSplitElements, planes, mean);
    ctx.setOutput(0, Y.finish());
    return Status::success();
  }
  // Max and Lp: one plane at a time (Lp sums in double).
  for (int64_t pl = 0; pl < planes; ++pl) {
    const C *xp = X.data() + pl * inS;
    if (kind == GlobalKind::Max) {
      C acc = xp[0];
      for (int64_t i = 0; i < inS; ++i)
        acc = xp[i] > acc ? xp[i] : acc;
      Y.data()[pl] = acc;
      continue;
    }
    double sum = 0;
    for (int64_t i = 0; i < inS; ++i)
      sum += std::pow(std::abs(static_cast<double>(xp[i])), p);
    Y.data()[pl] = static_cast<C>(std::pow(sum, 1.0 / p));
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status globalAveragePoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return globalPoolTyped<typename decltype(tag)::type>(ctx, GlobalKind::Average);
  });
}
Status globalMaxPoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return globalPoolTyped<typename decltype(tag)::type>(ctx, GlobalKind::Max);
  });
}
Status globalLpPoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0, [&](auto tag) {
    return globalPoolTyped<typename decltype(tag)::type>(ctx, GlobalKind::Lp);
  });
}

//===----------------------------------------------------------------------===//
// MaxUnpool
//===----------------------------------------------------------------------===//

template <typename T> Status maxUnpoolTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  const Tensor *iT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, iT));
  std::vector<int64_t> indices;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*iT, indices));
  if (iT->dims() != X.dims())
    return KernelContext::error("indices " + shapeString(iT->dims()) +
                                " must have the shape of X " + shapeString(X.dims()));
  if (X.rank() < 3)
    return KernelContext::error("input must have rank >= 3, got " + shapeString(X.dims()));
  std::vector<int64_t> kernel = ctx.attrInts("kernel_shape");
  size_t n = static_cast<size_t>(X.rank() - 2);
  if (kernel.size() != n)
    return KernelContext::error("kernel_shape must have " + std::to_string(n) + " entries");
  std::vector<int64_t> strides = ctx.attrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = ctx.attrInts("pads", std::vector<int64_t>(2 * n, 0));
  if (strides.size() != n || pads.size() != 2 * n)
    return KernelContext::error("strides/pads have the wrong number of entries");
  // The indices address the natural output (what MaxPool's input was);
  // an explicit output_shape embeds that result at the start of each dim.
  std::vector<int64_t> natural = {X.dims()[0], X.dims()[1]};
  for (size_t i = 0; i < n; ++i) {
    const int64_t limit = int64_t{1} << 24;
    if (X.dims()[i + 2] > (int64_t{1} << 32))
      return KernelContext::error("input dimension is out of range");
    if (kernel[i] <= 0 || strides[i] <= 0 || pads[i] < 0 || pads[i + n] < 0 ||
        kernel[i] > limit || strides[i] > limit || pads[i] > limit || pads[i + n] > limit)
      return KernelContext::error("kernel_shape, strides and pads must be valid");
    int64_t d = (X.dims()[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + n];
    if (d < 0)
      return KernelContext::error("pads are larger than the unpooled output");
    natural.push_back(d);
  }
  std::vector<int64_t> outDims = natural;
  if (const Tensor *shapeT = ctx.tensor(2)) {
    ONNXSLIM_RETURN_IF_ERROR(readAs(*shapeT, outDims));
    if (outDims.size() != X.dims().size() || outDims[0] != natural[0] ||
        outDims[1] != natural[1])
      return KernelContext::error("output_shape " + shapeString(outDims) +
                                  " must have the rank, batch and channels of X " +
                                  shapeString(X.dims()));
  }
  int64_t naturalTotal = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(natural, DataType::Float, naturalTotal));
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(outDims));
  C *y = Y.data();
  int64_t natPlane = product(natural, 2), outPlane = product(outDims, 2);
  for (int64_t i = 0; i < X.size(); ++i) {
    int64_t idx = indices[static_cast<size_t>(i)];
    if (idx < 0 || idx >= naturalTotal)
      return KernelContext::error("index " + std::to_string(idx) + " is outside the output of " +
                                  std::to_string(naturalTotal) + " elements");
    // Decode in the natural shape, re-encode in the output shape.
    int64_t plane = idx / natPlane, rest = idx % natPlane, dst = 0;
    bool inside = true;
    for (size_t d = 0; d < n; ++d) {
      int64_t inner = product(natural, 3 + d);
      int64_t coord = rest / inner;
      rest %= inner;
      inside = inside && coord < outDims[2 + d];
      dst = dst * outDims[2 + d] + coord;
    }
    if (inside)
      y[plane * outPlane + dst] = X[i];
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status maxUnpoolKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return maxUnpoolTyped<typename decltype(tag)::type>(ctx); });
}

} // namespace

void registerPoolKernels(OpRegistry &registry) {
  registry.add("MaxPool", 1, kLatestOpset, maxPoolKernel);
  registry.add("AveragePool", 1, kLatestOpset, averagePoolKernel);
  registry.add("LpPool", 1, kLatestOpset, lpPoolKernel);
  registry.add("GlobalAveragePool", 1, kLatestOpset, globalAveragePoolKernel);
  registry.add("GlobalMaxPool", 1, kLatestOpset, globalMaxPoolKernel);
  registry.add("GlobalLpPool", 1, kLatestOpset, globalLpPoolKernel);
  registry.add("MaxUnpool", 9, kLatestOpset, maxUnpoolKernel);
}

} // namespace onnxslim::rt
