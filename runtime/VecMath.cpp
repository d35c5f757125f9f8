//===- runtime/VecMath.cpp - Transcendental functions on float spans ------===//
//
// The AVX2 + FMA and AVX-512F forms of exp, sigmoid, tanh, erf and GELU
// (VecMath.h): the functions are written once (VecMathWide.inc) over a
// small set of vector operations defined here per width, under function
// target attributes like the GEMM micro-kernels, so the rest of the binary
// stays portable. Each lane sees the same operations at either width, so
// the AVX-512 family computes the same bits as the AVX2 one, twice as many
// lanes at a time. The portable forms are xsimd's.
//
//===----------------------------------------------------------------------===//
#include "runtime/VecMath.h"

#include "runtime/Simd.h"

#include <algorithm>
#include <cmath>

namespace onnxslim::rt::vmath {

#if ONNXSLIM_ISA_X86
// The AVX2 + FMA width: 8 lanes, comparisons as lane masks.
namespace w256 {
#define VM __attribute__((target("avx2,fma")))
using V = __m256;
using VI = __m256i;
using M = __m256;
constexpr int64_t kLanes = 8;
VM inline V set1(float v) { return _mm256_set1_ps(v); }
VM inline VI set1i(int v) { return _mm256_set1_epi32(v); }
VM inline V zero() { return _mm256_setzero_ps(); }
VM inline V add(V a, V b) { return _mm256_add_ps(a, b); }
VM inline V sub(V a, V b) { return _mm256_sub_ps(a, b); }
VM inline V mul(V a, V b) { return _mm256_mul_ps(a, b); }
VM inline V div(V a, V b) { return _mm256_div_ps(a, b); }
VM inline V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
VM inline V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
VM inline V vmin(V a, V b) { return _mm256_min_ps(a, b); }
VM inline V vmax(V a, V b) { return _mm256_max_ps(a, b); }
VM inline V roundNearest(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
VM inline VI toInt(V a) { return _mm256_cvtps_epi32(a); }
VM inline V asFloat(VI a) { return _mm256_castsi256_ps(a); }
VM inline VI srai1(VI a) { return _mm256_srai_epi32(a, 1); }
VM inline VI slli23(VI a) { return _mm256_slli_epi32(a, 23); }
VM inline VI addi(VI a, VI b) { return _mm256_add_epi32(a, b); }
VM inline VI subi(VI a, VI b) { return _mm256_sub_epi32(a, b); }
VM inline V bitXor(V a, V b) { return _mm256_xor_ps(a, b); }
VM inline V bitAnd(V a, V b) { return _mm256_and_ps(a, b); }
VM inline V bitOr(V a, V b) { return _mm256_or_ps(a, b); }
VM inline V bitAndNot(V a, V b) { return _mm256_andnot_ps(a, b); }
VM inline M greater(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
VM inline M greaterEqual(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
VM inline M less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
VM inline M unordered(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
/// Per lane: ifTrue where m holds, else ifFalse.
VM inline V select(M m, V ifFalse, V ifTrue) { return _mm256_blendv_ps(ifFalse, ifTrue, m); }
VM inline V load(const float *p) { return _mm256_loadu_ps(p); }
VM inline void store(float *p, V v) { _mm256_storeu_ps(p, v); }
VM inline VI firstLanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
VM inline V loadFirst(const float *p, int64_t n) { return _mm256_maskload_ps(p, firstLanes(n)); }
VM inline void storeFirst(float *p, int64_t n, V v) { _mm256_maskstore_ps(p, firstLanes(n), v); }
/// p 2^n for an integral n in [-252, 254], rounded once: p times two
/// normal powers of two, the first product exact.
VM inline V scaleByPow2(V p, V n) {
  VI ni = toInt(n);
  VI n1 = srai1(ni);
  VI n2 = subi(ni, n1);
  VI bias = set1i(127);
  V s1 = asFloat(slli23(addi(n1, bias)));
  V s2 = asFloat(slli23(addi(n2, bias)));
  return mul(mul(p, s1), s2);
}
#include "runtime/VecMathWide.inc"
#undef VM
} // namespace w256

// The AVX-512F width: 16 lanes, comparisons as mask registers. (The maskz
// forms: the plain ones start from an undefined vector that GCC 12
// reports as maybe uninitialized; AVX-512F has no float bitwise ops, so
// they go through the integer ones.)
namespace w512 {
#define VM __attribute__((target("avx512f")))
using V = __m512;
using VI = __m512i;
using M = __mmask16;
constexpr int64_t kLanes = 16;
constexpr __mmask16 kAll = 0xFFFF;
VM inline V set1(float v) { return _mm512_set1_ps(v); }
VM inline VI set1i(int v) { return _mm512_set1_epi32(v); }
VM inline V zero() { return _mm512_setzero_ps(); }
VM inline V add(V a, V b) { return _mm512_add_ps(a, b); }
VM inline V sub(V a, V b) { return _mm512_sub_ps(a, b); }
VM inline V mul(V a, V b) { return _mm512_mul_ps(a, b); }
VM inline V div(V a, V b) { return _mm512_div_ps(a, b); }
VM inline V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
VM inline V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
VM inline V vmin(V a, V b) { return _mm512_maskz_min_ps(kAll, a, b); }
VM inline V vmax(V a, V b) { return _mm512_maskz_max_ps(kAll, a, b); }
VM inline V roundNearest(V a) {
  return _mm512_maskz_roundscale_ps(kAll, a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
VM inline VI toInt(V a) { return _mm512_maskz_cvtps_epi32(kAll, a); }
VM inline V asFloat(VI a) { return _mm512_castsi512_ps(a); }
VM inline VI srai1(VI a) { return _mm512_maskz_srai_epi32(kAll, a, 1); }
VM inline VI slli23(VI a) { return _mm512_maskz_slli_epi32(kAll, a, 23); }
VM inline VI addi(VI a, VI b) { return _mm512_add_epi32(a, b); }
VM inline VI subi(VI a, VI b) { return _mm512_sub_epi32(a, b); }
VM inline VI bits(V a) { return _mm512_castps_si512(a); }
VM inline V bitXor(V a, V b) { return asFloat(_mm512_maskz_xor_epi32(kAll, bits(a), bits(b))); }
VM inline V bitAnd(V a, V b) { return asFloat(_mm512_maskz_and_epi32(kAll, bits(a), bits(b))); }
VM inline V bitOr(V a, V b) { return asFloat(_mm512_maskz_or_epi32(kAll, bits(a), bits(b))); }
VM inline V bitAndNot(V a, V b) { return asFloat(_mm512_maskz_andnot_epi32(kAll, bits(a), bits(b))); }
VM inline M greater(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
VM inline M greaterEqual(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
VM inline M less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
VM inline M unordered(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
/// Per lane: ifTrue where m holds, else ifFalse.
VM inline V select(M m, V ifFalse, V ifTrue) { return _mm512_mask_blend_ps(m, ifFalse, ifTrue); }
VM inline V load(const float *p) { return _mm512_loadu_ps(p); }
VM inline void store(float *p, V v) { _mm512_storeu_ps(p, v); }
VM inline V loadFirst(const float *p, int64_t n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p);
}
VM inline void storeFirst(float *p, int64_t n, V v) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
}
/// p 2^n for an integral n, rounded once (VSCALEFPS): the AVX2 width's
/// bits in one instruction.
VM inline V scaleByPow2(V p, V n) { return _mm512_maskz_scalef_ps(kAll, p, n); }
#include "runtime/VecMathWide.inc"
#undef VM
} // namespace w512
#endif

namespace {

/// The portable forms: xsimd batches of the compile-time architecture, the
/// tail through a zero-padded batch, so that every element goes through
/// the same operations wherever a span is cut.
template <typename F> void spanPortable(const float *in, float *out, int64_t n, F f) {
  using B = xsimd::batch<float>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  int64_t i = 0;
  for (; i + W <= n; i += W)
    f(B::load_unaligned(in + i)).store_unaligned(out + i);
  if (i < n) {
    alignas(64) float pad[W] = {};
    std::copy(in + i, in + n, pad);
    f(B::load_aligned(pad)).store_aligned(pad);
    std::copy(pad, pad + (n - i), out + i);
  }
}

using B = xsimd::batch<float>;
B expPortable(B x) { return xsimd::exp(x); }
B sigmoidPortable(B x) { return B(1.0f) / (B(1.0f) + xsimd::exp(-x)); }
B tanhPortable(B x) { return xsimd::tanh(x); }
B erfPortable(B x) { return xsimd::erf(x); }
B geluPortable(B x) { return B(0.5f) * x * (B(1.0f) + xsimd::erf(x * B(0.70710678118654752f))); }

} // namespace

bool wide() {
#if ONNXSLIM_ISA_X86
  simd::Isa isa = simd::currentIsa().load();
  return isa == simd::Isa::Avx2 || isa == simd::Isa::Avx512;
#else
  return false;
#endif
}

#if ONNXSLIM_ISA_X86
#define ONNXSLIM_VMATH_SPAN(name, Op, portable)                                                            \
  void name(const float *in, float *out, int64_t n) {                                                     \
    const simd::Isa isa = simd::currentIsa().load();                                                       \
    if (isa == simd::Isa::Avx512)                                                                          \
      w512::span<w512::Op>(in, out, n);                                                                    \
    else if (isa == simd::Isa::Avx2)                                                                       \
      w256::span<w256::Op>(in, out, n);                                                                    \
    else                                                                                                   \
      spanPortable(in, out, n, portable);                                                                  \
  }
#else
#define ONNXSLIM_VMATH_SPAN(name, Op, portable)                                                            \
  void name(const float *in, float *out, int64_t n) { spanPortable(in, out, n, portable); }
#endif
ONNXSLIM_VMATH_SPAN(exp, Exp, expPortable)
ONNXSLIM_VMATH_SPAN(sigmoid, Sigmoid, sigmoidPortable)
ONNXSLIM_VMATH_SPAN(tanh, Tanh, tanhPortable)
ONNXSLIM_VMATH_SPAN(erf, Erf, erfPortable)
ONNXSLIM_VMATH_SPAN(gelu, Gelu, geluPortable)
#undef ONNXSLIM_VMATH_SPAN

void sigmoidMul(const float *in, const float *x, float *out, int64_t n, bool xFirst) {
#if ONNXSLIM_ISA_X86
  const simd::Isa isa = simd::currentIsa().load();
  if (isa == simd::Isa::Avx512)
    return xFirst ? w512::sigmoidMulSpan<true>(in, x, out, n)
                  : w512::sigmoidMulSpan<false>(in, x, out, n);
  if (isa == simd::Isa::Avx2)
    return xFirst ? w256::sigmoidMulSpan<true>(in, x, out, n)
                  : w256::sigmoidMulSpan<false>(in, x, out, n);
#endif
  // In blocks, so that out may be x: each block's sigmoids, then products.
  constexpr int64_t kBlock = 256;
  float s[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    sigmoid(in + b, s, m);
    for (int64_t i = 0; i < m; ++i)
      out[b + i] = xFirst ? x[b + i] * s[i] : s[i] * x[b + i];
  }
}

void softmax(const float *x, float *out, int64_t n) {
#if ONNXSLIM_ISA_X86
  const simd::Isa isa = simd::currentIsa().load();
  if (isa == simd::Isa::Avx512)
    return w512::softmaxW(x, out, n);
  if (isa == simd::Isa::Avx2)
    return w256::softmaxW(x, out, n);
#endif
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i)
    m = std::max(m, x[i]);
  if (std::isinf(m))
    m = 0;
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] - m;
  exp(out, out, n);
  constexpr int64_t kGroup = 16;
  float lanes[kGroup] = {};
  int64_t i = 0;
  for (; i + kGroup <= n; i += kGroup)
    for (int64_t k = 0; k < kGroup; ++k)
      lanes[k] += out[i + k];
  for (int64_t w = kGroup / 2; w >= 1; w /= 2)
    for (int64_t k = 0; k < w; ++k)
      lanes[k] += lanes[k + w];
  float sum = lanes[0];
  for (; i < n; ++i)
    sum += out[i];
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j)
    out[j] *= inv;
}

} // namespace onnxslim::rt::vmath
