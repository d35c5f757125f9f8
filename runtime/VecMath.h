//===- runtime/VecMath.h - Transcendental functions on float spans -*- C++ -*-===//
//
// exp, sigmoid, tanh, erf and the erf GELU over a span of floats, at the
// width of the CPU: AVX2 + FMA when the micro-kernel family in use
// (runtime/Simd.h) is AVX2 or AVX-512 (wide() says so); otherwise the
// caller keeps its portable xsimd loop. Each function is within 2 ulp of the exact
// result (1 ulp for exp; erf's polynomials are fitted to 2e-7 relative),
// propagates NaN, and saturates as the function does (exp to +inf or 0,
// sigmoid to 0 or 1, tanh and erf to +-1). Element i of the result depends
// on element i of the input only, so a span cut anywhere (threads) gives
// the same bits.
//
// The elementwise kernels (kernels/ElementwiseUnary.cpp) call these on
// float tensors; the baseline build is SSE2, four lanes through xsimd's
// generic math, which is where SiLU and GELU networks spent a third of
// their time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace onnxslim::rt::vmath {

/// Whether the wide paths below run on this CPU with the family in use.
bool wide();

/// Given a span of n floats (in and out may be the same) and wide() true,
/// Execute: out[i] = f(in[i]).
void exp(const float *in, float *out, int64_t n);
void sigmoid(const float *in, float *out, int64_t n);
void tanh(const float *in, float *out, int64_t n);
void erf(const float *in, float *out, int64_t n);
/// 0.5 x (1 + erf(x / sqrt(2))).
void gelu(const float *in, float *out, int64_t n);

} // namespace onnxslim::rt::vmath
