//===- runtime/ElementwiseChain.cpp - Fused float elementwise chains -------===//
//
// The chain runs over blocks of kBlock elements: each op is applied to the
// whole block (SIMD body, scalar tail) while it sits in the L1 cache, so
// memory is read once and written once whatever the chain's length.
//
//===----------------------------------------------------------------------===//
#include "runtime/ElementwiseChain.h"
#include "runtime/Gemm.h"
#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"
#include "runtime/VecMath.h"

#include <xsimd/xsimd.hpp>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <vector>
#include <cmath>

namespace onnxslim::rt {
namespace {

/// Elements per block (16 KB of floats: L1-resident with x beside it).
constexpr int64_t kBlock = 4096;

using Batch = xsimd::batch<float>;
constexpr int64_t W = static_cast<int64_t>(Batch::size);

/// v[i] = f(v[i], other[i]) over a block, other being x or the constant
/// (Other = true: x), with the node's operand order (ValueFirst).
template <bool ValueFirst, bool Other, typename F>
void binaryLoop(float *v, const float *x, float c, int64_t n, F f) {
  const Batch cb(c);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    Batch a = Batch::load_aligned(v + i);
    Batch o = Other ? Batch::load_unaligned(x + i) : cb;
    (ValueFirst ? f(a, o) : f(o, a)).store_aligned(v + i);
  }
  for (; i < n; ++i) {
    float o = Other ? x[i] : c;
    v[i] = ValueFirst ? f(v[i], o) : f(o, v[i]);
  }
}

template <typename F> void binary(const ChainOp &op, float *v, const float *x, int64_t n, F f) {
  if (op.valueFirst)
    op.otherIsInput ? binaryLoop<true, true>(v, x, op.c, n, f) : binaryLoop<true, false>(v, x, op.c, n, f);
  else
    op.otherIsInput ? binaryLoop<false, true>(v, x, op.c, n, f) : binaryLoop<false, false>(v, x, op.c, n, f);
}

/// v[i] = clamp(v[i]) as ClipF computes it: below lo -> lo, then above hi
/// -> hi (NaN passes).
void clampLoop(float *v, float lo, float hi, int64_t n) {
  const Batch l(lo), h(hi);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    Batch a = Batch::load_unaligned(v + i);
    a = xsimd::select(a < l, l, a);
    xsimd::select(a > h, h, a).store_unaligned(v + i);
  }
  for (; i < n; ++i) {
    float a = v[i] < lo ? lo : v[i];
    v[i] = a > hi ? hi : a;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define ONNXSLIM_CHAIN_AVX512 1
/// One step of opLoopAvx512 over the 16 lanes of `a` (the value) and `o`.
template <ChainOp::Kind K, bool ValueFirst>
__attribute__((target("avx512f"))) inline __m512 opStepAvx512(__m512 a, __m512 o, __m512 lo,
                                                              __m512 hi) {
  __m512 l = ValueFirst ? a : o, r = ValueFirst ? o : a;
  if constexpr (K == ChainOp::Kind::Add)
    return _mm512_add_ps(l, r);
  else if constexpr (K == ChainOp::Kind::Sub)
    return _mm512_sub_ps(l, r);
  else if constexpr (K == ChainOp::Kind::Mul)
    return _mm512_mul_ps(l, r);
  else if constexpr (K == ChainOp::Kind::Div)
    return _mm512_div_ps(l, r);
  a = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, lo, _CMP_LT_OQ), a, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, hi, _CMP_GT_OQ), a, hi);
}

