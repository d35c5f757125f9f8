//===- runtime/Simd.cpp - Run-time choice of the micro-kernel family ------===//
//
// Detects the CPU's features once and keeps the family of micro-kernels
// that GEMM and convolution run (see runtime/Simd.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/Simd.h"

#include <algorithm>

#include <cstdlib>

namespace onnxslim::rt::simd {
namespace {

/// The CPU's best micro-kernel family (detected once).
Isa bestIsa() {
  static const Isa isa = [] {
    Isa saved = Isa::Baseline;
#ifdef ONNXSLIM_ISA_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      saved = Isa::Avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      saved = Isa::Avx2;
#endif
    return saved;
  }();
  return isa;
}

/// The best family, or the one ONNXSLIM_GEMM_ISA names when the CPU has it.
Isa detectIsa() {
  Isa isa = bestIsa();
  if (const char *env = std::getenv("ONNXSLIM_GEMM_ISA"))
    parseIsa(env, isa);
  return isa;
}

} // namespace

std::atomic<Isa> &currentIsa() {
  static std::atomic<Isa> isa{detectIsa()};
  return isa;
}

bool parseIsa(std::string_view name, Isa &isa) {
  Isa best = bestIsa();
  if (name == "baseline") {
    isa = Isa::Baseline;
    return true;
  }
  if (name == "avx2" && best != Isa::Baseline) {
    isa = Isa::Avx2;
    return true;
  }
  if (name == "avx512" && best == Isa::Avx512) {
    isa = Isa::Avx512;
    return true;
  }
  return false;
}

#ifdef ONNXSLIM_ISA_X86
__attribute__((target("avx512f"))) void transposeFloatsAvx512(const float *src, int64_t lds,
                                                              int64_t rows, int64_t cols,
                                                              float *dst, int64_t ldd,
                                                              const float *bias) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t rn = std::min<int64_t>(16, rows - r0);
    const __mmask16 rm = firstLanes(rn);
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t cn = std::min<int64_t>(16, cols - c0);
      const __mmask16 cm = firstLanes(cn);
      __m512 t[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        t[i] = i < rn ? _mm512_maskz_loadu_ps(cm, src + (r0 + i) * lds + c0) : _mm512_setzero_ps();
      transpose16(t);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        if (j < cn)
          _mm512_mask_storeu_ps(dst + (c0 + j) * ldd + r0, rm,
                                bias ? _mm512_add_ps(t[j], _mm512_set1_ps(bias[c0 + j])) : t[j]);
    }
  }
}
#endif

} // namespace onnxslim::rt::simd
