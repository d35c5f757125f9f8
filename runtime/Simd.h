//===- runtime/Simd.h - Instruction sets of the compute kernels -*- C++ -*-===//
//
// What the GEMM engine (runtime/Gemm.cpp) and the convolution kernels
// (runtime/conv/) share about the machine: the xsimd batch of the
// compile-time architecture, 64-byte aligned buffers, and the one run-time
// choice of micro-kernel family that every hand-written kernel follows:
//  - Baseline: xsimd batches of the compile-time architecture (SSE2 on a
//    portable x86-64 build);
//  - Avx2: AVX2 + FMA;
//  - Avx512: AVX-512F.
// The family is the best the CPU has, detected once; ONNXSLIM_GEMM_ISA=
// baseline|avx2|avx512 (or setGemmEngine in runtime/Gemm.h) picks another
// one the CPU supports (tests, benchmarks). The AVX kernels are compiled
// for their instruction set with function target attributes, under
// ONNXSLIM_ISA_X86, so the rest of the binary stays portable.
//
// An internal header of runtime/ .cpp files: it includes xsimd and the x86
// intrinsics, which never reach a header that others include.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <xsimd/xsimd.hpp>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ONNXSLIM_ISA_X86 1
#endif

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

namespace onnxslim::rt::simd {

/// A batch of the compile-time architecture.
template <typename T> using Batch = xsimd::batch<T>;

/// A buffer aligned for the micro-kernels' aligned loads.
template <typename T> using AlignedVector = std::vector<T, xsimd::aligned_allocator<T, 64>>;

/// The micro-kernel families.
enum class Isa { Baseline, Avx2, Avx512 };

/// The family in use (the CPU's best, or the one ONNXSLIM_GEMM_ISA names
/// when the CPU has it, until setGemmEngine changes it).
std::atomic<Isa> &currentIsa();

/// Given a family's name ("baseline", "avx2", "avx512"), Result: true and
/// `isa` set when this CPU runs it; false, `isa` untouched, otherwise.
bool parseIsa(std::string_view name, Isa &isa);

#ifdef ONNXSLIM_ISA_X86
/// The even (odd) 64-bit halves of a and b, interleaved.
__attribute__((target("avx512f"), always_inline)) inline __m512 pairsLo(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, _mm512_castps_pd(a), _mm512_castps_pd(b)));
}
__attribute__((target("avx512f"), always_inline)) inline __m512 pairsHi(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, _mm512_castps_pd(a), _mm512_castps_pd(b)));
}

/// Transposes the 16x16 block r in place: row i's lane j goes to row j's
/// lane i. (The maskz forms with every lane set: GCC 12 warns on the plain
/// ones. The loops are unrolled so that the block stays in registers.)
__attribute__((target("avx512f"), always_inline)) inline void transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(0xFFFF, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[i], r[i + 1]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i += 4) {
    r[i] = pairsLo(t[i], t[i + 2]);
    r[i + 1] = pairsHi(t[i], t[i + 2]);
    r[i + 2] = pairsLo(t[i + 1], t[i + 3]);
    r[i + 3] = pairsHi(t[i + 1], t[i + 3]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i + 8], r[i + 12], 0xdd);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[i + 8], 0xdd);
  }
}

/// The first n of 16 lanes.
inline __mmask16 firstLanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

/// Given a rows x cols float matrix at src (row stride lds), Execute:
/// writes its transpose at dst (row stride ldd), adding bias[j] to every
/// element of source column j (the transpose's row j) when bias is given,
/// in 16x16 blocks on AVX-512.
void transposeFloatsAvx512(const float *src, int64_t lds, int64_t rows, int64_t cols, float *dst,
                           int64_t ldd, const float *bias = nullptr);
#endif

} // namespace onnxslim::rt::simd