/// One op over a block with AVX-512 (16 floats a step, masked tail):
/// out[i] = op(in[i], x[i] or the constant), the same IEEE operations and
/// compare-and-select clamps as the kernels. out may be in, or x (a chain
/// run in place): each step reads its lanes before it writes them. The
/// steps before the tail use plain loads and stores: masked ones that miss
/// the cache stall longer (measured on stride-2 column gathers, 1.3x).
template <ChainOp::Kind K, bool ValueFirst, bool Other>
__attribute__((target("avx512f"))) void opLoopAvx512(const ChainOp &op, const float *in,
                                                     float *out, const float *x, int64_t n) {
  const __m512 c = _mm512_set1_ps(op.c), lo = _mm512_set1_ps(op.lo), hi = _mm512_set1_ps(op.hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 o = Other ? _mm512_loadu_ps(x + i) : c;
    _mm512_storeu_ps(out + i, opStepAvx512<K, ValueFirst>(_mm512_loadu_ps(in + i), o, lo, hi));
  }
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    const __m512 o = Other ? _mm512_maskz_loadu_ps(m, x + i) : c;
    _mm512_mask_storeu_ps(
        out + i, m, opStepAvx512<K, ValueFirst>(_mm512_maskz_loadu_ps(m, in + i), o, lo, hi));
  }
}

template <ChainOp::Kind K>
void binaryAvx512(const ChainOp &op, const float *in, float *out, const float *x, int64_t n) {
  if (op.valueFirst)
    op.otherIsInput ? opLoopAvx512<K, true, true>(op, in, out, x, n)
                    : opLoopAvx512<K, true, false>(op, in, out, x, n);
  else
    op.otherIsInput ? opLoopAvx512<K, false, true>(op, in, out, x, n)
                    : opLoopAvx512<K, false, false>(op, in, out, x, n);
}

/// runBlock with AVX-512. The first op reads x and the last writes y, the
/// ones between the block buffer: no pass only copies.
void runBlockAvx512(const std::vector<ChainOp> &ops, const float *x, float *y, int64_t n) {
  alignas(64) float v[kBlock];
  if (ops.empty())
    std::copy(x, x + n, y);
  const float *in = x;
  for (size_t k = 0; k < ops.size(); ++k) {
    const ChainOp &op = ops[k];
    float *out = k + 1 == ops.size() ? y : v;
    switch (op.kind) {
    case ChainOp::Kind::Add:
      binaryAvx512<ChainOp::Kind::Add>(op, in, out, x, n);
      break;
    case ChainOp::Kind::Sub:
      binaryAvx512<ChainOp::Kind::Sub>(op, in, out, x, n);
      break;
    case ChainOp::Kind::Mul:
      binaryAvx512<ChainOp::Kind::Mul>(op, in, out, x, n);
      break;
    case ChainOp::Kind::Div:
      binaryAvx512<ChainOp::Kind::Div>(op, in, out, x, n);
      break;
    case ChainOp::Kind::Clip:
      opLoopAvx512<ChainOp::Kind::Clip, true, false>(op, in, out, x, n);
      break;
    case ChainOp::Kind::Sigmoid:
      // A sigmoid times the chain's input (SiLU, Swish) in one pass.
      if (k + 1 < ops.size() && ops[k + 1].kind == ChainOp::Kind::Mul && ops[k + 1].otherIsInput) {
        out = k + 2 == ops.size() ? y : v;
        vmath::sigmoidMul(in, x, out, n, !ops[k + 1].valueFirst);
        ++k;
        break;
      }
      vmath::sigmoid(in, out, n);
      break;
    case ChainOp::Kind::Tanh:
      vmath::tanh(in, out, n);
      break;
    case ChainOp::Kind::Erf:
      vmath::erf(in, out, n);
      break;
    }
    in = out;
  }
}
#endif

