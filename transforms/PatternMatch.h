//===- transforms/PatternMatch.h - Patterns and the rewriter ---*- C++ -*-===//
//
// A Pattern is a local rewrite rooted at one op type: "an Identity whose
// result is not a graph output", "a Transpose fed by a Transpose". Its one
// entry point, matchAndRewrite(), checks the cheap and selective conditions
// first, then rewrites; the IR changes if and only if it returns true. A
// condition that fails is reported with rewriter.notifyMatchFailure(node,
// "reason"), which prints under --debug-only=NAME and returns false.
//
// Every change to the IR goes through the Rewriter, so that whoever drives
// the rewrite (the greedy driver's worklist, the statistics, the debug trace)
// sees it: created nodes are queued, users of replaced values and producers
// of dropped operands are revisited, erased nodes leave the worklist.
// Whole-graph passes use the same Rewriter (without a listener) so that
// their changes are counted the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../ir/IR.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace onnxslim {

class PassContext;
class Rewriter;

/// A local rewrite rooted at nodes of one op type.
class Pattern {
public:
  /// Given a root op type ("" = any op), a kebab-case name and the root's
  /// domain ("" = the default ONNX domain), Result: a pattern.
  Pattern(std::string rootOp, std::string name, std::string rootDomain = "")
      : rootOp_(std::move(rootOp)), name_(std::move(name)), rootDomain_(std::move(rootDomain)) {}
  virtual ~Pattern();

  const std::string &rootOp() const { return rootOp_; }
  const std::string &rootDomain() const { return rootDomain_; }
  const std::string &name() const { return name_; }
  /// Whether `node` is a root this pattern applies to (op type and domain).
  bool matchesRoot(const Node &node) const;

  /// Given a root node, Execute: checks the conditions and, when they hold,
  /// rewrites through `rewriter`, Result: true if and only if the IR changed.
  virtual bool matchAndRewrite(Node *node, Rewriter &rewriter) const = 0;

  /// Whether every rewrite of this pattern is exact by construction (it
  /// cannot change what the model computes; transforms/RewriteLog.h).
  virtual bool isExactByConstruction() const { return false; }

private:
  std::string rootOp_;
  std::string name_;
  std::string rootDomain_;
};

/// An ordered set of patterns, indexed by root op type.
class PatternSet {
public:
  /// Given a pattern, Execute: adds it (tried after those added before).
  void add(std::unique_ptr<Pattern> pattern);
  template <typename P, typename... Args> void add(Args &&...args) {
    add(std::make_unique<P>(std::forward<Args>(args)...));
  }
  /// The patterns that may apply to `node`, in the order they were added.
  /// Patterns with an empty root op come last.
  const std::vector<const Pattern *> &patternsFor(const Node &node) const;
  const std::vector<std::unique_ptr<Pattern>> &patterns() const { return patterns_; }
  bool empty() const { return patterns_.empty(); }

private:
  std::vector<std::unique_ptr<Pattern>> patterns_;
  std::unordered_map<std::string, std::vector<const Pattern *>> byOp_;
  std::vector<const Pattern *> anyOp_;
  /// Rooted patterns followed by catch-all ones, per op (built on demand).
  mutable std::unordered_map<std::string, std::vector<const Pattern *>> mergedCache_;
};

/// Observes the changes a Rewriter makes (the greedy driver's worklist).
class RewriteListener {
public:
  virtual ~RewriteListener();
  /// A node was created and linked into its graph.
  virtual void notifyNodeInserted(Node *) {}
  /// A node's operands, attributes, op type or results changed in place.
  virtual void notifyNodeModified(Node *) {}
  /// A node is about to be deleted (called for the nodes of its subgraphs too).
  virtual void notifyNodeErased(Node *) {}
  /// A value lost a use: its producer may have become dead or simplifiable.
  virtual void notifyUseDropped(Value *) {}
};

/// The only way passes change the IR.
class Rewriter {
public:
  /// Given the pass context and an optional listener, Result: a rewriter.
  explicit Rewriter(PassContext &context, RewriteListener *listener = nullptr);

  PassContext &context() const { return context_; }
  void setListener(RewriteListener *listener) { listener_ = listener; }

  //===--- Creating nodes ---------------------------------------------===//
  /// Given a position, an op, operands and result name bases (each made fresh
  /// in the model's name table; "" = an omitted result), Execute: creates the
  /// node right before `pos`, Result: the node.
  Node *createNodeBefore(Node *pos, std::string opType, const std::vector<Value *> &operands,
                         const std::vector<std::string> &resultNameBases, std::string domain = "");
  /// Like createNodeBefore, right after `pos`.
  Node *createNodeAfter(Node *pos, std::string opType, const std::vector<Value *> &operands,
                        const std::vector<std::string> &resultNameBases, std::string domain = "");
  /// Given a graph and a base name, Result: a name no value of the model uses yet.
  std::string freshName(Graph &graph, std::string_view base);

