//===- transforms/folding/SimplifyControlFlow.cpp - Ifs of constants, Loop duplicates ===//
//
// simplify-control-flow: control flow that computes nothing the data flow
// could not, as torch's scripted exports write it.
//
// An If whose branches only return constants (each an initializer or
// Constant of the branch, or an outer constant, through Identities) is a
// selection between them:
//
//   Before:                                   After:
//     y = If(c) <then_branch = () => (t) {      y = Where(c, two, three)
//                   t = Identity(two) },
//                 else_branch = () => (e) {
//                   e = Identity(three) }>
//
// (an output whose two constants are equal is that constant, and no Where
// is made for it).
//
// A Loop carrying two values that start as the same value and that the
// body updates the same way carries one of them twice:
//
//   Before:                                   After:
//     a, b = Loop(n, c, x, x) <body =           a = Loop(n, c, x) <body =
//       (i, cond, ai, bi) => (co, ao, bo) {       (i, cond, ai) => (co, ao) {
//         ao = Mul(ai, s)                           ao = Mul(ai, s) }>
//         bo = Mul(bi, s) }>                    y = Add(a, a)
//     y = Add(a, b)
//
// Why it is exact: by induction over the iterations, both carried values
// are equal on entry (the same initial value), and the body computes the
// second from its input by the same deterministic nodes as the first from
// its own, so they are equal on exit too.
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - If: the branches take no inputs and have the If's number of outputs;
//     a Where needs both constants of one element type and shape and a
//     condition of one element whose rank is at most theirs (so the Where
//     has their shape);
//   - Loop: the two initial values are the same value (CSE and
//     eliminate-duplicate-constants make equal ones so); the two body
//     outputs are the same value once the second body input reads as the
//     first, or results of nodes of the body with the same op, domain,
//     attributes (no subgraphs) and result number on such operands, none
//     non-deterministic (random ops, Dropout), compared to a depth of 64;
//     the dropped Loop result is not a graph output (its name is the
//     model's interface).
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <set>

namespace onnxslim {

namespace {

/// The constant a branch output is (through Identities): its tensor and
/// the value that holds it; {null, null} when it is not one.
std::pair<TensorPtr, Value *> branchConstant(Value *v) {
  for (int guard = 0; v && guard < 16; ++guard) {
    if (TensorPtr t = constantTensor(v))
      return {t, v};
    Node *n = v->definingNode();
    if (!n || !n->is("Identity") || n->numOperands() != 1)
      break;
    v = n->operand(0);
  }
  return {nullptr, nullptr};
}

/// Whether `v` is defined in `g` or in a graph enclosing it.
bool visibleIn(const Value *v, const Graph *g) {
  for (; g; g = g->parentNode() ? g->parentNode()->graph() : nullptr)
    if (v->graph() == g)
      return true;
  return false;
}

class SelectBranchConstants : public Pattern {
public:
  SelectBranchConstants() : Pattern("If", "simplify-control-flow") {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    const Attribute *ta = node->attr("then_branch"), *ea = node->attr("else_branch");
    if (node->numOperands() != 1 || !node->operand(0) || !ta || !ea || !ta->g || !ea->g)
      return rewriter.notifyMatchFailure(node, "malformed If");
    Graph &tg = *ta->g, &eg = *ea->g;
    size_t n = node->numResults();
    if (!tg.inputs().empty() || !eg.inputs().empty() || tg.numOutputs() != n || eg.numOutputs() != n)
      return rewriter.notifyMatchFailure(node, "a branch has inputs or another number of outputs");
    std::optional<Shape> cs = knownShape(node->operand(0));
    std::vector<std::pair<std::pair<TensorPtr, Value *>, std::pair<TensorPtr, Value *>>> consts;
    for (size_t k = 0; k < n; ++k) {
      auto tc = branchConstant(tg.output(k)), ec = branchConstant(eg.output(k));
      const TensorPtr &t = tc.first, &e = ec.first;
      if (!t || !e)
        return rewriter.notifyMatchFailure(node, "a branch output is not a constant");
      if (!sameTensorContent(t, e) && node->result(k)) {
        if (t->dtype() != e->dtype() || t->dims() != e->dims())
          return rewriter.notifyMatchFailure(node, "the branches' constants differ in element type or shape");
        if (!cs || cs->size() > t->dims().size())
          return rewriter.notifyMatchFailure(node, "the condition's rank is not known to be at most the constants'");
      }
      consts.emplace_back(tc, ec);
    }
    Graph &graph = *node->graph();
    // A result that is a graph output keeps its name through an Identity,
    // renamed once the If is gone.
    std::vector<std::pair<Value *, std::string>> kept;
    for (size_t k = 0; k < n; ++k) {
      Value *r = node->result(k);
      if (!r || !r->hasUses())
        continue;
      auto [tc, ec] = consts[k];
      const TensorPtr &t = tc.first, &e = ec.first;
      // An outer constant is read where it is; a branch's own is copied.
      auto place = [&](const std::pair<TensorPtr, Value *> &c, const char *suffix) {
        return visibleIn(c.second, &graph) ? c.second
                                           : materializeConstant(rewriter, graph, node, r->name() + suffix, c.first);
      };
      bool same = sameTensorContent(t, e);
      Value *replacement = same && !visibleIn(tc.second, &graph) && visibleIn(ec.second, &graph) ? ec.second
                                                                                                 : place(tc, "_then");
      if (!same) {
        Value *ev = place(ec, "_else");
        Node *w = rewriter.createNodeBefore(node, "Where", {node->operand(0), replacement, ev}, {r->name() + "_select"});
        Shape shape;
        for (int64_t d : t->dims())
          shape.push_back(Dim::value(d));
        w->result(0)->setType(Type::tensor(t->dtype(), shape));
        replacement = w->result(0);
      }
      if (r->isGraphOutput()) {
        Node *id = rewriter.createNodeBefore(node, "Identity", {replacement}, {r->name()});
        Value *out = id->result(0);
        out->setType(r->type());
        out->valueInfoOrder = r->valueInfoOrder;
        out->info = r->info;
        rewriter.replaceNodeUsesWith(r, replacement);
        rewriter.replaceAllUsesWith(r, out);
        kept.emplace_back(out, r->name());
      } else {
        rewriter.replaceAllUsesWith(r, replacement);
      }
    }
    rewriter.notifyRewrite(node, "branches of constants: a Where (or the constant)");
    rewriter.eraseNode(node);
    for (auto &[value, name] : kept)
      rewriter.renameValue(value, name);
    return true;
  }
};

bool nonDeterministic(const Node &n) {
  for (const char *op : {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
                         "Bernoulli", "Dropout"})
    if (n.is(op))
      return true;
  return false;
}

/// Whether `a` and `b` (values of one body) are equal whenever body input
/// `from` equals body input `to` (`from` reads as `to`).
class CarriedEquivalence {
public:
  CarriedEquivalence(const Value *from, const Value *to) : from_(from), to_(to) {}

