//===- transforms/PassManager.h - Pipelines of passes ----------*- C++ -*-===//
//
// A PassManager holds an ordered list of passes, parsed from pipeline text
// such as "eliminate-identity-ops,eliminate-dead-nodes" (a pass may carry
// options: "eliminate-unused-initializers{include-inputs=true}"), which
// pipelineText() prints back unchanged. run() executes the list once, or
// repeatedly up to a cap until a whole round changes nothing (fixed point).
//
// Instrumentation, all off by default (LLVM opt / mlir-opt flags):
//   print IR before/after a named pass, after every pass, after every pass
//   that changed something (stderr, ONNX textual syntax, a header line
//   naming the pass); verify the IR after each pass (a broken invariant
//   stops the run and names the pass); statistics and timing reports;
//   --model-check (final outputs must equal the input model's) and
//   --model-check-each (a pass that changes the outputs is rolled back,
//   reported, and not run again).
//
// The final model check uses the rewrite log (RewriteLog.h): a pipeline
// whose every rewrite is exact by construction is proven without running
// the model (the reference run in flight is cancelled). When the outputs
// differ, the check finds the rewrite at fault instead of only failing:
// it bisects over the number of rewrites a replay of the pipeline (from a
// copy of the input) may make, to the first one after which the outputs
// differ; then it runs the whole pipeline again with that rewrite blocked
// at that root (the rest of the work is kept), and checks again (up to
// kMaxUndoneRewrites times). The report names each undone rewrite and the
// output difference it made.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ModelCheck.h"
#include "Pass.h"
#include "PassRegistry.h"

#include <functional>
#include <optional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace onnxslim {

struct PassManagerOptions {
  std::vector<std::string> printIRBefore;
  std::vector<std::string> printIRAfter;
  bool printIRBeforeAll = false;
  bool printIRAfterAll = false;
  bool printIRAfterChange = false;
  /// Print every constant in full in IR dumps.
  bool printLargeConstants = false;
  /// Run ir/Verifier after every pass; stop at the first broken invariant.
  bool verifyEach = false;
  /// With verifyEach: also run this model check (the CLI's ONNX validator,
  /// ir/Validate.h) after every pass; its first line fails the run naming the pass.
  std::function<std::vector<std::string>(const Model &)> validateEach;
  /// Pass or pattern names whose debug lines print ("all" for every one).
  std::vector<std::string> debugOnly;
  /// Compare the final outputs with the input model's (needs `checker`).
  bool modelCheck = false;
  /// Compare after every changing pass and roll back a pass that differs.
  bool modelCheckEach = false;
  /// When the final check finds the outputs changed: find the rewrite at
  /// fault, undo it and keep the rest (see the file comment); false fails
  /// the run instead (a conversion the user asked for, such as --dtype,
  /// is not silently dropped).
  bool undoFaultyRewrites = true;
  /// Why the models cannot be run for the check ("" when they can: the
  /// constants pass the default check's budget, an op has no deterministic
  /// kernel...). The final check then proves the model structurally when
  /// every rewrite is exact by construction, and is otherwise skipped with
  /// this reason (best effort) or fails.
  std::string modelRunUnavailable;
  /// The default check (on unless asked otherwise): when the input model
  /// cannot run in the interpreter, the check is skipped with a note in the
  /// report instead of failing the run.
  bool modelCheckBestEffort = false;
  /// Where IR dumps, debug lines and rollback notes go (stderr when null).
  std::ostream *log = nullptr;
  /// Called as each pass starts, with its name and the round (progress).
  std::function<void(std::string_view pass, unsigned round)> onPassStart;
};

/// A rewrite the final model check found at fault and undid.
struct UndoneRewrite {
  RewriteRecord rewrite;
  /// The outputs it changed ("  output 'y': max abs diff ...").
  std::string difference;
};

/// What one run did.
struct PassManagerReport {
  unsigned rounds = 0;
  /// Whether the last round changed nothing (always true for a single round
  /// that ran to completion and a fixed-point run that stopped on its own).
  bool converged = true;
  bool changed = false;
  /// "pass: report" for every pass rolled back by --model-check-each.
  std::vector<std::string> rolledBack;
  /// Whether the final model was compared with the input, and what it found.
  bool modelChecked = false;
  CheckFigures checkFigures;
  /// Why a best-effort model check did not run ("" when it ran or was off).
  std::string modelCheckSkipped;
  /// Rewrites made (RewriteLog), and how many were exact by construction.
  size_t rewrites = 0;
  size_t exactRewrites = 0;
  /// Whether the final check proved the model without running it (every
  /// rewrite exact by construction).
  bool provedStructurally = false;
  /// Rewrites the final check found at fault and undid, in order.
  std::vector<UndoneRewrite> undone;
};

class PassManager {
public:
  /// Given the registry to resolve pass names in, Result: an empty pipeline.
  explicit PassManager(const PassRegistry &registry, PassManagerOptions options = {});
  ~PassManager();

  /// Given pipeline text ("a,b{k=v},c"; "" = no pass), Execute: appends
  /// those passes, Result: false with `error` for an unknown pass or a bad
  /// option (the pipeline is left unchanged then).
  bool parsePipeline(std::string_view text, std::string &error);
  /// Result: false with `error` when the options name a pass (print-IR) or
  /// a pass or pattern (debug-only) that the registry does not have.
  bool checkNames(std::string &error) const;
  /// Given a pass, Execute: appends it.
  void addPass(std::unique_ptr<Pass> pass);
  /// The pipeline as text; parsePipeline(pipelineText()) rebuilds it.
  std::string pipelineText() const;
  size_t size() const { return passes_.size(); }

