//===- runtime/conv/DepthwiseRows.cpp - Multi-tap and depthwise rows ------===//
//
// The row kernels of depthwise (single-channel group) convolution, declared
// in runtime/conv/Kernels.h, with the GEMM engine's run-time choice of
// family (runtime/Simd.h):
//  - multiTapRow: one output row as the sum of `taps` input rows times
//    their weights, read from a zero-padded copy of the plane (baseline
//    xsimd, AVX2, AVX-512 with unrolled 3-, 9- and 25-tap versions);
//  - depthwiseStride2Row / depthwiseStride1Row (AVX-512): rows of kh x 3
//    taps read straight from the input rows, with no padded copy (the
//    even and odd columns of a stride-2 row split by permutes);
//  - depthwiseNarrowRows (AVX-512): whole narrow 3x3 planes, several rows'
//    sums at once, for planes whose rows are too short for a call each.
// Each output's taps are summed in the order multiTapRow sums them over the
// padded copy (kernel rows, then columns, from zero, fused multiply-adds),
// then the bias and the clamp, so every path gives the same bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/Simd.h"
#include "runtime/conv/ClampSimd.h"
#include "runtime/conv/Kernels.h"

#include <algorithm>
#include <cmath>

namespace onnxslim::rt {
namespace {

using simd::Batch;
using simd::currentIsa;
using simd::Isa;

/// y[i] = clamp(bias + sum_t w[t] * src[t][i]) for i < n, accumulating the
/// taps in order from zero, adding the bias last, then clamping (if asked).
template <typename T>
void multiTapBaseline(int64_t n, int64_t taps, const T *const *src, const T *w, T bias,
                      const StoreClamp *clamp, T *y) {
  using B = Batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    B acc(T(0));
    for (int64_t t = 0; t < taps; ++t)
      acc = xsimd::fma(B(w[t]), B::load_unaligned(src[t] + i), acc);
    clampBatch(acc + B(bias), clamp).store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    T acc = 0;
    for (int64_t t = 0; t < taps; ++t)
      acc += w[t] * src[t][i];
    y[i] = clampScalar(acc + bias, clamp);
  }
}

#ifdef ONNXSLIM_ISA_X86
__attribute__((target("avx2,fma"))) void multiTapAvx2(int64_t n, int64_t taps,
                                                      const float *const *src, const float *w,
                                                      float bias, const StoreClamp *clamp,
                                                      float *y) {
  int64_t i = 0;
  __m256 bv = _mm256_set1_ps(bias);
  for (; i + 16 <= n; i += 16) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      __m256 wv = _mm256_set1_ps(w[t]);
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[t] + i), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[t] + i + 8), a1);
    }
    _mm256_storeu_ps(y + i, clampAvx2(_mm256_add_ps(a0, bv), clamp));
    _mm256_storeu_ps(y + i + 8, clampAvx2(_mm256_add_ps(a1, bv), clamp));
  }
  for (; i < n; ++i) {
    float acc = 0;
    for (int64_t t = 0; t < taps; ++t)
      acc = std::fma(w[t], src[t][i], acc);
    y[i] = clampScalar(acc + bias, clamp);
  }
}

__attribute__((target("avx512f"))) void multiTapAvx512(int64_t n, int64_t taps,
                                                       const float *const *src, const float *w,
                                                       float bias, const StoreClamp *clamp,
                                                       float *y) {
  int64_t i = 0;
  __m512 bv = _mm512_set1_ps(bias);
  for (; i + 32 <= n; i += 32) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      __m512 wv = _mm512_set1_ps(w[t]);
      a0 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src[t] + i), a0);
      a1 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src[t] + i + 16), a1);
    }
    _mm512_storeu_ps(y + i, clampAvx512(_mm512_add_ps(a0, bv), clamp));
    _mm512_storeu_ps(y + i + 16, clampAvx512(_mm512_add_ps(a1, bv), clamp));
  }
  for (; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    __m512 a0 = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t)
      a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_maskz_loadu_ps(m, src[t] + i), a0);
    _mm512_mask_storeu_ps(y + i, m, clampAvx512(_mm512_add_ps(a0, bv), clamp));
  }
}

/// multiTapAvx512 for a compile-time number of taps: the weights stay in
/// registers and the tap loop is unrolled (same operations, same order).
template <int TAPS>
__attribute__((target("avx512f"))) void multiTapAvx512Fixed(int64_t n, const float *const *src,
                                                            const float *w, float bias,
                                                            const StoreClamp *clamp, float *y) {
  __m512 wv[TAPS];
  const float *s[TAPS];
  for (int t = 0; t < TAPS; ++t) {
    wv[t] = _mm512_set1_ps(w[t]);
    s[t] = src[t];
  }
  __m512 bv = _mm512_set1_ps(bias);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
#pragma GCC unroll 32
    for (int t = 0; t < TAPS; ++t) {
      a0 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s[t] + i), a0);
      a1 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s[t] + i + 16), a1);
    }
    _mm512_storeu_ps(y + i, clampAvx512(_mm512_add_ps(a0, bv), clamp));
    _mm512_storeu_ps(y + i + 16, clampAvx512(_mm512_add_ps(a1, bv), clamp));
  }
  for (; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    __m512 a0 = _mm512_setzero_ps();
#pragma GCC unroll 32
    for (int t = 0; t < TAPS; ++t)
      a0 = _mm512_fmadd_ps(wv[t], _mm512_maskz_loadu_ps(m, s[t] + i), a0);
    _mm512_mask_storeu_ps(y + i, m, clampAvx512(_mm512_add_ps(a0, bv), clamp));
  }
}

