//===- transforms/ModelCheck.h - Numerical safety net for passes -*- C++ -*-===//
//
// --model-check and --model-check-each: the outputs of the model being
// optimized are compared with those of the input model on the same seeded
// random inputs. The pass manager records the reference once, before the
// first pass, and asks matchesReference() after the last pass (model-check)
// or after every pass that changed the IR (model-check-each, which rolls
// such a pass back).
//
// OutputChecker is the interface the pass manager sees; the runtime-backed
// implementation runs the interpreter (runtime/Interpreter.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace onnxslim {

class Model;

class OutputChecker {
public:
  virtual ~OutputChecker();
  /// Given the unoptimized model, Execute: runs it and keeps its outputs,
  /// Result: false with `error` when it cannot run (unsupported op...).
  virtual bool recordReference(const Model &model, std::string &error) = 0;
  /// Given the current model, Execute: runs it on the same inputs, Result:
  /// true when every output matches the reference within tolerance;
  /// otherwise false with `report` naming each differing output and its
  /// max absolute/relative difference (or why the model could not run).
  virtual bool matchesReference(const Model &model, std::string &report) = 0;
};

struct ModelCheckOptions {
  uint64_t seed = 0;
  /// An element matches when |a - b| <= atol + rtol * |b|.
  double rtol = 1e-4;
  double atol = 1e-5;
  /// Sizes of symbolic input dims by name; others (and unknown dims) get defaultDim.
  std::map<std::string, int64_t> dims;
  int64_t defaultDim = 1;
  /// Per-input shapes, dtypes, ranges or values from a models.json-style file
  /// (runtime/Inputs.h loadInputSpecs), entry `specModel`; empty = none.
  std::string specFile;
  std::string specModel;
};

/// Given options, Result: a checker that runs the model in the interpreter.
std::unique_ptr<OutputChecker> createRuntimeOutputChecker(const ModelCheckOptions &options = {});

} // namespace onnxslim
