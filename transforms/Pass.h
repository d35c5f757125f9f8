//===- transforms/Pass.h - Passes, their context and statistics -*- C++ -*-===//
//
// A Pass transforms a whole Model. It keeps no state between runs: everything
// a run needs (statistic counters, debug output, failure reporting) lives in
// the PassContext handed to run(). Every pass has one kebab-case name, used
// on the command line (--passes=), in debug output (--debug-only=) and in the
// statistics report (--stats).
//
// Local rewrites are written as Patterns (transforms/PatternMatch.h) and run
// by a PatternRewritePass (transforms/GreedyPatternRewriteDriver.h); whole-
// graph analyses (dead nodes, CSE...) derive from Pass directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "RewriteLog.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace onnxslim {

class Model;
class Node;

/// One named counter of one pass (LLVM's STATISTIC, per run).
struct StatisticCounter {
  std::string name;
  std::string description;
  uint64_t value = 0;
};

/// The counters of one pass, in the order they were first touched.
struct PassStatistics {
  std::string pass;
  std::vector<StatisticCounter> counters;
  /// The pipeline entry that ran it (SIZE_MAX: run outside a pipeline): a
  /// pass listed twice keeps a counter set per entry.
  size_t entry = SIZE_MAX;
};

/// What a pass run sees besides the model: statistics, debug output, failure.
class PassContext {
public:
  PassContext();

  //===--- Statistics -------------------------------------------------===//
  /// Given a counter name (and a one-line description the first time),
  /// Result: the counter of the current pass, created at 0 on first use.
  uint64_t &counter(std::string_view name, std::string_view description = {});
  /// Given a pass name (and the pipeline entry running it), Execute: makes
  /// it the pass whose counters counter() returns and whose name prefixes
  /// debug lines.
  void setCurrentPass(std::string_view pass, size_t entry = SIZE_MAX);
  const std::string &currentPass() const { return currentPass_; }
  /// Every counter touched so far, grouped by pass in first-run order.
  const std::vector<PassStatistics> &statistics() const { return stats_; }

  //===--- Debug output (--debug-only) --------------------------------===//
  /// Given names (pass or pattern names; "all" enables everything), Execute:
  /// enables debug lines for them.
  void enableDebug(const std::vector<std::string> &names);
  /// Whether debug lines of the current pass or of the pattern `name` print.
  bool isDebugEnabled(std::string_view name = {}) const;
  /// Where debug lines, warnings and IR dumps go (stderr by default).
  std::ostream &debugStream() const { return *debug_; }
  void setDebugStream(std::ostream &os) { debug_ = &os; }
  /// Given a message, Execute: records "[pass] message" (see warnings())
  /// and prints "onnxslim: warning: [pass] message" to the debug stream.
  void warn(std::string_view message);
  /// Every warning of this context so far, in order.
  const std::vector<std::string> &warnings() const { return warnings_; }

  //===--- Rewrite log (RewriteLog.h) ----------------------------------===//
  /// Every rewrite of the run so far, and its replay limit and blocks.
  RewriteLog &rewriteLog() { return rewrites_; }
  const RewriteLog &rewriteLog() const { return rewrites_; }
  /// Given a step of the current pass (a name for the kind of rewrite, e.g.
  /// "fold") about to rewrite at `root`, and whether it is exact by
  /// construction, Result: whether it may be made; when true it is recorded
  /// and the caller must make it. Whole-model passes ask this per rewrite
  /// so that the model check can name and undo one of them; a pass that
  /// does not is logged as one rewrite per changing run.
  bool beginRewrite(std::string_view step, const Node &root, bool exact);
  /// The round of the pipeline being run (for the log).
  void setRound(unsigned round) { round_ = round; }
  unsigned round() const { return round_; }

  //===--- Failure ----------------------------------------------------===//
  /// Given a message, Execute: records that the current pass broke a contract
  /// (an onnxslim bug, never a property of the model); the pass manager stops.
  void signalPassFailure(std::string message);
  bool failed() const { return !failure_.empty(); }
  const std::string &failureMessage() const { return failure_; }
  void clearFailure() { failure_.clear(); }

private:
  std::vector<PassStatistics> stats_;
  std::string currentPass_;
  size_t currentStats_ = SIZE_MAX;
  size_t currentEntry_ = SIZE_MAX;
  std::set<std::string, std::less<>> debugNames_;
  bool debugAll_ = false;
  std::ostream *debug_;
  std::vector<std::string> warnings_;
  std::string failure_;
  RewriteLog rewrites_;
  unsigned round_ = 0;
};

/// A transformation of a whole model.
class Pass {
public:
  virtual ~Pass();

  /// The kebab-case name (command line, debug output, statistics).
  virtual std::string_view name() const = 0;
  /// One line for --list-passes.
  virtual std::string_view description() const = 0;
  /// Given a model, Execute: transforms it (main graph and every subgraph),
  /// Result: true if and only if the IR changed.
  virtual bool run(Model &model, PassContext &context) = 0;

  /// Given an option (`name{key=value}` in a pipeline), Execute: sets it,
  /// Result: false with `error` set for an unknown key or a bad value.
  virtual bool setOption(std::string_view key, std::string_view value, std::string &error);
  /// The non-default options as `key=value` separated by spaces ("" if none),
  /// so that a parsed pipeline prints back to the same text.
  virtual std::string optionsText() const { return {}; }
  /// The names of the rewrite patterns this pass runs (--debug-only accepts
  /// them besides pass names); none for a pass without patterns.
  virtual std::vector<std::string> patternNames() const { return {}; }
  /// Whether every change this pass makes is exact by construction (it
  /// cannot change what the model computes: RewriteLog.h), so that the
  /// model check may prove it without running the model. Patterns and
  /// steps that a pass logs itself say so per rewrite.
  virtual bool isExactByConstruction() const { return false; }
};

} // namespace onnxslim