/// row[start + l] for lanes l < 16, zero where start + l is outside
/// [0, iw); reads nothing outside the row.
__attribute__((target("avx512f"))) inline __m512 loadInRow(const float *row, int64_t start,
                                                          int64_t iw) {
  if (start >= 0 && start + 16 <= iw)
    return _mm512_loadu_ps(row + start);
  const int64_t lo = std::max<int64_t>(0, -start), hi = std::min<int64_t>(16, iw - start);
  if (hi <= lo)
    return _mm512_setzero_ps();
  const auto m = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  // Lanes [lo, hi) take row[start + lo], row[start + lo + 1], ... in order.
  return _mm512_maskz_expandloadu_ps(m, row + start + lo);
}

/// y[x0 + 16 v + l] = clamp(acc[v][l] + bias) for those below ow.
template <int V>
__attribute__((target("avx512f"))) inline void storeDepthwiseSums(const __m512 *acc, __m512 bias,
                                                                  const StoreClamp *clamp,
                                                                  int64_t x0, int64_t ow,
                                                                  float *y) {
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m512 out = clampAvx512(_mm512_add_ps(acc[v], bias), clamp);
    const int64_t x = x0 + 16 * v;
    if (ow - x >= 16)
      _mm512_storeu_ps(y + x, out);
    else
      _mm512_mask_storeu_ps(y + x, static_cast<__mmask16>((1u << (ow - x)) - 1u), out);
  }
}

/// V x 16 outputs of depthwiseStride2Row from output x0 on (stored up to
/// ow). Per input row, each 32 input columns are split into their even
/// and odd columns by two permutes (taps 0 and 1), and tap 2's columns are
/// the even ones shifted by one lane (the next split's first even column
/// coming in). V sums at once, so that their chains of dependent
/// multiply-adds overlap. Checked: some of the 32 V columns from
/// 2 x0 - padLeft on may fall outside the row (read as zeros; else plain
/// loads).
template <int V, bool Checked>
__attribute__((target("avx512f"))) inline void
depthwiseStride2Step(int64_t x0, int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                     const float *const *rows, const float *w, __m512 bias,
                     const StoreClamp *clamp, float *y) {
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds =
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const int64_t base = 2 * x0 - padLeft; // input column of output x0's first tap
  __m512 acc[V];
  for (int v = 0; v < V; ++v)
    acc[v] = _mm512_setzero_ps();
  for (int64_t r = 0; r < kh; ++r) {
    const float *row = rows[r];
    if (!row)
      continue;
    __m512 even[V + 1], odd[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t c = base + 32 * v;
      const __m512 a = Checked ? loadInRow(row, c, iw) : _mm512_loadu_ps(row + c);
      const __m512 b = Checked ? loadInRow(row, c + 16, iw) : _mm512_loadu_ps(row + c + 16);
      even[v] = _mm512_permutex2var_ps(a, evens, b);
      odd[v] = _mm512_permutex2var_ps(a, odds, b);
    }
    // Only lane 0 of the last is used: input column base + 32 V.
    const int64_t c = base + 32 * V;
    even[V] = c >= 0 && c < iw ? _mm512_set1_ps(row[c]) : _mm512_setzero_ps();
    const __m512 w0 = _mm512_set1_ps(w[3 * r]), w1 = _mm512_set1_ps(w[3 * r + 1]),
                 w2 = _mm512_set1_ps(w[3 * r + 2]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m512 shifted = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
          0xFFFF, _mm512_castps_si512(even[v + 1]), _mm512_castps_si512(even[v]), 1));
      acc[v] = _mm512_fmadd_ps(w0, even[v], acc[v]);
      acc[v] = _mm512_fmadd_ps(w1, odd[v], acc[v]);
      acc[v] = _mm512_fmadd_ps(w2, shifted, acc[v]);
    }
  }
  storeDepthwiseSums<V>(acc, bias, clamp, x0, ow, y);
}

/// V x 16 outputs of depthwiseStride1Row from output x0 on (stored up to
/// ow): each tap's columns are one load. Checked: some of the columns
/// x0 - padLeft ... x0 - padLeft + 16 V + 1 may fall outside the row (read
/// as zeros; else plain loads).
template <int V, bool Checked>
__attribute__((target("avx512f"))) inline void
depthwiseStride1Step(int64_t x0, int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                     const float *const *rows, const float *w, __m512 bias,
                     const StoreClamp *clamp, float *y) {
  const int64_t base = x0 - padLeft; // input column of output x0's first tap
  __m512 acc[V];
  for (int v = 0; v < V; ++v)
    acc[v] = _mm512_setzero_ps();
  for (int64_t r = 0; r < kh; ++r) {
    const float *row = rows[r];
    if (!row)
      continue;
    const __m512 w0 = _mm512_set1_ps(w[3 * r]), w1 = _mm512_set1_ps(w[3 * r + 1]),
                 w2 = _mm512_set1_ps(w[3 * r + 2]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t c = base + 16 * v;
      acc[v] = _mm512_fmadd_ps(w0, Checked ? loadInRow(row, c, iw) : _mm512_loadu_ps(row + c),
                               acc[v]);
      acc[v] = _mm512_fmadd_ps(
          w1, Checked ? loadInRow(row, c + 1, iw) : _mm512_loadu_ps(row + c + 1), acc[v]);
      acc[v] = _mm512_fmadd_ps(
          w2, Checked ? loadInRow(row, c + 2, iw) : _mm512_loadu_ps(row + c + 2), acc[v]);
    }
  }
  storeDepthwiseSums<V>(acc, bias, clamp, x0, ow, y);
}

