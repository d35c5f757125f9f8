//===- runtime/Compare.h - Comparing run outputs ---------------*- C++ -*-===//
//
// Compares an actual output with an expected one: element types and shapes
// must match; floats (double, float, float16, bfloat16, the float8 kinds)
// match when |a - b| <= atol + rtol * |b| + ofScale * max|b| for every
// element (max|b|: the largest finite magnitude of the expected output),
// with NaN equal to NaN and infinities equal to infinities of the same sign;
// integers, bools and strings must be equal exactly. Sequences compare
// element by element; optionals compare emptiness, then the held value. The
// result carries the max absolute and max relative difference (|a - b| /
// |b|, over elements with b != 0) for reports.
//
// How close is close enough depends on the precision the output was
// computed in, not only on its element type: a float32 output of a model
// that computes in float16 between two Casts carries float16's rounding.
// outputPrecisions() finds that precision for each output of a graph and
// toleranceFor() is the one table of tolerances, used by every comparison
// of outputs (the model check, --model-check-each, the float16 fallback of
// --dtype fp16, `onnxslim verify` and verify()).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace onnxslim::rt {

struct Comparison {
  bool ok = true;           ///< Within tolerance (and same type/shape).
  double maxAbsDiff = 0;    ///< Largest |a - b| over comparable elements.
  double maxRelDiff = 0;    ///< Largest |a - b| / |b| over elements with b != 0.
  int64_t mismatches = 0;   ///< Elements outside tolerance.
  int64_t firstMismatch = -1; ///< Flat index of the first one, or -1.
  std::string message;      ///< Why not ok (type, shape, or the first mismatch).
};

/// How far a floating result may be from the expected one:
/// |a - b| <= atol + rtol * |b| + ofScale * (the expected output's largest
/// finite |element|: a result near 0 computed from large values is only as
/// exact as their scale).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  double ofScale = 0;
};

/// The tolerance table, by the precision an output was computed in. Each
/// entry allows some ten to a thousand roundings of its type, which a
/// rewrite that reorders or fuses arithmetic (Conv+BatchNormalization,
/// MatMul+Add into Gemm, a LayerNormalization) can cost through a deep
/// network, and far less than a miscompile changes:
///
///   precision                 rtol    atol    ofScale   (one ulp at 1)
///   double                    1e-8    1e-10   0         2.2e-16
///   float                     1e-4    1e-5    0         1.2e-7
///   float16                   1e-2    1e-3    1e-2      9.8e-4
///   bfloat16                  6e-2    8e-3    6e-2      7.8e-3
///   float8 e4m3 (fn, fnuz)    0.25    0.125   0.25      0.125
///   float8 e5m2 (fn, fnuz)    0.5     0.25    0.5       0.25
///   integers, bool, strings   exact
///
/// Another element type (or Undefined) gets float's entry.
Tolerance toleranceFor(DataType precision);

/// "rtol 0.01, atol 0.001 + 0.01 of the output's scale", for messages.
std::string describe(const Tolerance &tolerance);

/// Given a graph, Result: for each of its outputs, the least precise
/// floating element type of the values it is computed from (graph inputs,
/// initializers, Constant and Cast/CastLike targets, declared value types,
/// and for a node with subgraphs everything inside them), or Undefined when
/// none is floating. A float32 output computed through float16 gets
/// Float16; one computed in float32 only, Float.
std::vector<DataType> outputPrecisions(const Graph &graph);

/// The less precise of two floating types (Undefined and non-floating
/// types count as none: the other is returned).
DataType leastPrecise(DataType a, DataType b);

/// Compares two tensors as described above.
Comparison compareTensors(const Tensor &actual, const Tensor &expected, const Tolerance &tolerance);
inline Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol) {
  return compareTensors(actual, expected, Tolerance{rtol, atol, 0});
}

/// Compares two runtime values (tensors, sequences, optionals).
Comparison compareValues(const RtValue &actual, const RtValue &expected, const Tolerance &tolerance);
inline Comparison compareValues(const RtValue &actual, const RtValue &expected, double rtol, double atol) {
  return compareValues(actual, expected, Tolerance{rtol, atol, 0});
}

} // namespace onnxslim::rt
