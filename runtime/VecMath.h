//===- runtime/VecMath.h - Transcendental functions on float spans -*- C++ -*-===//
//
// exp, sigmoid, tanh, erf and the erf GELU over a span of floats, at the
// width of the CPU: 8 lanes of AVX2 + FMA when the micro-kernel family in
// use (runtime/Simd.h) is AVX2, 16 lanes of AVX-512F when it is AVX-512
// (wide() says either), else xsimd batches of the compile-time
// architecture. The two wide forms run the same operations per lane, so
// they give the same bits; they are within 3 ulp of the exact result (1.5
// for exp; erf's polynomials are fitted to 2e-7 relative), propagate NaN,
// and saturate as the function does (exp to +inf or 0, sigmoid to 0 or 1,
// tanh and erf to +-1). In every form element i of the result depends on
// element i of the input only (tails are computed as full vectors), so a
// span cut anywhere (threads, the blocks of a fused chain) gives the same
// bits.
//
// The elementwise kernels (kernels/ElementwiseUnary.cpp) and the fused
// elementwise chains (runtime/ElementwiseChain.cpp) call these on float
// tensors, so a Sigmoid computes the same bits in either.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace onnxslim::rt::vmath {

/// Whether the wide paths below run on this CPU with the family in use.
bool wide();

/// Given a span of n floats (in and out may be the same), Execute:
/// out[i] = f(in[i]).
void exp(const float *in, float *out, int64_t n);
void sigmoid(const float *in, float *out, int64_t n);
void tanh(const float *in, float *out, int64_t n);
void erf(const float *in, float *out, int64_t n);
/// 0.5 x (1 + erf(x / sqrt(2))).
void gelu(const float *in, float *out, int64_t n);

/// Given spans in, x and out of n floats (out may be in or x), Execute:
/// out[i] = x[i] * sigmoid(in[i]) (xFirst) or sigmoid(in[i]) * x[i], with
/// the bits of sigmoid then the product: SiLU in one pass.
void sigmoidMul(const float *in, const float *x, float *out, int64_t n, bool xFirst);

/// Given a row of n floats, Execute: out[i] = e^(x[i] - m) / s, the Softmax
/// of the row (out may be x): m is the row's maximum (0 when it is
/// infinite), e^ is exp above, and s the sum of the exponentials in one
/// order on every form: lane k of 16 sums the elements i = k (mod 16) of
/// the whole groups of 16, the lanes combine pairwise (k and k + 8, then
/// k + 4, k + 2, k + 1), then the last n % 16 are added in order; then
/// each exponential is multiplied by 1 / s. Exponentials and divisor
/// fused into the row's passes (the max, then exp, store and sum, then the
/// scale), instead of a pass per step.
void softmax(const float *x, float *out, int64_t n);

} // namespace onnxslim::rt::vmath