/// A step of depthwiseStride1Row or depthwiseStride2Row (S: the column stride).
template <int S, int V, bool Checked>
__attribute__((target("avx512f"))) inline void
depthwiseStep(int64_t x0, int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
              const float *const *rows, const float *w, __m512 bias, const StoreClamp *clamp,
              float *y) {
  if constexpr (S == 1)
    depthwiseStride1Step<V, Checked>(x0, ow, iw, padLeft, kh, rows, w, bias, clamp, y);
  else
    depthwiseStride2Step<V, Checked>(x0, ow, iw, padLeft, kh, rows, w, bias, clamp, y);
}

/// V x 16 outputs of depthwiseStride2Row from output x0 on (stored up to
/// ow), for a left padding PL of 0 or 1: each row's 32 V input columns
/// from 2 x0 on are loaded at even positions (whole vectors, zeros past the
/// row) and split into even and odd columns by two permutes. Output x reads
/// columns 2 x - PL + kx: with PL = 1 tap 0 is the odd column before (the
/// odd ones shifted by one lane, the column before the first coming in),
/// taps 1 and 2 the even and odd ones; with PL = 0 taps 0 and 1 are the
/// even and odd ones and tap 2 the even ones shifted, the next split's
/// first coming in. No load reaches outside the row, and none needs a
/// check per lane (depthwiseStride2Step's first step, reading column -1,
/// is a checked one).
template <int V, int PL>
__attribute__((target("avx512f"))) inline void
depthwiseStride2Even(int64_t x0, int64_t ow, int64_t iw, int64_t kh, const float *const *rows,
                     const __m512 *wv, __m512 bias, const StoreClamp *clamp, float *y) {
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds =
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const int64_t c0 = 2 * x0; // the first column loaded
  __m512 acc[V];
  for (int v = 0; v < V; ++v)
    acc[v] = _mm512_setzero_ps();
  for (int64_t r = 0; r < kh; ++r) {
    const float *row = rows[r];
    if (!row)
      continue;
    __m512 even[V], odd[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t c = c0 + 32 * v;
      __m512 a, b;
      if (c + 32 <= iw) {
        a = _mm512_loadu_ps(row + c);
        b = _mm512_loadu_ps(row + c + 16);
      } else {
        a = c < iw ? _mm512_maskz_loadu_ps(simd::firstLanes(iw - c), row + c) : _mm512_setzero_ps();
        b = c + 16 < iw ? _mm512_maskz_loadu_ps(simd::firstLanes(iw - c - 16), row + c + 16)
                        : _mm512_setzero_ps();
      }
      even[v] = _mm512_permutex2var_ps(a, evens, b);
      odd[v] = _mm512_permutex2var_ps(a, odds, b);
    }
    // The column shifted in: before the first (PL = 1), after the last (PL = 0).
    const int64_t edge = PL == 1 ? c0 - 1 : c0 + 32 * V;
    const __m512 in = edge >= 0 && edge < iw ? _mm512_set1_ps(row[edge]) : _mm512_setzero_ps();
    const __m512 w0 = wv[3 * r], w1 = wv[3 * r + 1], w2 = wv[3 * r + 2];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      __m512 t0, t1, t2;
      if constexpr (PL == 1) {
        const __m512 before = v == 0 ? in : odd[v - 1];
        t0 = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
            0xFFFF, _mm512_castps_si512(odd[v]), _mm512_castps_si512(before), 15));
        t1 = even[v];
        t2 = odd[v];
      } else {
        const __m512 after = v + 1 == V ? in : even[v + 1];
        t0 = even[v];
        t1 = odd[v];
        t2 = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
            0xFFFF, _mm512_castps_si512(after), _mm512_castps_si512(even[v]), 1));
      }
      acc[v] = _mm512_fmadd_ps(w0, t0, acc[v]);
      acc[v] = _mm512_fmadd_ps(w1, t1, acc[v]);
      acc[v] = _mm512_fmadd_ps(w2, t2, acc[v]);
    }
  }
  storeDepthwiseSums<V>(acc, bias, clamp, x0, ow, y);
}

