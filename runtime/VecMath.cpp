//===- runtime/VecMath.cpp - Transcendental functions on float spans ------===//
//
// AVX2 + FMA forms of exp, sigmoid, tanh, erf and GELU (VecMath.h), under
// function target attributes like the GEMM micro-kernels, so the rest of
// the binary stays portable.
//
// exp: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for an exact
// reduction), e^r by Cephes' degree-5 polynomial, then 2^n applied as two
// factors 2^(n/2) and 2^(n - n/2), each a normal float for every n the
// clamp lets through, so results near FLT_MAX and down in the subnormals
// are rounded once. tanh: Cephes' odd polynomial below 0.625, 1 - 2 /
// (e^2|x| + 1) above. erf: x P(x^2) below 0.921875 and 1 - e^Q(|x|) up to
// 3.925 (1 above), with P (degree 5) and Q (degree 8) least-squares fits
// to erf in double, checked on a dense grid to 1.8e-7 relative and 8e-8
// absolute in float. GELU takes e^Q itself (erfc) on its negative side, so
// its left tail keeps its relative accuracy down to where erfc leaves the
// fit (x = -5.55, |GELU| < 1e-7; 0 below).
//
//===----------------------------------------------------------------------===//
#include "runtime/VecMath.h"

#include "runtime/Simd.h"

#include <algorithm>
#include <cmath>