void runBlock(const std::vector<ChainOp> &ops, const float *x, float *y, int64_t n) {
  alignas(64) float v[kBlock];
  std::copy(x, x + n, v);
  for (const ChainOp &op : ops) {
    switch (op.kind) {
    case ChainOp::Kind::Add:
      binary(op, v, x, n, [](auto a, auto b) { return a + b; });
      break;
    case ChainOp::Kind::Sub:
      binary(op, v, x, n, [](auto a, auto b) { return a - b; });
      break;
    case ChainOp::Kind::Mul:
      binary(op, v, x, n, [](auto a, auto b) { return a * b; });
      break;
    case ChainOp::Kind::Div:
      binary(op, v, x, n, [](auto a, auto b) { return a / b; });
      break;
    case ChainOp::Kind::Clip:
      clampLoop(v, op.lo, op.hi, n);
      break;
    case ChainOp::Kind::Sigmoid:
      vmath::sigmoid(v, v, n);
      break;
    case ChainOp::Kind::Tanh:
      vmath::tanh(v, v, n);
      break;
    case ChainOp::Kind::Erf:
      vmath::erf(v, v, n);
      break;
    }
  }
  std::copy(v, v + n, y);
}

/// Whether the AVX-512 loops run: the GEMM engine's choice stands for the
/// whole runtime (and follows ONNXSLIM_GEMM_ISA / setGemmEngine in tests).
[[maybe_unused]] bool avx512Active() { return gemmEngineIsAvx512(); }

} // namespace

void clampFloats(float *p, int64_t n, float lo, float hi) {
  ChainOp op;
  op.kind = ChainOp::Kind::Clip;
  op.lo = lo;
  op.hi = hi;
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active()) {
    opLoopAvx512<ChainOp::Kind::Clip, true, false>(op, p, p, p, n);
    return;
  }
#endif
  clampLoop(p, lo, hi, n);
}

namespace {

/// sumFloats' last steps: the 32 lanes combined, then the tail from `from`.
double combineLanes(const double *s, const float *x, int64_t from, int64_t n) {
  double t[8];
  for (int l = 0; l < 8; ++l)
    t[l] = (s[l] + s[l + 8]) + (s[l + 16] + s[l + 24]);
  double sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  for (int64_t i = from; i < n; ++i)
    sum += static_cast<double>(x[i]);
  return sum;
}

#ifdef ONNXSLIM_CHAIN_AVX512
__attribute__((target("avx512f"))) double sumFloatsAvx512(const float *x, int64_t n) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm512_add_pd(a0, _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(x + i)));
    a1 = _mm512_add_pd(a1, _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(x + i + 8)));
    a2 = _mm512_add_pd(a2, _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(x + i + 16)));
    a3 = _mm512_add_pd(a3, _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(x + i + 24)));
  }
  alignas(64) double s[32];
  _mm512_store_pd(s, a0);
  _mm512_store_pd(s + 8, a1);
  _mm512_store_pd(s + 16, a2);
  _mm512_store_pd(s + 24, a3);
  return combineLanes(s, x, i, n);
}
#endif

#ifdef ONNXSLIM_CHAIN_AVX512
/// Eight floats at p widened to double, less m.
__attribute__((target("avx512f"), always_inline)) inline __m512d deviations(const float *p, __m512d m) {
  return _mm512_sub_pd(_mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p)), m);
}

/// The sum of (x[i] - mean)^2 in double, in sumFloats' lane order.
__attribute__((target("avx512f"))) double sumSquaresAvx512(const float *x, int64_t n, double mean) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  const __m512d m = _mm512_set1_pd(mean);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512d d0 = deviations(x + i, m), d1 = deviations(x + i + 8, m), d2 = deviations(x + i + 16, m),
            d3 = deviations(x + i + 24, m);
    a0 = _mm512_fmadd_pd(d0, d0, a0);
    a1 = _mm512_fmadd_pd(d1, d1, a1);
    a2 = _mm512_fmadd_pd(d2, d2, a2);
    a3 = _mm512_fmadd_pd(d3, d3, a3);
  }
  alignas(64) double s[32];
  _mm512_store_pd(s, a0);
  _mm512_store_pd(s + 8, a1);
  _mm512_store_pd(s + 16, a2);
  _mm512_store_pd(s + 24, a3);
  double t[8];
  for (int l = 0; l < 8; ++l)
    t[l] = (s[l] + s[l + 8]) + (s[l + 16] + s[l + 24]);
  double sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  for (; i < n; ++i) {
    double d = static_cast<double>(x[i]) - mean;
    sum = std::fma(d, d, sum);
  }
  return sum;
}