/// Output rows [oy0, oy1) at a row stride of 2 (row pointers from the
/// plane; with a plane, kh is 3) or one row (rows given), for a left
/// padding PL of 0 or 1: steps of up to four vectors of outputs
/// (depthwiseStride2Even), the weights broadcast once for all of them.
template <int PL>
__attribute__((target("avx512f"))) void
depthwiseStride2EvenRows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                         int64_t padTop, const float *plane, int64_t kh,
                         const float *const *given, const float *w, float bias, float *y,
                         const StoreClamp *clamp) {
  const __m512 bv = _mm512_set1_ps(bias);
  __m512 wv[3 * kMaxFromInputRows];
  for (int64_t t = 0; t < 3 * kh; ++t)
    wv[t] = _mm512_set1_ps(w[t]);
  const float *own[kMaxFromInputRows];
  for (int64_t oy = oy0; oy < oy1; ++oy, y += ow) {
    const float *const *rows = given;
    if (plane) {
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t iy = 2 * oy - padTop + ky;
        own[ky] = iy >= 0 && iy < ih ? plane + iy * iw : nullptr;
      }
      rows = own;
    }
    for (int64_t x0 = 0; x0 < ow;) {
      const int64_t v = std::min<int64_t>(4, (ow - x0 + 15) / 16);
      switch (v) {
      case 1: depthwiseStride2Even<1, PL>(x0, ow, iw, kh, rows, wv, bv, clamp, y); break;
      case 2: depthwiseStride2Even<2, PL>(x0, ow, iw, kh, rows, wv, bv, clamp, y); break;
      case 3: depthwiseStride2Even<3, PL>(x0, ow, iw, kh, rows, wv, bv, clamp, y); break;
      default: depthwiseStride2Even<4, PL>(x0, ow, iw, kh, rows, wv, bv, clamp, y); break;
      }
      x0 += 16 * v;
    }
  }
}

/// depthwiseStride1Row (S = 1) or depthwiseStride2Row (S = 2) with AVX-512:
/// 64 outputs a step, the last step the 16 to 64 left.
template <int S>
__attribute__((target("avx512f"))) void
depthwiseRowAvx512(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh, const float *const *rows,
                   const float *w, float bias, float *y, const StoreClamp *clamp) {
  const __m512 bv = _mm512_set1_ps(bias);
  // Steps whose input columns lie in the row load without checks: from
  // S x - padLeft, 16 V S of them (and the two after the last at S = 1;
  // at S = 2 the one after is read on its own, checked).
  auto inside = [&](int64_t x, int64_t v) {
    const int64_t c = S * x - padLeft;
    return c >= 0 && c + 16 * S * v + (S == 1 ? 2 : 0) <= iw;
  };
  // Steps of four vectors, the last one of as many as the outputs left
  // (one vector's chain of dependent multiply-adds alone would wait on
  // each one's latency).
  for (int64_t x0 = 0; x0 < ow;) {
    const int64_t v = std::min<int64_t>(4, (ow - x0 + 15) / 16);
    const bool checked = !inside(x0, v);
    switch (v * 2 + (checked ? 1 : 0)) {
    case 2: depthwiseStep<S, 1, false>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    case 3: depthwiseStep<S, 1, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    case 4: depthwiseStep<S, 2, false>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    case 5: depthwiseStep<S, 2, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    case 6: depthwiseStep<S, 3, false>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    case 7: depthwiseStep<S, 3, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    case 8: depthwiseStep<S, 4, false>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    default: depthwiseStep<S, 4, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y); break;
    }
    x0 += 16 * v;
  }
}

/// Tap kx's input columns for output vector v of a narrow row: lanes l of
/// columns 16 v + l + D, from the row's vectors R (R[u + 1] holds columns
/// 16 u to 16 u + 15, zero past the row; R[0] and R[U + 1] are zero).
template <int D>
__attribute__((target("avx512f"))) inline __m512 narrowTap(const __m512 *R, int v) {
  // (The maskz form: the plain one leaves an undefined operand that GCC
  // reports as maybe uninitialized.)
  if constexpr (D == 0)
    return R[v + 1];
  else if constexpr (D > 0)
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xFFFF, _mm512_castps_si512(R[v + 2]), _mm512_castps_si512(R[v + 1]), D));
  else
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xFFFF, _mm512_castps_si512(R[v + 1]), _mm512_castps_si512(R[v]), 16 + D));
}

