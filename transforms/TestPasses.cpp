//===- transforms/TestPasses.cpp - Deliberately wrong passes for tests ----===//
//
// Passes that exist to show the safety nets at work; registered only by
// registerTestPasses() (tests, and the command line's hidden
// --enable-test-passes), never in the default registry.
//
//   test-negate-first-output   computes the negation of the first graph
//                              output (a float tensor) under its old name:
//                              structurally valid, numerically wrong, so
//                              --model-check-each must roll it back.
//   test-break-ir              inserts, at the top of the main graph, an
//                              Identity reading the last node's result: the
//                              topological order breaks and --verify-each
//                              must stop with this pass's name.
//   test-invalid-attribute     gives the first default-domain node an
//                              attribute its op does not have: valid IR,
//                              invalid ONNX, so the output validation must
//                              refuse to write it (--verify-each names it).
//   test-miscompile-add        a pattern that turns Add into Sub where the
//                              node's name contains "miscompile" and
//                              removes Identity elsewhere (correctly): the
//                              final model check must find that single
//                              rewrite, name it and undo it alone.
//
//===----------------------------------------------------------------------===//
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/PassRegistry.h"
#include "transforms/Passes.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

class NegateFirstOutputPass : public Pass {
public:
  std::string_view name() const override { return "test-negate-first-output"; }
  std::string_view description() const override {
    return "(test) Negate the first graph output: a wrong pass for --model-check-each";
  }
  bool run(Model &model, PassContext &context) override {
    Graph *g = model.graph();
    if (!g || g->numOutputs() == 0)
      return false;
    Value *out = g->output(0);
    Node *producer = out->definingNode();
    std::optional<DataType> dt = knownElemType(out);
    if (!dt && g->outputSlot(0).type && g->outputSlot(0).type->isTensor())
      dt = g->outputSlot(0).type->elemType();
    if (!producer || !dt || !isFloatingPoint(*dt))
      return false;
    Rewriter rewriter(context);
    std::string name = out->name();
    Node *neg = rewriter.createNodeAfter(producer, "Neg", {out}, {name + "_negated"});
    neg->result(0)->setType(out->type());
    rewriter.replaceUsesWithIf(out, neg->result(0), [](const Use &u) { return u.isGraphOutput(); });
    rewriter.renameValue(out, rewriter.freshName(*g, name + "_before_negation"));
    rewriter.renameValue(neg->result(0), name);
    ++context.counter("negated");
    return true;
  }
};

class BreakIRPass : public Pass {
public:
  std::string_view name() const override { return "test-break-ir"; }
  std::string_view description() const override {
    return "(test) Break the topological order: a wrong pass for --verify-each";
  }
  bool run(Model &model, PassContext &context) override {
    Graph *g = model.graph();
    if (!g || !g->lastNode() || g->lastNode()->numResults() == 0 || !g->lastNode()->result(0))
      return false;
    Rewriter rewriter(context);
    rewriter.createNodeBefore(g->firstNode(), "Identity", {g->lastNode()->result(0)}, {"broken"});
    return true;
  }
};

class InvalidAttributePass : public Pass {
public:
  std::string_view name() const override { return "test-invalid-attribute"; }
  std::string_view description() const override {
    return "(test) Add an attribute the op does not have: a wrong pass for output validation";
  }
  bool run(Model &model, PassContext &) override {
    Graph *g = model.graph();
    for (Node *n : g ? g->nodes() : NodeRange{nullptr})
      if (n->isDefaultDomain() && !n->hasAttr("onnxslim_test_attr")) {
        n->setAttr(Attribute::makeInt("onnxslim_test_attr", 1));
        return true;
      }
    return false;
  }
};

/// Add (named "...miscompile...") -> Sub: wrong on purpose.
class MiscompileAdd : public Pattern {
public:
  MiscompileAdd() : Pattern("Add", "test-miscompile-add") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (node->name().find("miscompile") == std::string::npos)
      return rewriter.notifyMatchFailure(node, "not named for it");
    rewriter.modifyNodeInPlace(node, [&] { node->setOpType("Sub"); });
    return true;
  }
};

/// Identity -> its input (a correct rewrite, so that the run has work to keep).
class DropIdentity : public Pattern {
public:
  DropIdentity() : Pattern("Identity", "test-drop-identity") {}
  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    return replaceNodeWithValue(node, node->operand(0), rewriter, "test-drop-identity");
  }
};

class MiscompileAddPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "test-miscompile-add"; }
  std::string_view description() const override {
    return "(test) Turn Adds named *miscompile* into Sub: a wrong rewrite for the model check to find and undo";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<MiscompileAdd>();
    patterns.add<DropIdentity>();
  }
};

} // namespace

void registerTestPasses(PassRegistry &registry) {
  registry.add<NegateFirstOutputPass>(/*testOnly=*/true);
  registry.add<BreakIRPass>(/*testOnly=*/true);
  registry.add<InvalidAttributePass>(/*testOnly=*/true);
  registry.add<MiscompileAddPass>(/*testOnly=*/true);
}

} // namespace onnxslim
