//===- runtime/Compare.h - Comparing run outputs ---------------*- C++ -*-===//
//
// Compares an actual output with an expected one: element types and shapes
// must match; floats (float, double, float16, bfloat16) match when
// |a - b| <= atol + rtol * |b| for every element, with NaN equal to NaN and
// infinities equal to infinities of the same sign; integers, bools and
// strings must be equal exactly. Sequences compare element by element;
// optionals compare emptiness, then the held value. The result carries the
// max absolute and max relative difference (|a - b| / |b|, over elements
// with b != 0) for reports.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Kernel.h"

#include <cstdint>
#include <string>

namespace onnxslim::rt {

struct Comparison {
  bool ok = true;           ///< Within tolerance (and same type/shape).
  double maxAbsDiff = 0;    ///< Largest |a - b| over comparable elements.
  double maxRelDiff = 0;    ///< Largest |a - b| / |b| over elements with b != 0.
  int64_t mismatches = 0;   ///< Elements outside tolerance.
  int64_t firstMismatch = -1; ///< Flat index of the first one, or -1.
  std::string message;      ///< Why not ok (type, shape, or the first mismatch).
};

/// Compares two tensors as described above.
Comparison compareTensors(const Tensor &actual, const Tensor &expected, double rtol, double atol);

/// Compares two runtime values (tensors, sequences, optionals).
Comparison compareValues(const RtValue &actual, const RtValue &expected, double rtol, double atol);

} // namespace onnxslim::rt