/// RB output rows from oy on of depthwiseNarrowRows (U input vectors a row,
/// V output vectors, PL columns of left padding). Input row i of the group
/// feeds output row r through kernel row i - r, so each output's taps are
/// summed in kernel-row order, then column order, from zero: the order of
/// multiTapRow over a padded copy. RB x V sums at once, so that their
/// chains of dependent multiply-adds overlap.
template <int U, int V, int RB, int PL>
__attribute__((target("avx512f"))) void
depthwiseNarrowGroup(int64_t oy, int64_t ow, int64_t ih, int64_t iw, int64_t padTop,
                     const float *plane, const float *w, __m512 bias, const StoreClamp *clamp,
                     float *y) {
  const auto lastLanes = static_cast<__mmask16>((1u << (iw - 16 * (U - 1))) - 1u);
  __m512 acc[RB][V];
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 10
  for (int i = 0; i < RB + 2; ++i) {
    const int64_t iy = oy - padTop + i;
    if (iy < 0 || iy >= ih)
      continue;
    const float *row = plane + iy * iw;
    __m512 R[U + 2];
    R[0] = R[U + 1] = _mm512_setzero_ps();
#pragma GCC unroll 5
    for (int u = 0; u < U; ++u)
      R[u + 1] = u + 1 < U ? _mm512_loadu_ps(row + 16 * u)
                           : _mm512_maskz_loadu_ps(lastLanes, row + 16 * u);
    __m512 t0[V], t1[V], t2[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      t0[v] = narrowTap<0 - PL>(R, v);
      t1[v] = narrowTap<1 - PL>(R, v);
      t2[v] = narrowTap<2 - PL>(R, v);
    }
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) {
      const int ky = i - r;
      if (ky < 0 || ky > 2)
        continue;
      const __m512 w0 = _mm512_set1_ps(w[3 * ky]), w1 = _mm512_set1_ps(w[3 * ky + 1]),
                   w2 = _mm512_set1_ps(w[3 * ky + 2]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        acc[r][v] = _mm512_fmadd_ps(w0, t0[v], acc[r][v]);
        acc[r][v] = _mm512_fmadd_ps(w1, t1[v], acc[r][v]);
        acc[r][v] = _mm512_fmadd_ps(w2, t2[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
    storeDepthwiseSums<V>(acc[r], bias, clamp, 0, ow, y + r * ow);
}

/// RB output rows from oy on, output columns [x0, x0 + 16 V) (stored up to
/// ow), of a 3x3 depthwise convolution at unit strides, for rows of any
/// width: depthwiseNarrowGroup's sums over a strip of the row. R[u] holds
/// input columns x0 - 16 + 16 u (zero outside the row), so each input
/// vector is loaded once for the RB rows and its taps are R's vectors
/// shifted by a lane (no unaligned or checked loads).
template <int V, int RB, int PL>
__attribute__((target("avx512f"))) void
depthwiseStripGroup(int64_t oy, int64_t x0, int64_t ow, int64_t ih, int64_t iw, int64_t padTop,
                    const float *plane, const __m512 *wv, __m512 bias, const StoreClamp *clamp,
                    float *y) {
  __m512 acc[RB][V];
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 10
  for (int i = 0; i < RB + 2; ++i) {
    const int64_t iy = oy - padTop + i;
    if (iy < 0 || iy >= ih)
      continue;
    const float *row = plane + iy * iw;
    __m512 R[V + 2];
#pragma GCC unroll 6
    for (int u = 0; u < V + 2; ++u) {
      const int64_t c = x0 - 16 + 16 * u;
      if (c >= 0 && c + 16 <= iw)
        R[u] = _mm512_loadu_ps(row + c);
      else if (c >= 0 && c < iw)
        R[u] = _mm512_maskz_loadu_ps(simd::firstLanes(iw - c), row + c);
      else
        R[u] = _mm512_setzero_ps(); // left of the row (u = 0 at x0 = 0) or right of it
    }
    __m512 t0[V], t1[V], t2[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      t0[v] = narrowTap<0 - PL>(R, v);
      t1[v] = narrowTap<1 - PL>(R, v);
      t2[v] = narrowTap<2 - PL>(R, v);
    }
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) {
      const int ky = i - r;
      if (ky < 0 || ky > 2)
        continue;
      const __m512 w0 = wv[3 * ky], w1 = wv[3 * ky + 1], w2 = wv[3 * ky + 2];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        acc[r][v] = _mm512_fmadd_ps(w0, t0[v], acc[r][v]);
        acc[r][v] = _mm512_fmadd_ps(w1, t1[v], acc[r][v]);
        acc[r][v] = _mm512_fmadd_ps(w2, t2[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
    storeDepthwiseSums<V>(acc[r], bias, clamp, x0, ow, y + r * ow);
}

/// The last `left` (< R + 1) rows of a strip from oy as one group (as
/// narrowTail).
template <int R, int V, int PL>
__attribute__((target("avx512f"))) inline void
stripTail(int64_t left, int64_t oy, int64_t x0, int64_t ow, int64_t ih, int64_t iw,
          int64_t padTop, const float *plane, const __m512 *wv, __m512 bias,
          const StoreClamp *clamp, float *y) {
  if constexpr (R >= 1) {
    if (left == R)
      return depthwiseStripGroup<V, R, PL>(oy, x0, ow, ih, iw, padTop, plane, wv, bias, clamp, y);
    stripTail<R - 1, V, PL>(left, oy, x0, ow, ih, iw, padTop, plane, wv, bias, clamp, y);
  }
}

/// Output rows [oy0, oy1) (y: row oy0's first output) of one strip of V
/// vectors from x0: groups of rows (about 8 sums at once), then the rows
/// left as one group.
template <int V, int PL>
__attribute__((target("avx512f"))) void
depthwiseStripRows(int64_t oy0, int64_t oy1, int64_t x0, int64_t ow, int64_t ih, int64_t iw,
                   int64_t padTop, const float *plane, const __m512 *wv, __m512 bias,
                   const StoreClamp *clamp, float *y) {
  constexpr int RB = V == 1 ? 8 : V == 2 ? 4 : V == 3 ? 3 : 2;
  int64_t oy = oy0;
  for (; oy + RB <= oy1; oy += RB, y += RB * ow)
    depthwiseStripGroup<V, RB, PL>(oy, x0, ow, ih, iw, padTop, plane, wv, bias, clamp, y);
  stripTail<RB - 1, V, PL>(oy1 - oy, oy, x0, ow, ih, iw, padTop, plane, wv, bias, clamp, y);
}

/// depthwiseStride1Rows: strips of up to four vectors (the last of those
/// left), the weights broadcast once for all of them.
template <int PL>
__attribute__((target("avx512f"))) void
depthwiseStride1Strips(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                       int64_t padTop, const float *plane, const float *w, float bias, float *y,
                       const StoreClamp *clamp) {
  const __m512 bv = _mm512_set1_ps(bias);
  __m512 wv[9];
  for (int t = 0; t < 9; ++t)
    wv[t] = _mm512_set1_ps(w[t]);
  for (int64_t x0 = 0; x0 < ow;) {
    const int64_t v = std::min<int64_t>(4, (ow - x0 + 15) / 16);
    switch (v) {
    case 1:
      depthwiseStripRows<1, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, wv, bv, clamp, y);
      break;
    case 2:
      depthwiseStripRows<2, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, wv, bv, clamp, y);
      break;
    case 3:
      depthwiseStripRows<3, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, wv, bv, clamp, y);
      break;
    default:
      depthwiseStripRows<4, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, wv, bv, clamp, y);
      break;
    }
    x0 += 16 * v;
  }
}

/// The last `left` (< R + 1) rows of a plane from oy as one group, so that
/// their chains of multiply-adds overlap (one row at a time, each of a
/// row's nine dependent multiply-adds waits on the one before).
template <int R, int U, int V, int PL>
__attribute__((target("avx512f"))) inline void
narrowTail(int64_t left, int64_t oy, int64_t ow, int64_t ih, int64_t iw, int64_t padTop,
           const float *plane, const float *w, __m512 bias, const StoreClamp *clamp, float *y) {
  if constexpr (R >= 1) {
    if (left == R)
      return depthwiseNarrowGroup<U, V, R, PL>(oy, ow, ih, iw, padTop, plane, w, bias, clamp, y);
    narrowTail<R - 1, U, V, PL>(left, oy, ow, ih, iw, padTop, plane, w, bias, clamp, y);
  }
}

/// Kernel column KX of input row i of a 5x5 group (depthwise5StripGroup):
/// its taps, R shifted by KX - PL lanes, times kernel row i - r's weight,
/// added to each output row r the input row feeds.
template <int KX, int V, int RB, int PL>
__attribute__((target("avx512f"), always_inline)) inline void
add5Column(const __m512 *R, int i, const float *w, __m512 (&acc)[RB][V]) {
  __m512 t[V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v)
    t[v] = narrowTap<KX - PL>(R, v);
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r) {
    const int ky = i - r;
    if (ky < 0 || ky > 4)
      continue;
    const __m512 wk = _mm512_set1_ps(w[5 * ky + KX]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_fmadd_ps(wk, t[v], acc[r][v]);
  }
}

/// RB output rows from oy on, output columns [x0, x0 + 16 V) (stored up to
/// ow), of a 5x5 depthwise convolution at unit strides (PL columns of left
/// padding, 0 to 2): depthwiseStripGroup's scheme for five taps a row.
/// Each input vector is loaded once for the RB rows; for each kernel
/// column its taps (R shifted by kx - PL lanes) are added to every output
/// row the input row feeds, so each output's taps are summed in kernel-row
/// order, then column order, from zero, as multiTapRow sums them over a
/// padded copy.
template <int V, int RB, int PL>
__attribute__((target("avx512f"))) void
depthwise5StripGroup(int64_t oy, int64_t x0, int64_t ow, int64_t ih, int64_t iw, int64_t padTop,
                     const float *plane, const float *w, __m512 bias, const StoreClamp *clamp,
                     float *y) {
  __m512 acc[RB][V];
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int i = 0; i < RB + 4; ++i) {
    const int64_t iy = oy - padTop + i;
    if (iy < 0 || iy >= ih)
      continue;
    const float *row = plane + iy * iw;
    __m512 R[V + 2];
#pragma GCC unroll 6
    for (int u = 0; u < V + 2; ++u) {
      const int64_t c = x0 - 16 + 16 * u;
      if (c >= 0 && c + 16 <= iw)
        R[u] = _mm512_loadu_ps(row + c);
      else if (c >= 0 && c < iw)
        R[u] = _mm512_maskz_loadu_ps(simd::firstLanes(iw - c), row + c);
      else
        R[u] = _mm512_setzero_ps();
    }
    add5Column<0, V, RB, PL>(R, i, w, acc);
    add5Column<1, V, RB, PL>(R, i, w, acc);
    add5Column<2, V, RB, PL>(R, i, w, acc);
    add5Column<3, V, RB, PL>(R, i, w, acc);
    add5Column<4, V, RB, PL>(R, i, w, acc);
  }
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
    storeDepthwiseSums<V>(acc[r], bias, clamp, x0, ow, y + r * ow);
}

/// The last `left` (< R + 1) rows of a 5x5 strip from oy as one group.
template <int R, int V, int PL>
__attribute__((target("avx512f"))) inline void
strip5Tail(int64_t left, int64_t oy, int64_t x0, int64_t ow, int64_t ih, int64_t iw,
           int64_t padTop, const float *plane, const float *w, __m512 bias,
           const StoreClamp *clamp, float *y) {
  if constexpr (R >= 1) {
    if (left == R)
      return depthwise5StripGroup<V, R, PL>(oy, x0, ow, ih, iw, padTop, plane, w, bias, clamp, y);
    strip5Tail<R - 1, V, PL>(left, oy, x0, ow, ih, iw, padTop, plane, w, bias, clamp, y);
  }
}

/// Output rows [oy0, oy1) (y: row oy0's first output) of one 5x5 strip of
/// V vectors from x0: groups of rows (about 8 sums at once), then the rows
/// left as one group.
template <int V, int PL>
__attribute__((target("avx512f"))) void
depthwise5StripRows(int64_t oy0, int64_t oy1, int64_t x0, int64_t ow, int64_t ih, int64_t iw,
                    int64_t padTop, const float *plane, const float *w, __m512 bias,
                    const StoreClamp *clamp, float *y) {
  constexpr int RB = V == 1 ? 8 : V == 2 ? 4 : 3;
  int64_t oy = oy0;
  for (; oy + RB <= oy1; oy += RB, y += RB * ow)
    depthwise5StripGroup<V, RB, PL>(oy, x0, ow, ih, iw, padTop, plane, w, bias, clamp, y);
  strip5Tail<RB - 1, V, PL>(oy1 - oy, oy, x0, ow, ih, iw, padTop, plane, w, bias, clamp, y);
}

/// depthwiseStride1Rows5: strips of up to four vectors (the last of those
/// left).
template <int PL>
__attribute__((target("avx512f"))) void
depthwise5Strips(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw, int64_t padTop,
                 const float *plane, const float *w, float bias, float *y,
                 const StoreClamp *clamp) {
  const __m512 bv = _mm512_set1_ps(bias);
  for (int64_t x0 = 0; x0 < ow;) {
    const int64_t v = std::min<int64_t>(4, (ow - x0 + 15) / 16);
    switch (v) {
    case 1:
      depthwise5StripRows<1, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, w, bv, clamp, y);
      break;
    case 2:
      depthwise5StripRows<2, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, w, bv, clamp, y);
      break;
    case 3:
      depthwise5StripRows<3, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, w, bv, clamp, y);
      break;
    default:
      depthwise5StripRows<4, PL>(oy0, oy1, x0, ow, ih, iw, padTop, plane, w, bv, clamp, y);
      break;
    }
    x0 += 16 * v;
  }
}

