//===- transforms/Surgery.h - Cutting a model at named values ---*- C++ -*-===//
//
// Graph surgery on the main graph, as OnnxSlim's --inputs/--outputs and
// onnx-simplifier's --unused-output do it, before any pass runs:
//
//   cutInputs    the named values become the graph's inputs (their
//                producers, and whatever only fed them, go); every old input
//                not named must no longer be needed;
//   setOutputs   the named values become the graph's outputs;
//   dropOutputs  the named outputs are removed.
//
// A value is named "NAME" or "NAME:dtype" (float32/fp32, float16/fp16,
// int64, ... as in ONNX's type names); a given dtype must match what the
// model says of the value, and a value whose type is unknown needs one.
// Errors name the value and, where one is at fault, the node and op; on an
// error the model may be partly changed (the caller must not write it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace onnxslim {

class Model;

/// Given value specs, Execute: makes them the main graph's inputs, in the
/// given order, and removes what only fed them, Result: false with `error`.
bool cutInputs(Model &model, const std::vector<std::string> &specs, std::string &error);
/// Given value specs, Execute: makes them the main graph's outputs, in the
/// given order, Result: false with `error`.
bool setOutputs(Model &model, const std::vector<std::string> &specs, std::string &error);
/// Given output names, Execute: removes those outputs, Result: false with
/// `error` for a name that is not an output or when none would remain.
bool dropOutputs(Model &model, const std::vector<std::string> &names, std::string &error);

} // namespace onnxslim
