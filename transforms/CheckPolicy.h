//===- transforms/CheckPolicy.h - When and how the model is checked -*- C++ -*-===//
//
// The model check's policy; ModelCheck.h is the mechanism. Given what the
// caller asked (a CheckRequest: the mode, whether it gave its own pipeline,
// the budget, the inputs), a CheckPolicy says at each step of an
// optimization whether the outputs are compared and on which inputs:
//
//   configure()  before the pass manager exists: Require compares after the
//                pipeline, EachPass after every pass that changed the model;
//   attach()     gives the pass manager a checker whenever a comparison may
//                run (Auto on the default pipeline, Require, EachPass);
//   decide()     after graph surgery, Auto on the default pipeline runs the
//                models when their constants fit in the budget and every op
//                has a deterministic kernel; otherwise it can only prove the
//                model structurally (every rewrite exact by construction)
//                and is skipped, saying why, when that fails;
//   comparesFloat16(), conversionChecker()
//                whether a float16 conversion is compared with the float32
//                model (Float16Fallback.h) and whether its pass manager
//                fails on a difference (Require, EachPass);
//   skippedReason()
//                why an automatic check did not run, for the report.
//
// Every comparison runs on the caller's inputs with the dims the caller did
// not size tried at 32, 64 and 512, then 1 (a leading batch dim stays 1):
// a 1x1 image exercises little of a model and a pooling window may not fit.
// optimize() (api/Optimize.cpp) maps OptimizeOptions onto a CheckRequest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "transforms/ModelCheck.h"

#include <cstdint>
#include <memory>
#include <string>

namespace onnxslim {

class Model;
class PassManager;
struct PassManagerOptions;
struct PassManagerReport;

enum class CheckMode {
  /// The default pipeline compares when the model is cheap and runs in the
  /// interpreter (decide()); a given pipeline does not.
  Auto,
  /// Always compare; a model that cannot run is an error.
  Require,
  /// Never compare.
  Off,
  /// Compare after every pass that changed the model; roll back one that
  /// changed the outputs.
  EachPass,
};

/// What the caller asked of the check.
struct CheckRequest {
  CheckMode mode = CheckMode::Auto;
  /// Whether the caller gave its own pipeline (run once): Auto does not
  /// compare it.
  bool pipelineGiven = false;
  /// Constant bytes up to which Auto compares.
  uint64_t budgetBytes = uint64_t{256} << 20;
  /// The inputs: sizes of dims, specs, samples and real inputs as the
  /// caller gave them (preferredDims is the policy's and is replaced).
  ModelCheckOptions inputs;
};

class CheckPolicy {
public:
  explicit CheckPolicy(CheckRequest request);

  /// Whether the check is Auto's on the default pipeline, decided per
  /// model by decide().
  bool automatic() const;
  /// Whether the caller requires comparisons (Require, EachPass): a model
  /// that cannot run is an error, and so is a float conversion out of
  /// tolerance.
  bool required() const;

  /// The options of every comparison: the caller's inputs, and the sizes
  /// tried for the dims it did not size (32, 64, 512, then 1).
  ModelCheckOptions checkOptions() const;

  /// Given the pipeline's pass manager options, Execute: sets when the pass
  /// manager compares (Require: after the pipeline; EachPass: after every
  /// changing pass). Auto's comparison is turned on by decide().
  void configure(PassManagerOptions &options) const;
  /// Given the pipeline's pass manager, Execute: gives it a checker when a
  /// comparison may run (automatic(), Require, EachPass).
  void attach(PassManager &pm) const;
  /// Given the model after graph surgery and the pipeline's pass manager,
  /// Execute: when automatic(), turns the pass manager's best-effort check
  /// on, telling it why the models cannot be run when their constants pass
  /// the budget or an op has no deterministic kernel (it then proves
  /// structurally or skips), Result: "" (kept for the report's field: the
  /// reason a check was skipped is known after the run, skippedReason()).
  std::string decide(const Model &model, PassManager &pm);

  /// Whether a float16 conversion after the pipeline is compared with the
  /// float32 model: when required(), or under Auto when decide() found the
  /// models can run (a given pipeline included).
  bool comparesFloat16() const;
  /// The checker of the float conversion's own pass manager: with
  /// required(), a conversion out of float16's tolerance fails; null
  /// otherwise.
  std::unique_ptr<OutputChecker> conversionChecker() const;

  /// Given the pipeline's report, Result: why an automatic check did not
  /// run (the models cannot run and a rewrite is not exact by
  /// construction, or the input model did not run in the interpreter); ""
  /// when it ran or proved the model, or the check is not automatic.
  std::string skippedReason(const PassManagerReport &run) const;

private:
  CheckRequest request_;
  /// Why the models cannot be run (decide(); "" when they can).
  std::string unrunnable_;
};

} // namespace onnxslim
