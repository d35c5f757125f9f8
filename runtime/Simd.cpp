//===- runtime/Simd.cpp - Run-time choice of the micro-kernel family ------===//
//
// Detects the CPU's features once and keeps the family of micro-kernels
// that GEMM and convolution run (see runtime/Simd.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/Simd.h"

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

} // namespace onnxslim::rt::simd