  bool equal(const Value *a, const Value *b, int depth = 0) {
    a = a == from_ ? to_ : a;
    b = b == from_ ? to_ : b;
    if (a == b)
      return true;
    if (!a || !b || depth > 64 || ++steps_ > 4096)
      return false;
    if (proven_.count({a, b}))
      return true;
    const Node *na = a->definingNode(), *nb = b->definingNode();
    if (!na || !nb || na->graph() != nb->graph() || a->resultNumber() != b->resultNumber() ||
        na->opType() != nb->opType() || na->domain() != nb->domain() || na->numOperands() != nb->numOperands() ||
        na->numResults() != nb->numResults() || nonDeterministic(*na) || !na->subgraphs().empty() ||
        !nb->subgraphs().empty() || !sameAttributes(*na, *nb))
      return false;
    for (size_t i = 0; i < na->numOperands(); ++i)
      if (!equal(na->operand(i), nb->operand(i), depth + 1))
        return false;
    proven_.insert({a, b});
    return true;
  }

private:
  const Value *from_, *to_;
  std::set<std::pair<const Value *, const Value *>> proven_;
  size_t steps_ = 0;
};

class MergeLoopCarriedDuplicates : public Pattern {
public:
  MergeLoopCarriedDuplicates() : Pattern("Loop", "simplify-control-flow") {}

  bool matchAndRewrite(Node *loop, Rewriter &rewriter) const override {
    const Attribute *ba = loop->attr("body");
    if (!ba || !ba->g || loop->numOperands() < 2)
      return rewriter.notifyMatchFailure(loop, "malformed Loop");
    Graph &body = *ba->g;
    size_t carried = loop->numOperands() - 2;
    if (body.inputs().size() != carried + 2 || body.numOutputs() < carried + 1 || loop->numResults() < carried)
      return rewriter.notifyMatchFailure(loop, "the body does not match the Loop's carried values");
    for (size_t i = 0; i < carried; ++i)
      for (size_t j = i + 1; j < carried; ++j) {
        Value *init = loop->operand(2 + i);
        if (!init || loop->operand(2 + j) != init)
          continue;
        Value *in = body.input(2 + i), *jn = body.input(2 + j);
        CarriedEquivalence eq(jn, in);
        if (!eq.equal(body.output(1 + i), body.output(1 + j)))
          continue;
        Value *ri = loop->result(i), *rj = loop->result(j);
        if (rj && (rj->isGraphOutput() || (rj->hasUses() && !ri)))
          continue;
        rewriter.notifyRewrite(loop, "carried value " + std::to_string(j) + " is carried value " + std::to_string(i));
        rewriter.replaceAllUsesWith(jn, in);
        if (rj && rj->hasUses())
          rewriter.replaceAllUsesWith(rj, ri);
        rewriter.eraseGraphOutput(body, 1 + j);
        rewriter.eraseGraphInput(body, jn);
        rewriter.eraseOperand(loop, 2 + j);
        rewriter.eraseResult(loop, j);
        return true;
      }
    return rewriter.notifyMatchFailure(loop, "no two carried values are proven equal");
  }
};

class SimplifyControlFlowPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "simplify-control-flow"; }
  std::string_view description() const override {
    return "If whose branches return constants: Where; Loop values carried twice: once";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<SelectBranchConstants>();
    patterns.add<MergeLoopCarriedDuplicates>();
  }
};

} // namespace

std::unique_ptr<Pass> createSimplifyControlFlowPass() { return std::make_unique<SimplifyControlFlowPass>(); }

} // namespace onnxslim
