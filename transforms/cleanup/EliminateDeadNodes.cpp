//===- transforms/cleanup/EliminateDeadNodes.cpp - Remove nodes nothing needs===//
//
// eliminate-dead-nodes: erases the nodes none of whose results reaches a
// graph output.
//
//   Before:                          After:
//     a = Relu(x)                      a = Relu(x)
//     d = Exp(x)        # unused       return a
//     e = Add(d, x)     # unused
//     return a
//
// Liveness is computed in one backward sweep per graph: a node is live when
// one of its results is used by a live node or by an output of the main
// graph or of a live node's subgraph; the subgraphs of a live node are swept
// the same way (all of a body's outputs are needed), and a use from inside a
// subgraph (a capture) keeps the outer value alive exactly when the user is
// live. A node whose results are all unused but that owns a subgraph goes
// with its subgraph.
//
// Never removed, even when unused:
//   - nodes of a non-default domain that are not known to be pure (custom
//     ops may have side effects; ai.onnx.ml ops and a list of com.microsoft
//     ops are pure), and nodes calling a model-local function;
//   - nodes whose subgraphs contain such nodes.
// The graph's inputs, initializers and outputs are never touched here
// (eliminate-unused-initializers removes initializers).
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"
#include "transforms/PatternMatch.h"

#include "transforms/PointerMap.h"
#include "transforms/ValueUtils.h"

#include <string_view>

namespace onnxslim {

namespace {

/// com.microsoft contrib ops that compute their outputs from their inputs only.
constexpr std::string_view kPureMicrosoftOps[] = {
    "Attention",        "BiasGelu",        "FastGelu",          "FusedConv",
    "FusedGemm",        "FusedMatMul",     "Gelu",              "QuickGelu",
    "LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
    "EmbedLayerNormalization", "MultiHeadAttention", "BiasAdd", "BiasSoftmax",
    "NhwcConv",         "QLinearAdd",      "QLinearMul",        "QLinearSigmoid",
    "QLinearLeakyRelu", "QLinearGlobalAveragePool", "RotaryEmbedding"};

class DeadNodeSweep {
public:
  DeadNodeSweep(const Model &model, Rewriter &rewriter) : model_(model), rewriter_(rewriter) {}

  /// Marks the nodes of `g` (and of live nodes' subgraphs) live or dead.
  void visit(Graph &g) {
    for (Node *n = g.lastNode(); n; n = n->prev()) {
      bool used = anyResultLive(*n);
      if (!used && !hasSideEffects(*n)) {
        dead_.push_back(n);
        continue;
      }
      if (!used)
        rewriter_.notifyMatchFailure(n, "unused but kept: it may have side effects");
      live_.insert(n);
      if (hasSubgraphs(*n))
        for (Graph *sg : n->subgraphs())
          visit(*sg);
    }
  }

  void reserve(size_t nodes) { live_.reserve(nodes); }

  /// Erases the dead nodes, users before producers, Result: how many.
  size_t erase() {
    for (Node *n : dead_) {
      rewriter_.notifyRewrite(n, "erased: no result reaches a graph output");
      rewriter_.eraseNode(n);
    }
    return dead_.size();
  }

private:
  bool liveUse(const Use &u) const {
    if (u.isGraphOutput()) {
      const Node *parent = u.ownerGraph()->parentNode();
      return !parent || live_.contains(parent);
    }
    return live_.contains(u.owner());
  }

  bool anyResultLive(const Node &n) const {
    for (size_t i = 0; i < n.numResults(); ++i)
      if (const Value *r = n.result(i))
        for (Use *u = r->uses().first; u; u = u->next())
          if (liveUse(*u))
            return true;
    return false;
  }

  bool knownPure(const Node &n) const {
    if (n.isDefaultDomain())
      return !callsFunction(n);
    if (n.domain() == "ai.onnx.ml")
      return !callsFunction(n);
    if (n.domain() == "com.microsoft")
      for (std::string_view op : kPureMicrosoftOps)
        if (n.opType() == op)
          return true;
    return false;
  }

  bool callsFunction(const Node &n) const {
    for (const auto &f : model_.functions)
      if (f->name == n.opType() && f->domain == n.domain())
        return true;
    return false;
  }

  bool hasSideEffects(const Node &n) {
    if (!hasSubgraphs(n))
      return !knownPure(n);
    if (uint8_t *memo = sideEffects_.find(&n))
      return *memo;
    bool effects = !knownPure(n);
    for (Graph *sg : n.subgraphs())
      for (const Node *inner : sg->nodes())
        if (!effects && hasSideEffects(*inner))
          effects = true;
    sideEffects_.insert(&n, effects);
    return effects;
  }

  const Model &model_;
  Rewriter &rewriter_;
  PointerSet live_;
  PointerMap<uint8_t> sideEffects_; ///< memo for nodes owning subgraphs
  std::vector<Node *> dead_;
};

class EliminateDeadNodesPass : public Pass {
public:
  /// What reaches no output computes nothing an output depends on.
  bool isExactByConstruction() const override { return true; }
  std::string_view name() const override { return "eliminate-dead-nodes"; }
  std::string_view description() const override {
    return "Erase nodes whose results reach no graph output (side-effect-free ops only)";
  }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    Rewriter rewriter(context);
    DeadNodeSweep sweep(model, rewriter);
    sweep.reserve(model.graph()->numNodes());
    sweep.visit(*model.graph());
    size_t erased = sweep.erase();
    context.counter("dead-nodes", "Nodes whose results reach no graph output") += erased;
    return erased != 0;
  }
};

} // namespace

std::unique_ptr<Pass> createEliminateDeadNodesPass() { return std::make_unique<EliminateDeadNodesPass>(); }

} // namespace onnxslim