  /// Given a round cap (>= 1), Execute: makes run() repeat the pipeline until
  /// a round changes nothing or `maxRounds` rounds ran. 1 = run once. The
  /// default, kDefaultMaxRounds, is what `onnxslim IN OUT` runs: a pass
  /// manager built on the default pipeline gives the command line's result.
  static constexpr unsigned kDefaultMaxRounds = 10;
  /// How many faulty rewrites the final model check undoes before it gives up.
  static constexpr unsigned kMaxUndoneRewrites = 8;
  void setMaxRounds(unsigned maxRounds) { maxRounds_ = maxRounds ? maxRounds : 1; }
  /// Given a checker, Execute: uses it for --model-check(-each).
  void setOutputChecker(std::unique_ptr<OutputChecker> checker);
  /// Given whether to check and whether a model that cannot run skips the
  /// check (instead of failing), Execute: sets the final model check
  /// (PassManagerOptions::modelCheck, modelCheckBestEffort).
  void setModelCheck(bool on, bool bestEffort) {
    options_.modelCheck = on;
    options_.modelCheckBestEffort = bestEffort;
  }
  /// Given why the models cannot be run for the check ("" = they can),
  /// Execute: sets PassManagerOptions::modelRunUnavailable.
  void setModelRunUnavailable(std::string why) { options_.modelRunUnavailable = std::move(why); }
  /// Given a model check, Execute: with verifyEach, runs it after every pass.
  void setValidateEach(std::function<std::vector<std::string>(const Model &)> fn) {
    options_.validateEach = std::move(fn);
  }

  /// Given a model, Execute: runs the pipeline with the instrumentation of
  /// the options, Result: false with `error` when a pass broke the IR or a
  /// contract, or the model check failed (the model must not be written).
  /// A rollback (--model-check-each) installs a copy of the main graph taken
  /// before the pass: pointers into the old graph do not survive it.
  bool run(Model &model, std::string &error);
  const PassManagerReport &report() const { return report_; }
  PassContext &context() { return context_; }
  const PassContext &context() const { return context_; }

  /// Wall time and runs of one pipeline entry.
  struct EntryTiming {
    std::string pass;
    double seconds = 0;
    unsigned runs = 0;
  };
  /// Every pipeline entry's time, in pipeline order.
  std::vector<EntryTiming> timings() const;
  /// Wall time of the last run(), instrumentation and model checks included.
  double totalSeconds() const { return totalSeconds_; }

  /// Given a stream, Execute: prints the counters of every pass that ran.
  void printStatistics(std::ostream &os) const;
  /// Given a stream, Execute: prints wall time per pipeline entry.
  void printTiming(std::ostream &os) const;

private:
  struct Entry {
    std::unique_ptr<Pass> pass;
    double seconds = 0;
    unsigned runs = 0;
    bool disabled = false; ///< rolled back by --model-check-each
  };
  /// Given a pass, a model and the context to run it in (quiet: a replay,
  /// without instrumentation or timing), Execute: runs it unless the
  /// context's rewrite log forbids, logging it as one rewrite when it
  /// changed the model and logged nothing itself, Result: false with
  /// `error` when it broke the IR or a contract.
  bool runPass(Entry &entry, Model &model, PassContext &context, unsigned round, bool quiet, bool &changed,
               std::string &error);
  /// Given a model and a context, Execute: runs the rounds of the pipeline
  /// (to a fixed point or the cap), Result: false with `error` as runPass.
  bool runRounds(Model &model, PassContext &context, bool quiet, std::string &error);
  /// Given the input model, a rewrite limit (nullopt: none) and the blocked
  /// rewrites of `blocks`, Execute: runs the pipeline quietly on a copy,
  /// Result: the copy, with its log in `log` (null with `error` on failure).
  std::unique_ptr<Model> replay(const Model &original, std::optional<size_t> limit, const RewriteLog &blocks,
                                PassContext &context, std::string &error);
  /// Given the model after the pipeline, a copy of the input and the
  /// difference the check found, Execute: finds and undoes the rewrites at
  /// fault (see the file comment), leaving `model` as the pipeline without
  /// them, Result: whether its outputs now match (else `error`).
  bool undoFaultyRewrites(Model &model, const Model &original, std::string difference, std::string &error);
  void dumpIR(const Model &model, std::string_view when, std::string_view pass);
  bool selected(const std::vector<std::string> &names, std::string_view pass) const;
  /// Whether some registered pass has a pattern named `name` (--debug-only).
  bool isPatternName(std::string_view name) const;
  /// Given whether the reference run succeeded and why not, Result: true to
  /// go on (success, or a best-effort check noted as skipped), false with
  /// `error` set.
  bool referenceRecorded(bool ok, const std::string &why, std::string &error);
  std::ostream &log() const;

  const PassRegistry &registry_;
  PassManagerOptions options_;
  std::vector<Entry> passes_;
  unsigned maxRounds_ = kDefaultMaxRounds;
  std::unique_ptr<OutputChecker> checker_;
  /// Whether checker_ holds a reference for the current run().
  bool checkerReady_ = false;
  PassContext context_;
  PassManagerReport report_;
  double totalSeconds_ = 0;
};

} // namespace onnxslim
