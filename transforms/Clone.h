//===- transforms/Clone.h - Deep copies of graphs and models ---*- C++ -*-===//
//
// Copies a graph (with its subgraphs) or a whole model through the public IR
// API. Tensors are immutable and shared, so a copy costs the node and value
// structure only, never the weights. The pass manager snapshots the main
// graph this way before each pass under --model-check-each, to roll back a
// pass that changed the model's outputs.
//
// Known limit: the IR has no call to attach a sparse default to a graph
// input, so such a default (a rare proto field combination) is not copied.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <memory>
#include <unordered_map>

namespace onnxslim {

/// Old value -> its copy; values of enclosing graphs must already be mapped.
using ValueMap = std::unordered_map<const Value *, Value *>;

/// Given a graph and the copies of the outer-scope values it reads, Execute:
/// copies it (nodes, subgraphs, inputs, initializers, outputs and round-trip
/// data), Result: a free-standing graph, or null when it reads a value that
/// is not in scope (a broken IR).
std::unique_ptr<Graph> cloneGraph(const Graph &graph, ValueMap &map);
std::unique_ptr<Graph> cloneGraph(const Graph &graph);

/// Given an attribute and the copies of the outer-scope values its subgraphs
/// read, Execute: copies it into `out` (subgraphs cloned), Result: false when
/// a subgraph reads a value that is not in `map`.
bool cloneAttribute(const Attribute &attribute, Attribute &out, ValueMap &map);

/// Given a model, Execute: copies it, functions included, Result: the copy or null.
std::unique_ptr<Model> cloneModel(const Model &model);

/// Given two models, Execute: makes `dst` hold what `src` holds (its main
/// graph, functions, opset imports, name table and every other field);
/// `src` is left without a graph. (The model check puts a replay of the
/// pipeline in the place of the model it was asked to optimize.)
void moveModelContents(Model &dst, Model &src);

} // namespace onnxslim