__attribute__((target("avx512f"))) void normalizeRowAvx512(const float *x, float *y, int64_t n, float m, float s,
                                                           const float *scale, const float *bias) {
  const __m512 vm = _mm512_set1_ps(m), vs = _mm512_set1_ps(s);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm), vs), _mm512_loadu_ps(scale + i));
    _mm512_storeu_ps(y + i, bias ? _mm512_add_ps(v, _mm512_loadu_ps(bias + i)) : v);
  }
  if (i < n) {
    const auto k = static_cast<__mmask16>((1u << (n - i)) - 1u);
    __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm), vs),
                             _mm512_maskz_loadu_ps(k, scale + i));
    _mm512_mask_storeu_ps(y + i, k, bias ? _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, bias + i)) : v);
  }
}
#endif

} // namespace

void meanInvStd(const float *x, int64_t n, double eps, double &mean, double &invStd) {
  mean = n ? sumFloats(x, n) / static_cast<double>(n) : 0.0;
  double sq = 0;
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active()) {
    sq = sumSquaresAvx512(x, n, mean);
  } else
#endif
  {
    double s[32] = {};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
      for (int k = 0; k < 32; ++k) {
        double d = static_cast<double>(x[i + k]) - mean;
        s[k] += d * d;
      }
    double t[8];
    for (int l = 0; l < 8; ++l)
      t[l] = (s[l] + s[l + 8]) + (s[l + 16] + s[l + 24]);
    sq = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    for (; i < n; ++i) {
      double d = static_cast<double>(x[i]) - mean;
      sq += d * d;
    }
  }
  invStd = 1.0 / std::sqrt((n ? sq / static_cast<double>(n) : 0.0) + eps);
}

void layerNormRow(const float *x, float *y, int64_t n, const float *scale, const float *bias, double eps,
                  double &mean, double &invStd) {
  meanInvStd(x, n, eps, mean, invStd);
  const float m = static_cast<float>(mean), s = static_cast<float>(invStd);
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active()) {
    normalizeRowAvx512(x, y, n, m, s, scale, bias);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) {
    float v = (x[i] - m) * s * scale[i];
    y[i] = bias ? v + bias[i] : v;
  }
}

double sumFloats(const float *x, int64_t n) {
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active())
    return sumFloatsAvx512(x, n);
#endif
  double s[32] = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 32; ++k)
      s[k] += static_cast<double>(x[i + k]);
  return combineLanes(s, x, i, n);
}

#ifdef ONNXSLIM_CHAIN_AVX512
/// sumChannelsLast with the eight channels of a block in the lanes of one
/// register of doubles (a short last block masked): lane j does channel j's
/// additions in sumFloats' order, as the scalar loop does.
__attribute__((target("avx512f"))) void sumChannelsLastAvx512(const float *x, int64_t P, int64_t C,
                                                             double *sums) {
  for (int64_t c0 = 0; c0 < C; c0 += 8) {
    const int64_t cn = std::min<int64_t>(8, C - c0);
    const __mmask8 m = static_cast<__mmask8>(cn == 8 ? 0xFF : (1u << cn) - 1u);
    const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cn)),
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#define ONNXSLIM_AT(i) _mm512_maskz_cvtps_pd(0xFF, _mm256_maskload_ps(x + (i) * C + c0, lanes))
    __m512d s[32];
    for (int k = 0; k < 32; ++k)
      s[k] = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 32 <= P; i += 32)
      for (int k = 0; k < 32; ++k)
        s[k] = _mm512_add_pd(s[k], ONNXSLIM_AT(i + k));
    __m512d t[8];
    for (int q = 0; q < 8; ++q)
      t[q] = _mm512_add_pd(_mm512_add_pd(s[q], s[q + 8]), _mm512_add_pd(s[q + 16], s[q + 24]));
    __m512d sum = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(t[0], t[1]), _mm512_add_pd(t[2], t[3])),
                                _mm512_add_pd(_mm512_add_pd(t[4], t[5]), _mm512_add_pd(t[6], t[7])));
    for (; i < P; ++i)
      sum = _mm512_add_pd(sum, ONNXSLIM_AT(i));
