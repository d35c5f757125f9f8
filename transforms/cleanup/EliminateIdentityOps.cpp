//===- transforms/cleanup/EliminateIdentityOps.cpp - Remove Identity nodes===//
//
// eliminate-identity-ops: users of an Identity read its input instead.
//
//   Before:                          After:
//     a = Relu(x)                      a = Relu(x)
//     b = Identity(a)                  y = Neg(a)
//     c = Identity(b)
//     y = Neg(c)
//
// When the Identity's result is a graph output, the output keeps its name
// (graph output names are the model's interface): the producer's result is
// renamed to it.
//
//   Before:  a = Relu(x); y = Identity(a); return y
//   After:   y = Relu(x); return y
//
// The producer's result is not renamed (the Identity stays, and only its
// node users are moved to its input) when that input
//   - is a graph input or an initializer,
//   - is defined in an enclosing graph (a subgraph returning an outer value),
//   - is itself a graph output (it would lose its own name),
//   - is named by a quantization annotation, or
//   - is used inside a subgraph that defines a value with the output's name
//     (the new name would be shadowed there).
//
//===----------------------------------------------------------------------===//
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"

#include <unordered_set>

namespace onnxslim {

namespace {

/// Whether `g` itself (not its subgraphs) defines a value named `name`.
bool definesName(const Graph &g, const std::string &name) {
  for (const Value *v : g.inputs())
    if (v->name() == name)
      return true;
  for (const Value *v : g.initializers())
    if (v->name() == name)
      return true;
  for (const Node *n : g.nodes())
    for (const Value *r : n->results())
      if (r && r->name() == name)
        return true;
  return false;
}

/// Whether some graph strictly between a use of `v` and `home` defines `name`.
bool shadowedInSubgraphs(const Value *v, const Graph *home, const std::string &name) {
  std::unordered_set<const Graph *> checked;
  for (Use *u = v->uses().first; u; u = u->next()) {
    const Graph *g = u->isGraphOutput() ? u->ownerGraph() : u->owner()->graph();
    for (; g && g != home; g = g->parentGraph())
      if (checked.insert(g).second && definesName(*g, name))
        return true;
  }
  return false;
}

bool namedByAnnotation(const Graph &g, const std::string &name) {
  for (const TensorAnnotation &a : g.quantizationAnnotations)
    if (a.tensorName == name)
      return true;
  return false;
}

/// Why `input` cannot take the name of `output` (a graph output of `home`),
/// or null when it can.
const char *cannotRename(const Value *input, const Value *output, const Graph *home) {
  if (!input->definingNode())
    return "input is a graph input or initializer";
  if (input->graph() != home)
    return "input is defined in an enclosing graph";
  if (input->isGraphOutput())
    return "input is itself a graph output";
  if (namedByAnnotation(*home, input->name()))
    return "input is named by a quantization annotation";
  if (shadowedInSubgraphs(input, home, output->name()) || shadowedInSubgraphs(output, home, output->name()))
    return "a subgraph using the input defines a value with the output's name";
  return nullptr;
}

class EliminateIdentity : public Pattern {
public:
  /// Users read the value Identity returned: nothing computed changes.
  bool isExactByConstruction() const override { return true; }
  EliminateIdentity() : Pattern("Identity", "eliminate-identity") {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    Value *input = node->numOperands() == 1 ? node->operand(0) : nullptr;
    Value *output = node->numResults() == 1 ? node->result(0) : nullptr;
    if (!input || !output)
      return rewriter.notifyMatchFailure(node, "not one input and one result");
    if (!output->isGraphOutput()) {
      if (rewriter.debugEnabled())
        rewriter.notifyRewrite(node, "users now read '" + input->name() + "'");
      rewriter.replaceAllUsesWith(output, input);
      rewriter.eraseNode(node);
      return true;
    }
    Graph *home = node->graph();
    if (const char *reason = cannotRename(input, output, home)) {
      if (rewriter.replaceNodeUsesWith(output, input) == 0)
        return rewriter.notifyMatchFailure(node, std::string("feeds a graph output and ") + reason);
      if (rewriter.debugEnabled())
        rewriter.notifyRewrite(node, std::string("kept for the graph output (") + reason +
                                         "); its node users now read '" + input->name() + "'");
      return true;
    }
    std::string name = output->name();
    if (rewriter.debugEnabled())
      rewriter.notifyRewrite(node, "'" + input->name() + "' renamed to the graph output '" + name + "'");
    rewriter.replaceAllUsesWith(output, input);
    rewriter.eraseNode(node);
    rewriter.renameValue(input, name);
    // A graph output is declared by the output list, not by value_info.
    input->valueInfoOrder = Value::kNoValueInfo;
    return true;
  }
};

class EliminateIdentityOpsPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "eliminate-identity-ops"; }
  std::string_view description() const override {
    return "Make users of Identity read its input (keeping graph output names)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<EliminateIdentity>(); }
};

} // namespace

std::unique_ptr<Pass> createEliminateIdentityOpsPass() { return std::make_unique<EliminateIdentityOpsPass>(); }

} // namespace onnxslim