/// depthwiseNarrowRows for U input and V output vectors a row: groups of
/// RB rows (about 8 sums at once), then the rows left as one group.
template <int U, int V, int PL>
__attribute__((target("avx512f"))) void
depthwiseNarrowPlane(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                     int64_t padTop, const float *plane, const float *w, float bias,
                     float *y, const StoreClamp *clamp) {
  constexpr int RB = V == 1 ? 8 : V == 2 ? 4 : V == 3 ? 3 : 2;
  const __m512 bv = _mm512_set1_ps(bias);
  int64_t oy = oy0;
  for (; oy + RB <= oy1; oy += RB, y += RB * ow)
    depthwiseNarrowGroup<U, V, RB, PL>(oy, ow, ih, iw, padTop, plane, w, bv, clamp, y);
  narrowTail<RB - 1, U, V, PL>(oy1 - oy, oy, ow, ih, iw, padTop, plane, w, bv, clamp, y);
}

/// depthwiseNarrowPlane's instance for the geometry, or null.
using NarrowPlaneFn = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                               const float *, const float *, float, float *, const StoreClamp *);
template <int PL> NarrowPlaneFn narrowPlaneFor(int64_t U, int64_t V) {
  static constexpr NarrowPlaneFn kTable[5][4] = {
      {depthwiseNarrowPlane<1, 1, PL>},
      {depthwiseNarrowPlane<2, 1, PL>, depthwiseNarrowPlane<2, 2, PL>},
      {depthwiseNarrowPlane<3, 1, PL>, depthwiseNarrowPlane<3, 2, PL>,
       depthwiseNarrowPlane<3, 3, PL>},
      {depthwiseNarrowPlane<4, 1, PL>, depthwiseNarrowPlane<4, 2, PL>,
       depthwiseNarrowPlane<4, 3, PL>, depthwiseNarrowPlane<4, 4, PL>},
      {depthwiseNarrowPlane<5, 1, PL>, depthwiseNarrowPlane<5, 2, PL>,
       depthwiseNarrowPlane<5, 3, PL>, depthwiseNarrowPlane<5, 4, PL>}};
  return U >= 1 && U <= 5 && V >= 1 && V <= 4 ? kTable[U - 1][V - 1] : nullptr;
}
#endif

} // namespace

