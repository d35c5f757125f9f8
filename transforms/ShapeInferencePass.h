//===- transforms/ShapeInferencePass.h - Shapes in the pipeline -*- C++ -*-===//
//
// The `infer-shapes` pass (ir/ShapeInference as a pipeline step) and the
// helpers behind the command line's --input-shapes flag.
//
// Where inference runs: `infer-shapes` opens the default pipeline, so every
// fixed-point round starts from types inferred for the current graph (it
// only fills what is unknown, so a round that changed nothing else reports
// no change). simplify-shape-chains runs its own ShapeInferencer because it
// needs the symbolic side tables. The command line, after the default
// pipeline, runs inference once more with value_info entries added
// (`infer-shapes{value-info=true}`), unless --no-shape-infer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace onnxslim {

class Model;

/// Given "NAME:d0,d1,..." (each dim a number, a symbol name or '?'),
/// Execute: parses it, Result: false with `error` set when malformed.
bool parseInputShapeFlag(std::string_view text, std::string &name, Shape &shape, std::string &error);

/// Given shapes by main-graph input name, Execute: replaces those inputs'
/// shapes (element types kept), Result: false with `error` naming an input
/// the model does not have (then nothing changed).
bool applyInputShapes(Model &model, const std::map<std::string, Shape> &shapes, std::string &error);

/// Given a model, Execute: gives every typed node result of every graph that
/// has no value_info entry (and is not an output of its own graph) one, so
/// the backend writes its type, Result: how many entries were added.
size_t recordValueInfo(Model &model);

/// Given a model and input shapes, Execute: infers types and records them
/// as value_info (what `onnxslim IN OUT` does after the default pipeline),
/// Result: the number of value_info entries added.
size_t inferAndRecordValueInfo(Model &model);

/// Given a model, Execute: clears the in-memory type of every node result
/// that has no value_info entry (graph outputs, whose types live in the
/// output list, and types inferred but not recorded), so that the text form
/// shows what the binary form holds, Result: how many types were cleared.
size_t dropUnrecordedTypes(Model &model);

} // namespace onnxslim