  //===--- Replacing values -------------------------------------------===//
  /// Given two values, Execute: every use of `from` (graph outputs included)
  /// reads `to`; the old users are revisited, Result: `from` has no uses.
  void replaceAllUsesWith(Value *from, Value *to);
  /// Like replaceAllUsesWith for the uses that satisfy `pred`, Result: how many moved.
  size_t replaceUsesWithIf(Value *from, Value *to, const std::function<bool(const Use &)> &pred);
  /// Moves every node use of `from` to `to` and leaves graph-output uses (the
  /// model's interface names) in place, Result: how many uses moved.
  size_t replaceNodeUsesWith(Value *from, Value *to);
  /// Given a node and one replacement per result (null for unused results),
  /// Execute: replaces all uses of each result, then erases the node.
  void replaceNode(Node *node, const std::vector<Value *> &replacements);

  //===--- Changing and erasing nodes ---------------------------------===//
  /// Given a node whose results have no uses, Execute: erases it (and its
  /// subgraphs); the producers of its operands are revisited.
  void eraseNode(Node *node);
  /// Given a node, an operand index and a value (null = omit), Execute: sets
  /// that operand; the old operand's producer is revisited.
  void setOperand(Node *node, size_t index, Value *value);
  /// Given a node and a new operand count, Execute: drops or appends operand slots.
  void resizeOperands(Node *node, size_t count);
  /// Given a node and an unused result index, Execute: makes that result an
  /// omitted output.
  void dropResult(Node *node, size_t index);
  /// Given a node and an unused result index, Execute: removes that result
  /// slot (later results shift down).
  void eraseResult(Node *node, size_t index);
  /// Given a node and an operand index, Execute: removes that operand slot
  /// (later operands shift down); the old operand's producer is revisited.
  void eraseOperand(Node *node, size_t index);
  /// Given a node and a change to its attributes or op type (made by `fn`,
  /// which must not touch operands, results or other nodes), Execute: runs
  /// it and revisits the node.
  void modifyNodeInPlace(Node *node, const std::function<void()> &fn);
  /// Given a value and a name, Execute: relabels the value (never a graph
  /// input or output: that is the model's interface).
  void renameValue(Value *value, std::string name);

  //===--- Initializers -----------------------------------------------===//
  /// Given a graph, a base name and a tensor, Execute: adds an initializer
  /// with a fresh name, Result: its value.
  Value *addInitializer(Graph &graph, std::string_view nameBase, TensorPtr tensor);
  /// Given a graph and a predicate, Execute: removes every unused initializer
  /// (never one that is also a graph input) for which it holds, in one sweep,
  /// Result: how many were removed.
  size_t eraseUnusedInitializersIf(Graph &graph, const std::function<bool(Value *)> &pred);
  /// Given a graph input with no uses, Execute: removes it (interface change:
  /// only when the user asked for it).
  void eraseGraphInput(Graph &graph, Value *input);
  /// Given a graph and an output position, Execute: removes that output
  /// (for a body whose parent op drops the matching slot; the value's
  /// producer is revisited).
  void eraseGraphOutput(Graph &graph, size_t index);

  //===--- Diagnostics ------------------------------------------------===//
  /// Given the pattern (or pass step) about to run, Execute: names it in debug lines.
  void setCurrentPattern(std::string_view name) { pattern_ = name; }
  const std::string &currentPattern() const { return pattern_; }
  /// Given a node and a reason, Execute: prints "declined" under --debug-only,
  /// Result: false (so a pattern can `return rewriter.notifyMatchFailure(...)`).
  bool notifyMatchFailure(const Node *node, std::string_view reason);
  /// Given a node and what was done, Execute: prints it under --debug-only.
  void notifyRewrite(const Node *node, std::string_view what);
  /// Whether --debug-only selects the current pass or pattern.
  bool debugEnabled() const;

  /// Number of IR changes made so far (every mutator above counts one).
  uint64_t changeCount() const { return changes_; }

private:
  void noteChange() { ++changes_; }
  void notifyModified(Node *node) {
    if (listener_ && node)
      listener_->notifyNodeModified(node);
  }
  void notifyDropped(Value *value) {
    if (listener_ && value)
      listener_->notifyUseDropped(value);
  }
  Node *insertCreated(Node *pos, bool before, std::string opType, const std::vector<Value *> &operands,
                      const std::vector<std::string> &resultNameBases, std::string domain);

  PassContext &context_;
  RewriteListener *listener_;
  std::string pattern_;
  uint64_t changes_ = 0;
  uint64_t freshCounter_ = 0;
};

/// "Op 'name'" or "Op (-> first result)", for messages about a node.
std::string nodeLabel(const Node &node);

} // namespace onnxslim
