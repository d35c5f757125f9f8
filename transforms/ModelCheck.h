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
#include <vector>

namespace onnxslim {

class Model;
class Tensor;

/// What one comparison found, for the summary and reports.
struct CheckFigures {
  size_t outputs = 0;     ///< Outputs compared.
  double maxAbsDiff = 0;  ///< Largest |a - b| over every output.
  double maxRelDiff = 0;  ///< Largest |a - b| / |b| over every output.
  double seconds = 0;     ///< Time spent making inputs and running both models.
  /// The precisions whose tolerance was used, other than float32's, with
  /// their output counts ("float16 for 2 outputs"; empty when none).
  std::string tolerances;
  /// What the inputs that ran were made with, per sample ("sr=16000;
  /// input[1]=256 | sr=8000; input[1]=256": values of branch-picking
  /// inputs, sizes of free dims; empty if none).
  std::string dims;
  /// The first sample's named symbolic dims and their sizes, to pass on
  /// (VerifyOptions::dims, --dim).
  std::map<std::string, int64_t> dimSizes;
};

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
  /// What the last matchesReference() measured (all zero before one ran).
  virtual CheckFigures figures() const { return {}; }
  /// The reference run's outputs on the first sample, in graph-output
  /// order (null where an output is not a tensor); empty before
  /// recordReference() or when the checker keeps none.
  virtual std::vector<std::shared_ptr<const Tensor>> referenceOutputs() const { return {}; }
  /// Execute: makes a run in progress (recordReference in another thread)
  /// stop soon with an error; the checker is not used afterwards.
  virtual void cancel() {}
};

/// Outputs are compared with the tolerance of the precision each is
/// computed in, in either model (runtime/Compare.h has the one table: a
/// float32 output of float32 arithmetic within rtol 1e-4, atol 1e-5; one
/// computed through float16 within rtol 1e-2, atol 1e-3 + 1e-2 of its
/// scale; integers and bool exactly...).
struct ModelCheckOptions {
  uint64_t seed = 0;
  /// Sizes of symbolic input dims by name, and of unnamed ('?') dims as
  /// "INPUT[AXIS]" (the name the report prints them under); others get defaultDim.
  std::map<std::string, int64_t> dims;
  int64_t defaultDim = 1;
  /// Sizes to try first, in order, for every symbolic or unknown dim the
  /// user did not size, except dims that lead an input's shape (the batch,
  /// by every exporter's convention), which keep defaultDim; then the dims
  /// as given, then a search dim by dim (runtime/InputSearch.h). A 1x1
  /// image exercises little of a model and a pooling window may not fit it.
  /// Integer inputs compared with constants get those values (one sample
  /// per combination), index inputs stay inside what they index, masks are
  /// ones; what ran is reported in figures().dims.
  std::vector<int64_t> preferredDims;
  /// Per-input shapes, dtypes, ranges or values from a models.json-style file
  /// (runtime/Inputs.h loadInputSpecs), entry `specModel`; empty = none.
  std::string specFile;
  std::string specModel;
  /// Samples of inputs, seeds seed, seed+1, ... (each compared; more when
  /// the model's integer inputs pick branches).
  int samples = 1;
  /// Inputs given by the caller (real data), used in place of seeded ones.
  std::map<std::string, std::shared_ptr<const Tensor>> inputs;
  /// Shapes of seeded inputs by name, over the specs' (`x:1,3,224,224`).
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// Given a model and a weight budget, Result: why the default model check
/// cannot run on it ("" when it can): more constant bytes than the budget
/// (initializers and Constant values, subgraphs included), an op the
/// interpreter has no deterministic kernel for at the model's opset (custom
/// domains, random ops), or no graph.
std::string modelCheckUnsupportedReason(const Model &model, uint64_t weightBudgetBytes);

/// Given options, Result: a checker that runs the model in the interpreter.
std::unique_ptr<OutputChecker> createRuntimeOutputChecker(const ModelCheckOptions &options = {});

} // namespace onnxslim