#undef ONNXSLIM_AT
    _mm512_mask_storeu_pd(sums + c0, m, sum);
  }
}
#endif

void sumChannelsLast(const float *x, int64_t P, int64_t C, double *sums) {
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active())
    return sumChannelsLastAvx512(x, P, C, sums);
#endif
  // Eight channels at a time: sumFloats' 32 lanes of each (lane k of
  // channel j at s[k][j]), its combination of the lanes, then its tail in
  // order; the channels innermost.
  constexpr int64_t kChannels = 8;
  for (int64_t c0 = 0; c0 < C; c0 += kChannels) {
    const int64_t cn = std::min(kChannels, C - c0);
    double s[32][kChannels] = {};
    int64_t i = 0;
    for (; i + 32 <= P; i += 32)
      for (int64_t k = 0; k < 32; ++k) {
        const float *px = x + (i + k) * C + c0;
        for (int64_t j = 0; j < cn; ++j)
          s[k][j] += static_cast<double>(px[j]);
      }
    double *out = sums + c0;
    for (int64_t j = 0; j < cn; ++j) {
      double t[8];
      for (int q = 0; q < 8; ++q)
        t[q] = (s[q][j] + s[q + 8][j]) + (s[q + 16][j] + s[q + 24][j]);
      out[j] = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    }
    for (; i < P; ++i) {
      const float *px = x + i * C + c0;
      for (int64_t j = 0; j < cn; ++j)
        out[j] += static_cast<double>(px[j]);
    }
  }
}

void sumPlanes(const float *x, int64_t planes, int64_t P, double *sums) {
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active() && P < kSmallPlaneSums) {
    // Sixteen planes at a time turned channels last (register transposes),
    // then summed eight planes a register.
    thread_local std::vector<float> turned;
    turned.resize(static_cast<size_t>(16 * P));
    for (int64_t p0 = 0; p0 < planes; p0 += 16) {
      const int64_t pn = std::min<int64_t>(16, planes - p0);
      simd::transposeFloatsAvx512(x + p0 * P, P, pn, P, turned.data(), pn);
      sumChannelsLastAvx512(turned.data(), P, pn, sums + p0);
    }
    return;
  }
#endif
  for (int64_t p = 0; p < planes; ++p)
    sums[p] = sumFloats(x + p * P, P);
}

void addFloats(float *p, const float *z, int64_t n) {
  ChainOp op;
  op.kind = ChainOp::Kind::Add;
  op.otherIsInput = true;
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active()) {
    opLoopAvx512<ChainOp::Kind::Add, true, true>(op, p, p, z, n);
    return;
  }
#endif
  int64_t i = 0;
  for (; i + W <= n; i += W)
    (Batch::load_unaligned(p + i) + Batch::load_unaligned(z + i)).store_unaligned(p + i);
  for (; i < n; ++i)
    p[i] = p[i] + z[i];
}

