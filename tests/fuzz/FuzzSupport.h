//===- tests/fuzz/FuzzSupport.h - What the fuzzers share -------*- C++ -*-===//
//
// The default pipeline exactly as `onnxslim IN OUT` runs it (targetPipeline,
// ten rounds to a fixed point, value_info recorded afterwards), with
// --verify-each on; the one place where the optimized model is validated;
// and the way a fuzzer reports a finding (message, both models as text,
// abort, so libFuzzer saves the input).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace onnxslim {
class Model;
} // namespace onnxslim

namespace onnxslim::fuzz {

/// Given a model that loaded and verified, Execute: runs the default
/// pipeline on it in place with the IR verifier after every pass (output
/// checker: none), Result: false with `error` when the pass manager stopped
/// (a broken invariant or contract: a finding).
bool runDefaultPipeline(Model &model, std::string &error);

/// Given a model that loaded, Execute: validates it as `onnxslim` does
/// before any pass, Result: false with `error` when the optimizer would
/// refuse it (then it is not a finding: the fuzzer skips it).
bool validateInput(const Model &model, std::string &error);

/// Given an optimized model, Execute: validates it as the writer will,
/// Result: false with `error` when it is not valid ONNX (a finding: a pass
/// produced an invalid model).
bool validateOutput(const Model &model, std::string &error);

/// Given what went wrong and optionally the models involved (as text),
/// Execute: prints them to stderr and aborts. Never returns.
[[noreturn]] void finding(const std::string &what, const std::string &inputText = {},
                          const std::string &outputText = {});

/// The model as ONNX text (large constants in full), for finding reports.
std::string modelText(const Model &model);

} // namespace onnxslim::fuzz
