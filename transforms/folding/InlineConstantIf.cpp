//===- transforms/folding/InlineConstantIf.cpp - Inline Ifs of constant condition===//
//
// inline-constant-if: an If whose condition is a constant is replaced by the
// branch it always takes, inlined into the enclosing graph.
//
//   Before:                                    After:
//     y = If(c) <then_branch = g1 () => (t) {    t = Add(x, one)   # x, one: outer
//                   t = Add(x, one) },           y = Neg(t)
//                 else_branch = g2 () => (e) {
//                   e = Sub(x, one) }>
//     z = Neg(y)        # c = Constant true        (z = Neg(t))
//
// Inlining: the taken branch's nodes are copied before the If, in order
// (their subgraphs deep-copied); its initializers become constants of the
// enclosing graph (initializers in the main graph, Constant nodes in a
// subgraph: transforms/folding/FoldUtils.h). Every copied value gets a fresh name
// from the model's name table (the branch's names are usually kept, with a
// suffix only on a clash). Outer-scope values the branch captured are used
// directly. Each If result is replaced by the matching branch output: a
// copied value, an outer value read directly, or a branch initializer. When
// an If result is a graph output, an Identity keeps its name (the model's
// interface); eliminate-identity-ops resolves it where it can.
//
// Conditions: the condition is a constant with exactly one element (bool,
// or numeric: non-zero is true); the branch has no inputs, no sparse
// initializers, and as many outputs as the If has results. Ifs nested in
// the taken branch are inlined first (bodies are visited before their node).
//
//===----------------------------------------------------------------------===//
#include "transforms/Clone.h"
#include "transforms/folding/FoldUtils.h"
#include "transforms/Pass.h"
#include "transforms/PatternMatch.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <unordered_set>

namespace onnxslim {

namespace {

/// The truth value of a one-element constant, or nullopt.
std::optional<bool> constantCondition(const Value *cond) {
  TensorPtr t = constantTensor(cond);
  if (!t || t->numElements() != 1 || elementBits(t->dtype()) == 0 || t->dtype() == DataType::String)
    return std::nullopt;
  size_t n = elementSize(t->dtype());
  if (n == 0)
    return std::nullopt;
  if (isFloatingPoint(t->dtype())) {
    if (t->dtype() == DataType::Float)
      return t->at<float>(0) != 0.0f;
    if (t->dtype() == DataType::Double)
      return t->at<double>(0) != 0.0;
    return std::nullopt;
  }
  // Integers and bool: any non-zero byte is true.
  for (size_t i = 0; i < n; ++i)
    if (t->rawData()[i] != 0)
      return true;
  return false;
}

class IfInliner {
public:
  explicit IfInliner(PassContext &context) : rewriter_(context), context_(context) {
    rewriter_.setCurrentPattern("inline-constant-if");
  }

  void visit(Graph &g) {
    for (Node *n = g.firstNode(); n;) {
      Node *next = n->next();
      if (hasSubgraphs(*n))
        for (Graph *sg : n->subgraphs())
          visit(*sg);
      if (n->is("If"))
        tryInline(n);
      n = next;
    }
  }

  bool changed() const { return rewriter_.changeCount() != 0; }

private:
  void tryInline(Node *ifNode) {
    std::optional<bool> cond = constantCondition(ifNode->operand(0));
    if (!cond) {
      rewriter_.notifyMatchFailure(ifNode, "the condition is not a one-element constant");
      return;
    }
    const Attribute *a = ifNode->attr(*cond ? "then_branch" : "else_branch");
    if (!a || !a->g) {
      rewriter_.notifyMatchFailure(ifNode, "the taken branch is missing");
      return;
    }
    Graph &branch = *a->g;
    if (!branch.inputs().empty() || !branch.sparseInitializers().empty() ||
        branch.numOutputs() != ifNode->numResults()) {
      rewriter_.notifyMatchFailure(ifNode, "the taken branch has inputs, sparse initializers or a result count mismatch");
      return;
    }
    for (size_t i = 0; i < ifNode->numResults(); ++i)
      if (ifNode->result(i) && ifNode->result(i)->hasUses() && !branch.output(i)) {
        rewriter_.notifyMatchFailure(ifNode, "a used result has no branch output");
        return;
      }
    if (!ifNode->graph()->model()) {
      rewriter_.notifyMatchFailure(ifNode, "the graph belongs to no model (no name table)");
      return;
    }
    // Exact by construction: the taken branch computes what the If returned.
    if (!context_.beginRewrite("inline-if", *ifNode, /*exact=*/true))
      return;
    inline_(ifNode, branch);
    ++context_.counter("inlined-ifs", "Ifs with a constant condition replaced by their taken branch");
  }

