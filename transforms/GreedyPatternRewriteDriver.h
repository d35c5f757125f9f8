//===- transforms/GreedyPatternRewriteDriver.h - Worklist driver -*- C++ -*-===//
//
// Applies a PatternSet to a graph (and every If/Loop/Scan body in it) until
// no pattern applies any more, or an iteration cap is reached.
//
// One iteration (a sweep) visits every node in program order (pre-order
// through subgraphs) and tries the patterns rooted at its op type, in order;
// the first that succeeds wins. After each successful rewrite the worklist
// is drained: the rewriter's listener queues created and modified nodes, the
// users of replaced values and the producers of dropped operands, and
// removes erased nodes (nulled in place, never searched for); the sweep's
// cursor steps over erased nodes. Sweeps repeat until one makes no change
// (converged) or `maxIterations` is reached (not converged, reported). A
// sweep costs one visit per node plus one per queued node: no per-node table
// work for nodes nothing touched.
//
// The driver also checks the pattern contract: a pattern that returns false
// must not have changed the IR, and one that returns true must have changed
// it; a violation is an onnxslim bug and fails the pass.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pass.h"
#include "PatternMatch.h"

#include <cstdint>

namespace onnxslim {

struct GreedyRewriteConfig {
  /// Full sweeps over the graph before giving up.
  unsigned maxIterations = 10;
  /// Successful rewrites allowed in one sweep (guards against patterns that
  /// undo each other); 0 = 16 per node present at the start of the sweep + 1024.
  uint64_t maxRewritesPerIteration = 0;
  /// Also rewrite the nodes of If/Loop/Scan bodies.
  bool recurseIntoSubgraphs = true;
};

struct GreedyRewriteResult {
  /// Whether any pattern changed the IR.
  bool changed = false;
  /// Whether the last sweep made no change (a fixed point was reached).
  bool converged = false;
  unsigned iterations = 0;
  uint64_t numRewrites = 0;
};

/// Given a graph, patterns and a rewriter, Execute: rewrites greedily to a
/// fixed point (see the file comment), counting each success under the
/// pattern's name in the rewriter's context, Result: what happened.
GreedyRewriteResult applyPatternsGreedily(Graph &graph, const PatternSet &patterns, Rewriter &rewriter,
                                          const GreedyRewriteConfig &config = {});

/// The same for a model's main graph.
GreedyRewriteResult applyPatternsGreedily(Model &model, const PatternSet &patterns,
                                          PassContext &context, const GreedyRewriteConfig &config = {});

/// A pass made of patterns run by the greedy driver.
class PatternRewritePass : public Pass {
public:
  bool run(Model &model, PassContext &context) override;
  std::vector<std::string> patternNames() const override;

protected:
  /// Given an empty set, Execute: adds this pass's patterns (called once).
  virtual void populatePatterns(PatternSet &patterns) const = 0;
  GreedyRewriteConfig config_;

private:
  PatternSet patterns_;
  bool populated_ = false;
};

} // namespace onnxslim
