//===- runtime/ElementwiseChain.h - Fused float elementwise chains -*- C++ -*-===//
//
// A chain of float32 elementwise nodes in which every intermediate value has
// one reader, the next node of the chain, and every other operand is a
// one-element constant or the chain's input x: hard-swish as exported by
// PaddlePaddle, x * (Clip(x + 3, 0, 6) / 6), is Add -> Clip -> Div -> Mul;
// SiLU, x * Sigmoid(x), is Sigmoid -> Mul; the erf GELU of transformer
// exports, (x * (Erf(x / sqrt 2) + 1)) * 0.5, is Div -> Erf -> Add -> Mul -> Mul.
// The interpreter runs such a chain as one pass over x (see the planner in
// runtime/Interpreter.cpp) instead of one pass per node, each writing a
// full-size intermediate.
//
// Every element goes through the same operations, in the same order and
// with the same single-precision roundings, as the nodes run apart (the
// comparisons and selects of Clip and Relu are those of ElementwiseUnary's
// kernels, Sigmoid is the same runtime/VecMath span function, whose
// elements do not depend on where a span is cut; no operation is
// contracted into a fused multiply-add), so the
// fused chain is bit-identical to the nodes: the interpreter's results, and
// the model check's reference, do not change.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace onnxslim::rt {

/// One node of a chain, applied to the running value v of each element.
struct ChainOp {
  /// Relu is Clip(0, +inf): the same compare and select, the same bits.
  /// Sigmoid, Tanh and Erf are vmath's spans, as their kernels compute them.
  enum class Kind : uint8_t { Add, Sub, Mul, Div, Clip, Sigmoid, Tanh, Erf };
  Kind kind = Kind::Add;
  /// Binary ops: the other operand is x itself (else the constant c).
  bool otherIsInput = false;
  /// Binary ops: v is the left operand (v - c), else the right (c - v).
  bool valueFirst = true;
  float c = 0;
  float lo = 0, hi = 0; ///< Clip bounds
};

/// Given a chain and n elements of its input, Execute: y[i] = the chain
/// applied to x[i]. y may be x.
void runElementwiseChain(const std::vector<ChainOp> &ops, const float *x, float *y, int64_t n);

/// Given n floats, Execute: p[i] = Clip(p[i], lo, hi) in place, as the Clip
/// kernel computes it (below lo -> lo, then above hi -> hi; NaN passes).
/// A convolution that applies a fused Relu/Clip to its output uses it.
void clampFloats(float *p, int64_t n, float lo, float hi);

/// Given n floats at p and z, Execute: p[i] = p[i] + z[i], as the Add
/// kernel computes it. A convolution that applies a fused Add uses it.
void addFloats(float *p, const float *z, int64_t n);

/// The sum of n floats in double precision, in an order that is the same on
/// every kernel family: lane k of 32 sums the elements i = k (mod 32) of the
/// whole groups of 32, lanes l, l + 8, l + 16, l + 24 combine as (l + l+8) +
/// (l+16 + l+24), those eight pairwise ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 +
/// 7)), then the last n % 32 elements are added in order. Global average
/// pooling's plane sums.
double sumFloats(const float *x, int64_t n);

/// Given P pixels of C channels (x[p * C + c]), Execute: sums[c] = the sum
/// of channel c's P values, in sumFloats' order (so its bits).
void sumChannelsLast(const float *x, int64_t P, int64_t C, double *sums);

/// Planes smaller than this are summed sixteen at a time by sumPlanes (a
/// plane's own sum pays its lane combination and tail, about a hundred
/// cycles, whatever its size: 1280 planes of 7x7 took 39 us).
inline constexpr int64_t kSmallPlaneSums = 256;

/// Given `planes` planes of P floats (plane p at x + p * P), Execute:
/// sums[p] = sumFloats(plane p) (its bits), several planes at a time on
/// AVX-512 when the planes are small.
void sumPlanes(const float *x, int64_t planes, int64_t P, double *sums);

/// Given n floats and epsilon, Execute: their mean and population variance
/// summed in double in sumFloats' lane order (the variance over x[i] -
/// mean); Result: the mean and invStd = 1 / sqrt(var + eps), as
/// layerNormRow computes them.
void meanInvStd(const float *x, int64_t n, double eps, double &mean, double &invStd);

/// Given a row of n floats, its scale and bias (n each; bias may be null)
/// and epsilon, Execute: y[i] = (x[i] - mean) * invStd * scale[i] (+
/// bias[i]), LayerNormalization's row, with the mean and the population
/// variance summed in double in sumFloats' lane order (the variance over
/// x[i] - mean), invStd = 1 / sqrt(var + eps); Result: mean and invStd.
/// The AVX-512 form fuses each square into its sum, so the two families
/// may differ in the last bit; each gives the same bits for a row wherever
/// it runs (any thread).
void layerNormRow(const float *x, float *y, int64_t n, const float *scale, const float *bias, double eps,
                  double &mean, double &invStd);

/// Given n outputs at y and the 2n - 1 floats at src, Execute: y[i] =
/// src[2i] > y[i] ? src[2i] : y[i] (max pooling's combine step at stride 2,
/// as the MaxPool kernel orders it: a NaN tap leaves y alone).
void maxEvenFloats(const float *src, int64_t n, float *y);

/// Given src[0 .. 2(n-1)], Execute: y[i] = src[2i] for i < n (AVX-512
/// where the GEMM engine is; reads nothing past src[2(n-1)]). The column
/// phases of stride-2 convolutions.
void gatherEvenFloats(const float *src, int64_t n, float *y);

} // namespace onnxslim::rt