  void inline_(Node *ifNode, Graph &branch) {
    Graph &parent = *ifNode->graph();
    ValueMap map;
    mapCaptures(branch, map);
    for (Value *init : branch.initializers())
      map[init] = materializeConstant(rewriter_, parent, ifNode, init->name(), init->initializer());
    NameTable &names = parent.model()->names();
    for (Node *n : branch.nodes()) {
      std::vector<Value *> operands;
      for (Value *v : n->operands())
        operands.push_back(v ? map.at(v) : nullptr);
      std::vector<std::string> bases;
      for (Value *r : n->results())
        bases.push_back(r ? r->name() : std::string());
      Node *c = rewriter_.createNodeBefore(ifNode, n->opType(), operands, bases, n->domain());
      if (!n->name().empty())
        c->setName(names.fresh(n->name()));
      c->docString = n->docString;
      c->overload = n->overload;
      c->metadataProps = n->metadataProps;
      c->deviceConfigurations = n->deviceConfigurations;
      c->explicitFields = n->explicitFields;
      for (size_t i = 0; i < n->numResults(); ++i)
        if (Value *r = n->result(i)) {
          c->result(i)->setType(r->type());
          map[r] = c->result(i);
        }
      for (const Attribute &attr : n->attributes()) {
        Attribute copy;
        cloneAttribute(attr, copy, map); // the verified IR has every captured value in `map`
        c->setAttr(std::move(copy));
      }
    }
    std::vector<std::pair<Value *, std::string>> renames;
    for (size_t i = 0; i < ifNode->numResults(); ++i) {
      Value *r = ifNode->result(i);
      if (!r)
        continue;
      Value *src = branch.output(i);
      Value *m = src ? (map.count(src) ? map.at(src) : src) : nullptr;
      if (!m)
        continue; // a branch output with no value: the If result must be unused
      if (r->isGraphOutput()) {
        Node *id = rewriter_.createNodeBefore(ifNode, "Identity", {m}, {r->name()});
        id->result(0)->setType(r->type());
        renames.emplace_back(id->result(0), r->name());
        m = id->result(0);
      }
      rewriter_.replaceAllUsesWith(r, m);
    }
    rewriter_.notifyRewrite(ifNode, "inlined the taken branch");
    rewriter_.eraseNode(ifNode);
    for (auto &[v, name] : renames)
      rewriter_.renameValue(v, name);
  }

  /// Maps every value the branch (or a graph nested in it) reads from an
  /// enclosing scope to itself, so that deep copies of nested bodies resolve.
  void mapCaptures(const Graph &branch, ValueMap &map) {
    std::unordered_set<const Graph *> inside;
    std::vector<const Graph *> stack{&branch};
    while (!stack.empty()) {
      const Graph *g = stack.back();
      stack.pop_back();
      inside.insert(g);
      for (const Node *n : g->nodes())
        if (hasSubgraphs(*n))
          for (const Graph *sg : n->subgraphs())
            stack.push_back(sg);
    }
    auto note = [&](Value *v) {
      if (v && !inside.count(v->graph()))
        map.emplace(v, v);
    };
    for (const Graph *g : inside) {
      for (const Node *n : g->nodes())
        for (Value *v : n->operands())
          note(v);
      for (Value *v : g->outputs())
        note(v);
    }
  }

  Rewriter rewriter_;
  PassContext &context_;
};

class InlineConstantIfPass : public Pass {
public:
  std::string_view name() const override { return "inline-constant-if"; }
  std::string_view description() const override {
    return "Replace an If whose condition is a constant by its taken branch, inlined";
  }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    IfInliner inliner(context);
    inliner.visit(*model.graph());
    return inliner.changed();
  }
};

} // namespace

std::unique_ptr<Pass> createInlineConstantIfPass() { return std::make_unique<InlineConstantIfPass>(); }

} // namespace onnxslim
