//===- runtime/conv/Winograd.cpp - Winograd F(2x2, 3x3) convolution -------===//
//
// The AVX-512 transforms of Winograd convolution (winogradRowCombos,
// winogradColumnCombos, winogradOutputRow in runtime/conv/Kernels.h): the
// same additions and subtractions, in the same order, as the caller's
// portable loops, 16 tiles a step with masked tails.
//
//===----------------------------------------------------------------------===//
#include "runtime/Simd.h"
#include "runtime/conv/Kernels.h"

#include <algorithm>

namespace onnxslim::rt {
namespace {

using simd::currentIsa;
using simd::Isa;

#ifdef ONNXSLIM_ISA_X86
/// Lanes [0, n) of a 16-lane step at q (all when 16 fit).
inline __mmask16 lanesFrom(int64_t q, int64_t n) {
  return n - q >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - q)) - 1u);
}

__attribute__((target("avx512f"))) void winogradRowCombosAvx512(const float *d, int64_t ld,
                                                                 int64_t n, float *t,
                                                                 int64_t ldt) {
  for (int64_t q = 0; q < n; q += 16) {
    const __mmask16 m = lanesFrom(q, n);
    const __m512 d0 = _mm512_maskz_loadu_ps(m, d + q), d1 = _mm512_maskz_loadu_ps(m, d + ld + q),
                 d2 = _mm512_maskz_loadu_ps(m, d + 2 * ld + q),
                 d3 = _mm512_maskz_loadu_ps(m, d + 3 * ld + q);
    _mm512_mask_storeu_ps(t + q, m, _mm512_sub_ps(d0, d2));
    _mm512_mask_storeu_ps(t + ldt + q, m, _mm512_add_ps(d1, d2));
    _mm512_mask_storeu_ps(t + 2 * ldt + q, m, _mm512_sub_ps(d2, d1));
    _mm512_mask_storeu_ps(t + 3 * ldt + q, m, _mm512_sub_ps(d1, d3));
  }
}

__attribute__((target("avx512f"))) void winogradColumnCombosAvx512(const float *e,
                                                                    const float *o, int64_t n,
                                                                    float *v, int64_t ldv) {
  for (int64_t q = 0; q < n; q += 16) {
    const __mmask16 m = lanesFrom(q, n);
    const __m512 e0 = _mm512_maskz_loadu_ps(m, e + q), e1 = _mm512_maskz_loadu_ps(m, e + q + 1),
                 o0 = _mm512_maskz_loadu_ps(m, o + q), o1 = _mm512_maskz_loadu_ps(m, o + q + 1);
    _mm512_mask_storeu_ps(v + q, m, _mm512_sub_ps(e0, e1));
    _mm512_mask_storeu_ps(v + ldv + q, m, _mm512_add_ps(o0, e1));
    _mm512_mask_storeu_ps(v + 2 * ldv + q, m, _mm512_sub_ps(e1, o0));
    _mm512_mask_storeu_ps(v + 3 * ldv + q, m, _mm512_sub_ps(o0, o1));
  }
}

__attribute__((target("avx512f"))) void winogradOutputRowAvx512(const float *p, int64_t ld,
                                                                 int row, int64_t n, float bias,
                                                                 int64_t ow, float *y) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 b = _mm512_set1_ps(bias);
  for (int64_t q = 0; q < n; q += 16) {
    const __mmask16 m = lanesFrom(q, n);
    // Rows 0-2 of the products for output row 0, rows 1-3 for row 1.
    const float *p0 = p + (row == 0 ? 0 : 4) * ld + q;
    __m512 s[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512 a = _mm512_maskz_loadu_ps(m, p0 + j * ld),
                   c = _mm512_maskz_loadu_ps(m, p0 + (4 + j) * ld),
                   e = _mm512_maskz_loadu_ps(m, p0 + (8 + j) * ld);
      s[j] = row == 0 ? _mm512_add_ps(_mm512_add_ps(a, c), e)
                      : _mm512_sub_ps(_mm512_sub_ps(a, c), e);
    }
    const __m512 even = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0], s[1]), s[2]), b);
    const __m512 odd = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[1], s[2]), s[3]), b);
    // Outputs 2q .. 2q + 31, interleaved, up to ow.
    const int64_t left = ow - 2 * q;
    const __mmask16 m0 = lanesFrom(0, std::min<int64_t>(left, 16));
    const __mmask16 m1 = left > 16 ? lanesFrom(0, left - 16) : __mmask16(0);
    _mm512_mask_storeu_ps(y + 2 * q, m0, _mm512_permutex2var_ps(even, lo, odd));
    if (m1)
      _mm512_mask_storeu_ps(y + 2 * q + 16, m1, _mm512_permutex2var_ps(even, hi, odd));
  }
}
#endif

} // namespace

bool winogradRowCombos(const float *d, int64_t ld, int64_t n, float *t, int64_t ldt) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    winogradRowCombosAvx512(d, ld, n, t, ldt);
    return true;
  }
#endif
  (void)d, (void)ld, (void)n, (void)t, (void)ldt;
  return false;
}

bool winogradColumnCombos(const float *e, const float *o, int64_t n, float *v, int64_t ldv) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    winogradColumnCombosAvx512(e, o, n, v, ldv);
    return true;
  }
#endif
  (void)e, (void)o, (void)n, (void)v, (void)ldv;
  return false;
}

bool winogradOutputRow(const float *p, int64_t ld, int row, int64_t n, float bias, int64_t ow,
                       float *y) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    winogradOutputRowAvx512(p, ld, row, n, bias, ow, y);
    return true;
  }
#endif
  (void)p, (void)ld, (void)row, (void)n, (void)bias, (void)ow, (void)y;
  return false;
}

} // namespace onnxslim::rt
