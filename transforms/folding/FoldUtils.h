//===- transforms/folding/FoldUtils.h - Turning values into constants --*- C++ -*-===//
//
// Helpers shared by the passes that replace computed values with constants
// (fold-constants, simplify-shape-chains, inline-constant-if), so that they
// all follow one convention:
//
//  - in a model's main graph a constant is an initializer;
//  - in a subgraph (If/Loop/Scan body) a constant is a Constant node placed
//    before its first user: ONNX allows subgraph initializers, but Constant
//    nodes are what exporters emit there and what every runtime handles.
//
// A folded value keeps the name of the value it replaces (so graph outputs,
// whose names are the model's interface, keep theirs).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onnxslim {

class Rewriter;

/// Whether constants of `graph` are initializers (the main graph) rather
/// than Constant nodes (a subgraph).
bool constantsAreInitializers(const Graph &graph);

/// Given a graph, a node of it before which a Constant node may go (used
/// only in subgraphs), a name base and a tensor, Execute: creates the
/// constant per the convention above, Result: its value.
Value *materializeConstant(Rewriter &rewriter, Graph &graph, Node *before, std::string_view nameBase,
                           TensorPtr tensor);

/// Given a constant made by materializeConstant and a name no other value
/// of the model holds, Execute: renames it (and, for an initializer, its
/// tensor's serialized name) to `name`.
void nameConstant(Rewriter &rewriter, Value *constant, const std::string &name);

/// Given a node and one tensor per result (null = leave that result; it must
/// then be unused), Execute: replaces every used result by a constant named
/// like it and erases the node, Result: the constant values (null where no
/// constant was made).
std::vector<Value *> replaceNodeWithConstants(Rewriter &rewriter, Node *node,
                                              const std::vector<TensorPtr> &tensors);

/// Given a Constant node, Execute: replaces it by an initializer of the
/// same name in the main graph (visible from every body, so a Constant of
/// an If/Loop/Scan body moves there too), Result: false (no change) when its
/// value is not a plain tensor (sparse_value, attribute reference) or it is
/// a body's own output.
bool constantNodeToInitializer(Rewriter &rewriter, Node *node);

/// Bytes of a tensor of `dtype` with `numElements` elements (0 for strings).
size_t tensorBytes(DataType dtype, int64_t numElements);

/// Given a value, Result: the bytes it takes when its type has a static
/// shape and a fixed-size element type; nullopt otherwise.
std::optional<size_t> staticValueBytes(const Value *value);

} // namespace onnxslim