void multiTapRow(int64_t n, int64_t taps, const float *const *src, const float *w, float bias,
                 float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  switch (currentIsa().load()) {
  case Isa::Avx512:
    // The common depthwise kernels (3, 3x3, 5x5) get unrolled versions.
    if (taps == 9)
      return multiTapAvx512Fixed<9>(n, src, w, bias, clamp, y);
    if (taps == 25)
      return multiTapAvx512Fixed<25>(n, src, w, bias, clamp, y);
    if (taps == 3)
      return multiTapAvx512Fixed<3>(n, src, w, bias, clamp, y);
    return multiTapAvx512(n, taps, src, w, bias, clamp, y);
  case Isa::Avx2:
    return multiTapAvx2(n, taps, src, w, bias, clamp, y);
  case Isa::Baseline:
    break;
  }
#endif
  multiTapBaseline(n, taps, src, w, bias, clamp, y);
}

namespace {
/// depthwiseStride1Row (S = 1) or depthwiseStride2Row (S = 2).
template <int S>
bool depthwiseRow(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh, const float *const *rows,
                  const float *w, float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    if (S == 2 && (padLeft == 0 || padLeft == 1))
      padLeft == 1
          ? depthwiseStride2EvenRows<1>(0, 1, ow, 0, iw, 0, nullptr, kh, rows, w, bias, y, clamp)
          : depthwiseStride2EvenRows<0>(0, 1, ow, 0, iw, 0, nullptr, kh, rows, w, bias, y, clamp);
    else
      depthwiseRowAvx512<S>(ow, iw, padLeft, kh, rows, w, bias, y, clamp);
    return true;
  }
#endif
  (void)ow, (void)iw, (void)padLeft, (void)kh, (void)rows, (void)w, (void)bias, (void)y,
      (void)clamp;
  return false;
}
} // namespace

