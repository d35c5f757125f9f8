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

} // namespace onnxslim::rt::simd