#ifdef ONNXSLIM_CHAIN_AVX512
namespace {
/// Stores the 16 (masked: m) even-position floats v at y: as they are, or
/// (Max) as max pooling's combine step, v > y ? v : y (max_ps's order: a
/// NaN tap leaves y alone; the masked form, as GCC 12 warns about the
/// unmasked one's undefined source).
template <bool Max>
__attribute__((target("avx512f"))) inline void storeEvens(float *y, __mmask16 m, __m512 v) {
  if constexpr (Max) {
    const __m512 w = m == 0xFFFF ? _mm512_loadu_ps(y) : _mm512_maskz_loadu_ps(m, y);
    v = _mm512_mask_max_ps(w, m, v, w);
  }
  if (m == 0xFFFF)
    _mm512_storeu_ps(y, v);
  else
    _mm512_mask_storeu_ps(y, m, v);
}

/// gatherEvenFloats (Max: maxEvenFloats) with AVX-512, 16 outputs a step
/// from 31 floats: plain loads while all 32 are wanted (masked loads that
/// miss the cache stalled 1.3x as long as SSE shuffles over the same rows),
/// then two masked loads, the second to 15 at most, so that no step reads
/// past src[2(n-1)].
template <bool Max>
__attribute__((target("avx512f"))) void evenColumnsAvx512(const float *src, int64_t n, float *y) {
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  int64_t i = 0;
  for (; i + 17 <= n; i += 16) // reads src[2i .. 2i+31], 2i+31 <= 2(n-1)
    storeEvens<Max>(y + i, 0xFFFF,
                    _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * i), evens,
                                           _mm512_loadu_ps(src + 2 * i + 16)));
  for (; i < n; i += 16) {
    const int64_t left = 2 * (n - i) - 1; // floats of src still wanted
    const __mmask16 lo = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __mmask16 hi = left >= 31 ? __mmask16(0x7FFF)
                         : left > 16 ? __mmask16((1u << (left - 16)) - 1)
                                     : __mmask16(0);
    const __mmask16 out = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(lo, src + 2 * i);
    const __m512 b = _mm512_maskz_loadu_ps(hi, src + 2 * i + 16);
    storeEvens<Max>(y + i, out, _mm512_permutex2var_ps(a, evens, b));
  }
}
} // namespace
#endif

namespace {
/// gatherEvenFloats (Max: maxEvenFloats), AVX-512 where the GEMM engine is,
/// else SSE shuffles where available.
template <bool Max> void evenColumns(const float *src, int64_t n, float *y) {
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active()) {
    evenColumnsAvx512<Max>(src, n, y);
    return;
  }
#endif
  int64_t i = 0;
#ifdef __SSE2__
  // The loads read src[2i .. 2i+7], within src[0 .. 2(n-1)] while i + 4 < n.
  for (; i + 4 < n; i += 4) {
    __m128 a = _mm_loadu_ps(src + 2 * i), b = _mm_loadu_ps(src + 2 * i + 4);
    __m128 v = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    if constexpr (Max)
      v = _mm_max_ps(v, _mm_loadu_ps(y + i));
    _mm_storeu_ps(y + i, v);
  }
#endif
  for (; i < n; ++i)
    y[i] = !Max || src[2 * i] > y[i] ? src[2 * i] : y[i];
}
} // namespace

void gatherEvenFloats(const float *src, int64_t n, float *y) { evenColumns<false>(src, n, y); }

void maxEvenFloats(const float *src, int64_t n, float *y) { evenColumns<true>(src, n, y); }

void runElementwiseChain(const std::vector<ChainOp> &ops, const float *x, float *y, int64_t n) {
  auto block = runBlock;
#ifdef ONNXSLIM_CHAIN_AVX512
  if (avx512Active())
    block = runBlockAvx512;
#endif
  // A chain with a sigmoid, tanh or erf is compute-bound, and splits from
  // fewer elements.
  const bool transcendental = std::any_of(ops.begin(), ops.end(), [](const ChainOp &op) {
    return op.kind == ChainOp::Kind::Sigmoid || op.kind == ChainOp::Kind::Tanh ||
           op.kind == ChainOp::Kind::Erf;
  });
  parallelSpans(
      n, kBlock,
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; b += kBlock)
          block(ops, x + b, y + b, std::min(kBlock, end - b));
      },
      transcendental ? kParallelMinTranscendentalElements : kParallelMinElements);
}

} // namespace onnxslim::rt
