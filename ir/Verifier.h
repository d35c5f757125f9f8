//===- ir/Verifier.h - IR invariant checker --------------------*- C++ -*-===//
//
// Checks the invariants every pass must preserve:
//  - node list: links consistent, each node's graph pointer is its graph;
//  - single definition: each result's defining node/number, each leaf's graph;
//  - topological order: every operand is defined earlier in the same graph or
//    visible from an enclosing scope at the point of the subgraph's owner;
//  - use lists: every operand slot is linked in its value's list with the
//    right owner and index, and every list entry is such a slot;
//  - subgraph scoping: each subgraph's parent node is the node owning it;
//  - names: no two values of one graph share a non-empty name.
// A broken invariant is a bug in onnxslim (or a malformed input the frontend
// let through); the verifier reports it instead of crashing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace onnxslim {

class Graph;
class Model;

/// Returns one message per broken invariant; empty when the IR is sound.
/// Stops after `maxErrors` messages.
std::vector<std::string> verify(const Model &model, size_t maxErrors = 20);
std::vector<std::string> verify(const Graph &graph, size_t maxErrors = 20);

} // namespace onnxslim