bool depthwiseStride2Row(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                         const float *const *rows, const float *w, float bias, float *y,
                         const StoreClamp *clamp) {
  return depthwiseRow<2>(ow, iw, padLeft, kh, rows, w, bias, y, clamp);
}

bool depthwiseStride1Row(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                         const float *const *rows, const float *w, float bias, float *y,
                         const StoreClamp *clamp) {
  return depthwiseRow<1>(ow, iw, padLeft, kh, rows, w, bias, y, clamp);
}

namespace {
/// The narrow-plane kernel for the geometry on the active engine, or null.
#ifdef ONNXSLIM_ISA_X86
NarrowPlaneFn narrowPlane(int64_t ow, int64_t iw, int64_t padLeft) {
  if (currentIsa().load() != Isa::Avx512 || ow < 1 || iw < 1 || padLeft < 0 || padLeft > 1)
    return nullptr;
  const int64_t U = (iw + 15) / 16, V = (ow + 15) / 16;
  if (V > 4 || U > 5 || V > U)
    return nullptr;
  return padLeft == 0 ? narrowPlaneFor<0>(U, V) : narrowPlaneFor<1>(U, V);
}
#endif
} // namespace

bool depthwiseStride2Rows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                          int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                          float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512 && (padLeft == 0 || padLeft == 1)) {
    padLeft == 1 ? depthwiseStride2EvenRows<1>(oy0, oy1, ow, ih, iw, padTop, plane, 3, nullptr, w,
                                               bias, y, clamp)
                 : depthwiseStride2EvenRows<0>(oy0, oy1, ow, ih, iw, padTop, plane, 3, nullptr, w,
                                               bias, y, clamp);
    return true;
  }
#endif
  (void)oy0, (void)oy1, (void)ow, (void)ih, (void)iw, (void)padTop, (void)padLeft, (void)plane,
      (void)w, (void)bias, (void)y, (void)clamp;
  return false;
}

bool depthwiseStride1Rows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                          int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                          float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512 && (padLeft == 0 || padLeft == 1)) {
    padLeft == 1
        ? depthwiseStride1Strips<1>(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp)
        : depthwiseStride1Strips<0>(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp);
    return true;
  }
#endif
  (void)oy0, (void)oy1, (void)ow, (void)ih, (void)iw, (void)padTop, (void)padLeft, (void)plane,
      (void)w, (void)bias, (void)y, (void)clamp;
  return false;
}

bool depthwiseStride1Rows5(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                           int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                           float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512 && padLeft >= 0 && padLeft <= 2) {
    if (padLeft == 2)
      depthwise5Strips<2>(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp);
    else if (padLeft == 1)
      depthwise5Strips<1>(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp);
    else
      depthwise5Strips<0>(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp);
    return true;
  }
#endif
  (void)oy0, (void)oy1, (void)ow, (void)ih, (void)iw, (void)padTop, (void)padLeft, (void)plane,
      (void)w, (void)bias, (void)y, (void)clamp;
  return false;
}

bool depthwiseNarrowFits(int64_t ow, int64_t iw, int64_t padLeft) {
#ifdef ONNXSLIM_ISA_X86
  return narrowPlane(ow, iw, padLeft) != nullptr;
#else
  (void)ow, (void)iw, (void)padLeft;
  return false;
#endif
}

bool depthwiseNarrowRows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                         int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                         float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (NarrowPlaneFn fn = narrowPlane(ow, iw, padLeft)) {
    fn(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp);
    return true;
  }
#endif
  (void)oy0, (void)oy1, (void)ow, (void)ih, (void)iw, (void)padTop, (void)padLeft, (void)plane,
      (void)w, (void)bias, (void)y, (void)clamp;
  return false;
}

bool depthwiseRowsAvailable() {
#ifdef ONNXSLIM_ISA_X86
  return currentIsa().load() == Isa::Avx512;
#else
  return false;
#endif
}

void multiTapRow(int64_t n, int64_t taps, const double *const *src, const double *w, double bias,
                 double *y, const StoreClamp *clamp) {
  multiTapBaseline(n, taps, src, w, bias, clamp, y);
}

} // namespace onnxslim::rt
