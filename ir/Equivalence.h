//===- ir/Equivalence.h - Structural equality of IR models -----*- C++ -*-===//
//
// A deep, field-by-field comparison of two IR models: every Model, Graph,
// Node, Value, Attribute, Tensor and Type field, the round-trip data
// (ExplicitFields, tensor encodings, value_info order, orphan value infos,
// functions, opaque training data) and the use-def structure. Values are
// matched by where they are defined (graph input i, initializer i, result j
// of node i), not by name, so an operand that reads the wrong value is a
// difference even when the names agree. Used by the text round-trip tests
// and by anyone who needs to know whether two models are the same IR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

namespace onnxslim {

class Graph;
class Model;

/// A readable path to the first difference between `a` and `b`, e.g.
/// `graph 'main' / node[3] (Conv 'c1') / operand[1]: reads 'x' (input[0]) vs
/// 'w' (initializer[0])`; nullopt when the two are structurally equal.
std::optional<std::string> firstDifference(const Model &a, const Model &b);
/// The same for two graphs (values outside them must be shared or absent).
std::optional<std::string> firstDifference(const Graph &a, const Graph &b);

} // namespace onnxslim
