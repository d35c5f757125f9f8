//===- runtime/conv/ClampSimd.h - StoreClamp on vectors --------*- C++ -*-===//
//
// The clamp of runtime/conv/Kernels.h's StoreClamp on a scalar, an xsimd
// batch and AVX2 / AVX-512 registers: x < lo ? lo : x, then > hi ? hi : that
// (NaN passes), the compares and selects of the Clip and Relu kernels, so
// that a clamp fused into a convolution's stores gives the bits of the
// nodes run apart. Shared by the row kernels and the direct product; an
// internal header of runtime/conv/*.cpp (it includes xsimd and intrinsics).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Simd.h"
#include "runtime/conv/Kernels.h"

namespace onnxslim::rt {

/// x < lo ? lo : x, then > hi ? hi : that (NaN passes), when clamping.
template <typename T> inline T clampScalar(T x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  const T lo = static_cast<T>(clamp->lo), hi = static_cast<T>(clamp->hi);
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

template <typename B> inline B clampBatch(B x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  using T = typename B::value_type;
  const B lo(static_cast<T>(clamp->lo)), hi(static_cast<T>(clamp->hi));
  x = xsimd::select(x < lo, lo, x);
  return xsimd::select(x > hi, hi, x);
}

#ifdef ONNXSLIM_ISA_X86
__attribute__((target("avx2,fma"))) inline __m256 clampAvx2(__m256 x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  const __m256 lo = _mm256_set1_ps(clamp->lo), hi = _mm256_set1_ps(clamp->hi);
  x = _mm256_blendv_ps(x, lo, _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(x, hi, _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
}

__attribute__((target("avx512f"))) inline __m512 clampAvx512(__m512 x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  const __m512 lo = _mm512_set1_ps(clamp->lo), hi = _mm512_set1_ps(clamp->hi);
  x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), x, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), x, hi);
}
#endif

} // namespace onnxslim::rt
