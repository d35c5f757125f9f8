//===- ir/Validate.h - ONNX model validity checks --------------*- C++ -*-===//
//
// The validator decides whether a model is valid ONNX, before any pass runs
// and again before an optimized model is written. Where the IR verifier
// (ir/Verifier.h) checks the IR's own invariants (use lists, ownership), the
// validator checks what the ONNX specification requires of a model:
//
//  - tensors: known dtype, no negative dims, a dims product that fits int64,
//    data that matches dtype x dims (raw, typed or external), string tensors
//    not stored as raw bytes;
//  - nodes: a non-empty op type, an imported domain, an op that exists at the
//    imported opset, input/output counts and attribute names, kinds and
//    required attributes as the op schema (ir/OpSchema.h) says; nodes of
//    unknown (custom) domains are not looked into;
//  - graphs: SSA names (no name defined twice, in a graph or over an enclosing
//    one), outputs and operands (subgraph captures included) that name a
//    value in scope, and for IR version <= 3 initializers listed as inputs;
//  - the model: an ir_version that is set and known and high enough for the
//    types it uses, opset imports that are present and not duplicated;
//  - declared types: a graph output's type or a value_info entry's (main
//    graph and subgraphs) whose element type contradicts the one inferred
//    from the main graph's input types, the initializers and the ops
//    (ir/ShapeInference.h inferTypesFromOps), as ONNX Runtime refuses such
//    a model. Only a definite contradiction counts: both element types known
//    (not undefined) and different, for tensors or the elements of
//    sequences and optionals; a value nothing infers (an op of another
//    domain) is not judged. Checked only when nothing else is wrong.
//
// Each diagnostic is one line: "FILE: GRAPH PATH / Op 'name': what is wrong".
// Function bodies (FunctionProto) are not validated.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace onnxslim {

/// The newest IR version this tool reads and writes (schema/onnx.proto's IR_VERSION).
inline constexpr int64_t kNewestIrVersion = 14;
/// The newest default-domain opset the op schema table (ir/OpSchema.h) knows.
inline constexpr int64_t kNewestDefaultOpset = 24;

class Model;

struct ValidateOptions {
  /// Shown at the start of every diagnostic (the model's file name; "" for none).
  std::string file = "model";
  /// Stop after this many diagnostics.
  size_t maxDiagnostics = 100;
  /// The model is about to be written by backend/: what the writer supplies
  /// itself (the main graph's initializers listed as inputs at IR <= 3) is
  /// not a problem then.
  bool forWriting = false;
};

/// Given a model, Execute: checks it against the ONNX specification,
/// Result: one line per problem found (empty when the model is valid).
std::vector<std::string> validate(const Model &model, const ValidateOptions &options = {});

} // namespace onnxslim
