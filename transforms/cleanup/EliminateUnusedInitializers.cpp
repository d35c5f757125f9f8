//===- transforms/cleanup/EliminateUnusedInitializers.cpp - Drop unread weights===//
//
// eliminate-unused-initializers: removes the initializers nothing reads, in
// the main graph and in every subgraph.
//
//   Before:  graph (float[2] x) => (y) <float[2] w = {1, 2}, float[2] v = {3, 4}>
//              { y = Add(x, w) }
//   After:   graph (float[2] x) => (y) <float[2] w = {1, 2}> { y = Add(x, w) }
//
// Conditions: the initializer has no use (a use from inside a subgraph
// counts). An initializer that is also a graph input (a default value the
// caller may override) is part of the interface and stays, unless the
// option include-inputs=true asks to remove unused ones from the main graph
// too (never from a subgraph, whose inputs are positional).
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

class EliminateUnusedInitializersPass : public Pass {
public:
  /// Nothing reads what is removed.
  bool isExactByConstruction() const override { return true; }
  std::string_view name() const override { return "eliminate-unused-initializers"; }
  std::string_view description() const override {
    return "Remove initializers nothing reads (not graph inputs, unless include-inputs=true)";
  }

  bool setOption(std::string_view key, std::string_view value, std::string &error) override {
    if (key != "include-inputs")
      return Pass::setOption(key, value, error);
    if (value != "true" && value != "false") {
      error = "option include-inputs of " + std::string(name()) + " takes true or false";
      return false;
    }
    includeInputs_ = value == "true";
    return true;
  }
  std::string optionsText() const override { return includeInputs_ ? "include-inputs=true" : ""; }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    Rewriter rewriter(context);
    size_t removed = sweep(*model.graph(), rewriter);
    size_t inputs = includeInputs_ ? removeUnusedInputs(*model.graph(), rewriter) : 0;
    context.counter("initializers", "Unused initializers removed") += removed;
    if (includeInputs_)
      context.counter("graph-inputs", "Unused graph inputs with initializers removed") += inputs;
    return removed + inputs != 0;
  }

private:
  size_t sweep(Graph &g, Rewriter &rewriter) {
    size_t removed = rewriter.eraseUnusedInitializersIf(g, [&](Value *v) {
      if (rewriter.debugEnabled())
        rewriter.context().debugStream() << "[" << name() << "] removed initializer '" << v->name() << "'\n";
      return true;
    });
    for (Node *n : g.nodes())
      if (hasSubgraphs(*n))
        for (Graph *sg : n->subgraphs())
          removed += sweep(*sg, rewriter);
    return removed;
  }

  size_t removeUnusedInputs(Graph &g, Rewriter &rewriter) {
    std::vector<Value *> doomed;
    for (Value *v : g.inputs())
      if (v->initializer() && !v->hasUses())
        doomed.push_back(v);
    for (Value *v : doomed)
      rewriter.eraseGraphInput(g, v);
    return doomed.size();
  }

  bool includeInputs_ = false;
};

} // namespace

std::unique_ptr<Pass> createEliminateUnusedInitializersPass() {
  return std::make_unique<EliminateUnusedInitializersPass>();
}

} // namespace onnxslim
