//===- transforms/GreedyPatternRewriteDriver.cpp - Worklist driver ---------===//
#include "transforms/GreedyPatternRewriteDriver.h"

#include "transforms/PointerMap.h"
#include "transforms/ValueUtils.h"

#include <string>
#include <vector>

namespace onnxslim {

namespace {

/// A LIFO worklist without duplicates; removal nulls the entry in O(1).
class Worklist {
public:
  void push(Node *n) {
    if (index_.insert(n, list_.size()).second)
      list_.push_back(n);
  }
  Node *pop() {
    while (!list_.empty()) {
      Node *n = list_.back();
      list_.pop_back();
      if (n) {
        index_.erase(n);
        return n;
      }
    }
    return nullptr;
  }
  void remove(Node *n) {
    if (size_t *i = index_.find(n)) {
      list_[*i] = nullptr;
      index_.erase(n);
    }
  }
  void clear() {
    list_.clear();
    index_.clear();
  }

private:
  std::vector<Node *> list_;
  PointerMap<size_t> index_;
};

/// Where a sweep is in one graph: the node being visited and the next one.
struct Cursor {
  Node *current = nullptr;
  Node *next = nullptr;
  bool currentErased = false;
};

class GreedyDriver : public RewriteListener {
public:
  GreedyDriver(Graph &root, const PatternSet &patterns, Rewriter &rewriter,
               const GreedyRewriteConfig &config)
      : root_(root), patterns_(patterns), rewriter_(rewriter), config_(config) {}

  GreedyRewriteResult run() {
    GreedyRewriteResult result;
    rewriter_.setListener(this);
    while (result.iterations < config_.maxIterations) {
      ++result.iterations;
      changed_ = false;
      stopped_ = false;
      rewrites_ = 0;
      cap_ = config_.maxRewritesPerIteration ? config_.maxRewritesPerIteration
                                             : 16 * static_cast<uint64_t>(countNodes(root_)) + 1024;
      sweepGraph(root_);
      result.changed |= changed_;
      result.numRewrites += rewrites_;
      if (stopped_)
        break;
      if (!changed_) {
        result.converged = true;
        break;
      }
    }
    rewriter_.setListener(nullptr);
    rewriter_.setCurrentPattern({});
    worklist_.clear();
    return result;
  }

  void notifyNodeInserted(Node *n) override { enqueue(n); }
  void notifyNodeModified(Node *n) override { enqueue(n); }
  void notifyNodeErased(Node *n) override {
    worklist_.remove(n);
    for (Cursor &c : cursors_) {
      if (c.current == n)
        c.currentErased = true;
      if (c.next == n)
        c.next = n->next(); // still linked while being notified
    }
  }
  void notifyUseDropped(Value *v) override {
    if (Node *producer = v ? v->definingNode() : nullptr)
      enqueue(producer);
  }

private:
  size_t countNodes(const Graph &g) const {
    size_t n = g.numNodes();
    if (config_.recurseIntoSubgraphs)
      for (const Node *node : g.nodes())
        if (hasSubgraphs(*node))
          for (const Graph *sg : node->subgraphs())
            n += countNodes(*sg);
    return n;
  }

  void enqueue(Node *n) {
    if (n && (config_.recurseIntoSubgraphs || n->graph() == &root_))
      worklist_.push(n);
  }

  /// Visits the nodes of `g` in program order (and their bodies), draining
  /// the worklist after every successful rewrite.
  void sweepGraph(Graph &g) {
    cursors_.push_back(Cursor{});
    size_t level = cursors_.size() - 1;
    for (Node *n = g.firstNode(); n && !stopped_;) {
      cursors_[level] = Cursor{n, n->next(), false};
      if (visit(n))
        drain();
      Cursor c = cursors_[level];
      if (!c.currentErased && config_.recurseIntoSubgraphs && !stopped_ && hasSubgraphs(*c.current))
        for (Graph *sg : c.current->subgraphs())
          sweepGraph(*sg);
      n = cursors_[level].next;
    }
    cursors_.pop_back();
  }

  void drain() {
    while (!stopped_)
      if (Node *n = worklist_.pop())
        visit(n);
      else
        break;
  }

  /// Tries the patterns of `node` that the rewrite log allows; Result:
  /// whether one rewrote (and is then in the log).
  bool visit(Node *node) {
    PassContext &ctx = rewriter_.context();
    RewriteLog &log = ctx.rewriteLog();
    if (log.exhausted())
      return false;
    std::string key, label; // the root, named before a pattern may erase it
    for (const Pattern *p : patterns_.patternsFor(*node)) {
      if (!p->matchesRoot(*node))
        continue;
      if (key.empty() && label.empty()) {
        key = rewriteKey(*node);
        label = nodeLabel(*node);
      }
      if (log.hasBlocks() && !log.allows(p->name(), key))
        continue;
      rewriter_.setCurrentPattern(p->name());
      uint64_t before = rewriter_.changeCount();
      bool ok = p->matchAndRewrite(node, rewriter_);
      bool didChange = rewriter_.changeCount() != before;
      if (ok != didChange) {
        ctx.signalPassFailure("pattern '" + p->name() + "' " +
                              (ok ? "returned true without changing the IR"
                                  : "returned false but changed the IR"));
        changed_ |= didChange;
        stopped_ = true;
        return false;
      }
      if (!ok)
        continue;
      log.record(RewriteRecord{ctx.currentPass(), p->name(), std::move(label), std::move(key), ctx.round(),
                               p->isExactByConstruction()});
      changed_ = true;
      ++rewrites_;
      ++ctx.counter(p->name());
      if (rewrites_ > cap_)
        stopped_ = true;
      return true; // `node` may be gone
    }
    return false;
  }

  Graph &root_;
  const PatternSet &patterns_;
  Rewriter &rewriter_;
  const GreedyRewriteConfig &config_;
  Worklist worklist_;
  std::vector<Cursor> cursors_;
  bool changed_ = false;
  bool stopped_ = false;
  uint64_t rewrites_ = 0;
  uint64_t cap_ = 0;
};

} // namespace

GreedyRewriteResult applyPatternsGreedily(Graph &graph, const PatternSet &patterns, Rewriter &rewriter,
                                          const GreedyRewriteConfig &config) {
  GreedyDriver driver(graph, patterns, rewriter, config);
  return driver.run();
}

GreedyRewriteResult applyPatternsGreedily(Model &model, const PatternSet &patterns,
                                          PassContext &context, const GreedyRewriteConfig &config) {
  if (!model.graph())
    return GreedyRewriteResult{false, true, 0, 0};
  Rewriter rewriter(context);
  return applyPatternsGreedily(*model.graph(), patterns, rewriter, config);
}

bool PatternRewritePass::run(Model &model, PassContext &context) {
  if (!populated_) {
    populatePatterns(patterns_);
    populated_ = true;
  }
  GreedyRewriteResult result = applyPatternsGreedily(model, patterns_, context, config_);
  if (!result.converged && !context.failed())
    context.warn("the rewrite did not converge in " + std::to_string(result.iterations) +
                 " iterations (" + std::to_string(result.numRewrites) + " rewrites); stopped");
  return result.changed;
}

std::vector<std::string> PatternRewritePass::patternNames() const {
  PatternSet patterns;
  populatePatterns(patterns);
  std::vector<std::string> names;
  for (const std::unique_ptr<Pattern> &p : patterns.patterns())
    names.push_back(p->name());
  return names;
}

} // namespace onnxslim