namespace onnxslim::rt::vmath {

#if ONNXSLIM_ISA_X86
namespace {

#define ONNXSLIM_AVX2 __attribute__((target("avx2,fma")))

ONNXSLIM_AVX2 inline __m256 set1(float v) { return _mm256_set1_ps(v); }

/// 2^n for n in [-252, 254], as the product of two normal powers of two.
ONNXSLIM_AVX2 inline __m256 scaleByPow2(__m256 p, __m256i n) {
  __m256i n1 = _mm256_srai_epi32(n, 1);
  __m256i n2 = _mm256_sub_epi32(n, n1);
  __m256i bias = _mm256_set1_epi32(127);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

ONNXSLIM_AVX2 inline __m256 expAvx2(__m256 x) {
  const __m256 hi = set1(88.72283935546875f);   // past ln(FLT_MAX): +inf
  const __m256 lo = set1(-103.97208404541015f); // below ln(2^-150): 0
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  __m256 fx = _mm256_round_ps(_mm256_mul_ps(xc, set1(1.44269504088896341f)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fx, set1(0.693359375f), xc);
  r = _mm256_fnmadd_ps(fx, set1(-2.12194440e-4f), r);
  __m256 p = set1(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, set1(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, set1(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, set1(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, set1(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, set1(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, set1(1.0f)));
  __m256 y = scaleByPow2(p, _mm256_cvtps_epi32(fx));
  y = _mm256_blendv_ps(y, set1(INFINITY), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

ONNXSLIM_AVX2 inline __m256 negate(__m256 x) { return _mm256_xor_ps(x, set1(-0.0f)); }
ONNXSLIM_AVX2 inline __m256 absolute(__m256 x) { return _mm256_andnot_ps(set1(-0.0f), x); }
/// |m| with the sign of s.
ONNXSLIM_AVX2 inline __m256 withSignOf(__m256 m, __m256 s) {
  return _mm256_or_ps(absolute(m), _mm256_and_ps(s, set1(-0.0f)));
}

/// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| never
/// overflows, so tiny results come out as the subnormals they are.
ONNXSLIM_AVX2 inline __m256 sigmoidAvx2(__m256 x) {
  __m256 e = expAvx2(negate(absolute(x)));
  __m256 r = _mm256_div_ps(set1(1.0f), _mm256_add_ps(set1(1.0f), e));
  return _mm256_blendv_ps(r, _mm256_mul_ps(e, r), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

ONNXSLIM_AVX2 inline __m256 tanhAvx2(__m256 x) {
  __m256 ax = absolute(x);
  __m256 z = _mm256_mul_ps(x, x);
  __m256 p = set1(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, z, set1(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, z, set1(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, z, set1(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, z, set1(-3.33332819422e-1f));
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  __m256 e = expAvx2(_mm256_add_ps(ax, ax));
  __m256 large = _mm256_sub_ps(set1(1.0f), _mm256_div_ps(set1(2.0f), _mm256_add_ps(e, set1(1.0f))));
  large = withSignOf(large, x);
  return _mm256_blendv_ps(large, small, _mm256_cmp_ps(ax, set1(0.625f), _CMP_LT_OQ));
}

/// x P(x^2) below 0.921875 in magnitude (the first result), and e^Q(|x|),
/// which is erfc(|x|), from there to 3.925 (0 above; the second result).
ONNXSLIM_AVX2 inline void erfParts(__m256 x, __m256 &small, __m256 &tail) {
  __m256 ax = absolute(x);
  __m256 z = _mm256_mul_ps(x, x);
  __m256 p = set1(-6.024591904952171e-4f);
  p = _mm256_fmadd_ps(p, z, set1(5.000893867912019e-3f));
  p = _mm256_fmadd_ps(p, z, set1(-2.6772956714796743e-2f));
  p = _mm256_fmadd_ps(p, z, set1(1.128203920594599e-1f));
  p = _mm256_fmadd_ps(p, z, set1(-3.761252410026674e-1f));
  p = _mm256_fmadd_ps(p, z, set1(1.1283791592851806f));
  small = _mm256_mul_ps(x, p);
  __m256 q = set1(1.6354645440580787e-6f);
  q = _mm256_fmadd_ps(q, ax, set1(-4.599118804113084e-5f));
  q = _mm256_fmadd_ps(q, ax, set1(5.959567162558041e-4f));
  q = _mm256_fmadd_ps(q, ax, set1(-4.754273078276432e-3f));
  q = _mm256_fmadd_ps(q, ax, set1(2.6402174076100016e-2f));
  q = _mm256_fmadd_ps(q, ax, set1(-1.100399519948007e-1f));
  q = _mm256_fmadd_ps(q, ax, set1(-6.318758442500411e-1f));
  q = _mm256_fmadd_ps(q, ax, set1(-1.1302001303095444f));
  q = _mm256_fmadd_ps(q, ax, set1(3.109095670176292e-4f));
  tail = _mm256_blendv_ps(expAvx2(q), _mm256_setzero_ps(), _mm256_cmp_ps(ax, set1(3.925f), _CMP_GE_OQ));
}

ONNXSLIM_AVX2 inline __m256 erfAvx2(__m256 x) {
  __m256 small, tail;
  erfParts(x, small, tail);
  __m256 large = withSignOf(_mm256_sub_ps(set1(1.0f), tail), x);
  return _mm256_blendv_ps(large, small, _mm256_cmp_ps(absolute(x), set1(0.921875f), _CMP_LT_OQ));
}

/// 0.5 x (1 + erf(x / sqrt 2)), with 1 + erf(t) for t <= -0.921875 taken
/// as erfc(|t|) itself rather than 1 - (1 - erfc), which would cancel.
ONNXSLIM_AVX2 inline __m256 geluAvx2(__m256 x) {
  __m256 t = _mm256_mul_ps(x, set1(0.70710678118654752f));
  __m256 small, tail;
  erfParts(t, small, tail);
  __m256 large = _mm256_blendv_ps(_mm256_sub_ps(set1(2.0f), tail), tail,
                                  _mm256_cmp_ps(t, _mm256_setzero_ps(), _CMP_LT_OQ));
  __m256 onePlus = _mm256_blendv_ps(large, _mm256_add_ps(set1(1.0f), small),
                                    _mm256_cmp_ps(absolute(t), set1(0.921875f), _CMP_LT_OQ));
  return _mm256_mul_ps(_mm256_mul_ps(set1(0.5f), x), onePlus);
}

struct Exp {
  ONNXSLIM_AVX2 static __m256 apply(__m256 x) { return expAvx2(x); }
};
struct Sigmoid {
  ONNXSLIM_AVX2 static __m256 apply(__m256 x) { return sigmoidAvx2(x); }
};
struct Tanh {
  ONNXSLIM_AVX2 static __m256 apply(__m256 x) { return tanhAvx2(x); }
};
struct Erf {
  ONNXSLIM_AVX2 static __m256 apply(__m256 x) { return erfAvx2(x); }
};
struct Gelu {
  ONNXSLIM_AVX2 static __m256 apply(__m256 x) { return geluAvx2(x); }
};

/// Given a span, Execute: Op over it, 8 lanes at a time, the tail through
/// a masked load and store (the masked-off lanes compute on zeros).
template <typename Op> ONNXSLIM_AVX2 void spanAvx2(const float *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, Op::apply(_mm256_loadu_ps(in + i)));
  if (i < n) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lane);
    _mm256_maskstore_ps(out + i, mask, Op::apply(_mm256_maskload_ps(in + i, mask)));
  }
}

} // namespace
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
#define ONNXSLIM_VMATH_SPAN(name, Avx2Op, portable)                                                        \
  void name(const float *in, float *out, int64_t n) {                                                     \
    if (wide())                                                                                            \
      spanAvx2<Avx2Op>(in, out, n);                                                                        \
    else                                                                                                   \
      spanPortable(in, out, n, portable);                                                                  \
  }
#else
#define ONNXSLIM_VMATH_SPAN(name, Avx2Op, portable)                                                        \
  void name(const float *in, float *out, int64_t n) { spanPortable(in, out, n, portable); }
#endif
ONNXSLIM_VMATH_SPAN(exp, Exp, expPortable)
ONNXSLIM_VMATH_SPAN(sigmoid, Sigmoid, sigmoidPortable)
ONNXSLIM_VMATH_SPAN(tanh, Tanh, tanhPortable)
ONNXSLIM_VMATH_SPAN(erf, Erf, erfPortable)
ONNXSLIM_VMATH_SPAN(gelu, Gelu, geluPortable)
#undef ONNXSLIM_VMATH_SPAN

} // namespace onnxslim::rt::vmath
