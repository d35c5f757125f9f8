//===- transforms/Float16Fallback.h - float32 where float16 is not enough -*- C++ -*-===//
//
// After the pipeline, a float16 or bfloat16 conversion (convert-float-type
// {to=float16|bfloat16}) may take some outputs beyond the tolerance of that
// type (runtime/Compare.h: bfloat16's is 8 times float16's, as it keeps 8
// significant bits to float16's 11). The
// fallback compares converted copies of the float32 model with it in the
// interpreter and, when the whole conversion leaves the tolerance, finds
// the nodes to keep in float32:
//
//   - (float16) the nodes computing or reading a value that leaves
//     float16's range on the model check's first input sample (a finite
//     float32 value past half of 65504, found by running a copy with every
//     float32 value as an output): float16 would make it inf. When keeping
//     these is enough, nothing else is kept;
//   - the decision chains: float comparisons (Equal, Less, Greater...),
//     ArgMax/ArgMin and TopK, whose float16 rounding changes a decision
//     rather than a value (a peak mask Equal(MaxPool(s), s) finds two peaks
//     where two neighbours of s round to the same float16), with the chain
//     of nodes computing their float operands back to and including the
//     nearest node with a weight;
//   - the shortest prefix, in program order, of the main graph's nodes
//     that brings the outputs back within tolerance (binary search). A
//     rounding error made early grows through every later layer, and early
//     layers carry few weights, so the prefix is short and most bytes still
//     halve.
//
// Whether it runs is CheckPolicy::comparesFloat16()'s decision (and the
// caller's: a float16 conversion keeping the model's input and output types).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/DataType.h"
#include "transforms/ModelCheck.h"

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace onnxslim {

class Model;
class PassRegistry;

/// What the fallback found.
struct Float16Fallback {
  /// The main-graph nodes to keep in float32 (the conversion's keep-node
  /// option); empty when the whole conversion is within tolerance, or when
  /// even all float32 is not (a warning says so).
  std::vector<std::string> keepNodes;
  /// Whether the converted model was compared with the float32 one and
  /// ends within tolerance (false when it did not run in the interpreter or
  /// even all float32 differs).
  bool compared = false;
  /// What the caller reports: how many nodes stay float32 and why, or why
  /// nothing could be compared (also printed to the log as they happen).
  std::vector<std::string> warnings;
};

/// Given the float32 model after the pipeline (keeping its input and output
/// types), the registry, the comparison's options, a log and the type to
/// convert to (Float16 or BFloat16), Execute: compares conversions of
/// copies of it to that type with it, names the unnamed
/// nodes it keeps (the others stay unnamed), and prints each warning to the
/// log as "onnxslim: warning: ...", Result: what to keep (see the file
/// comment).
Float16Fallback float16Fallback(Model &model, const PassRegistry &registry, const ModelCheckOptions &check,
                                std::ostream &log, DataType to = DataType::Float16);

} // namespace onnxslim
