//===- transforms/cleanup/SimplifyBatchedMatMul.cpp - MatMul on 4-D views -===//
//
// simplify-batched-matmul: a MatMul over the 3-D [B*H, M, K] views of 4-D
// tensors whose result is viewed back as [B, H, M, N] becomes the MatMul of
// the 4-D tensors themselves. Exporters of DeBERTa-v2 and older BERT-style
// models flatten the heads into the batch around each attention MatMul;
// without the views the attention has its standard 4-D form (and
// fuse-attention can see it).
//
//   Before:                                   After:
//     a = Reshape(a4, [-1, M, K])               y = MatMul(a4, b4)
//     b = Reshape(b4, [-1, K, N])
//     c = MatMul(a, b)
//     y = Reshape(c, [-1, H, M, N])
//
//     # a side may also go through Transpose <perm = [0, 2, 1]> and
//     # Mul/Div by a one-element constant, in any order:
//     kt = Transpose <perm = [0, 2, 1]>         kt = Transpose <perm = [0, 1, 3, 2]> (k4)
//            (Reshape(k4, [-1, N, K]))          ks = Div(kt, c)
//     ks = Div(kt, c)                           y = MatMul(q4, ks)
//     y = Reshape(MatMul(q, ks), [-1, H, M, N])
//
// Why it is exact: a Reshape keeps the row-major order, so [B*H, M, K] is
// [B, H, M, K] with its first two dims merged, and a batched MatMul pairs
// the matrices of equal batch index; a scale by one element and the swap of
// the two last dims act on each matrix alone.
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - each operand view is a Reshape of a 4-D tensor [B, H, X, Y] to a 3-D
//     [_, X, Y] (its two last dims proven the same: ValueUtils' sameDim),
//     so its first dim is B * H; both operands have the same B and the
//     same H (proven), so no broadcast is involved;
//   - the result view is a Reshape of the 3-D result [_, M, N] to a 4-D
//     [B', H, M, N] with that same H (proven) and B' proven to be B or H a
//     known positive number (then B' = B * H / H);
//   - a scale is a Mul (either side) or Div (divisor) by a one-element
//     constant of rank <= 3; every intermediate is used only in the chain
//     and is not a graph output (so no node is left computing it twice).
//
//===----------------------------------------------------------------------===//
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"
#include "transforms/fusion/FusionUtils.h"

namespace onnxslim {

namespace {

/// One step between the 3-D view and the MatMul operand.
struct ViewStep {
  Node *node = nullptr;   ///< Transpose [0, 2, 1], or Mul/Div by a constant.
  size_t dataSide = 0;    ///< Which operand of a Mul/Div is the data.
};

/// The 4-D source of one MatMul operand, and the steps that follow its view.
struct OperandView {
  Value *source = nullptr; ///< [B, H, X, Y]
  Node *reshape = nullptr; ///< the 4-D -> 3-D Reshape
  std::vector<ViewStep> steps; ///< from the Reshape towards the MatMul
};

/// Whether `c` is a one-element constant that broadcasts against a 3-D (and
/// so against a 4-D) tensor without raising its rank.
bool isScaleConstant(const Value *c) {
  TensorPtr t = constantTensor(c);
  return t && t->numElements() == 1 && t->rank() <= 3;
}

/// Given a MatMul operand, Result: its 4-D source through scales,
/// Transposes [0, 2, 1] and a merging Reshape, each used once; or a reason.
const char *matchOperandView(Value *operand, OperandView &view) {
  Value *v = operand;
  std::vector<ViewStep> reversed;
  for (int guard = 0; guard < 8; ++guard) {
    Node *n = v ? v->definingNode() : nullptr;
    if (!n || !hasSingleNodeUse(v))
      return "an operand is not used only by the MatMul chain";
    if (n->is("Transpose") && n->numOperands() == 1 && n->operand(0) && n->attrInts("perm") == std::vector<int64_t>{0, 2, 1}) {
      reversed.push_back({n, 0});
      v = n->operand(0);
      continue;
    }
    if ((n->is("Mul") || n->is("Div")) && n->numOperands() == 2 && n->operand(0) && n->operand(1)) {
      size_t side = isScaleConstant(n->operand(1)) ? 0 : (n->is("Mul") && isScaleConstant(n->operand(0)) ? 1 : 2);
      if (side == 2)
        return "a Mul/Div on an operand is not a scale by a one-element constant";
      reversed.push_back({n, side});
      v = n->operand(side);
      continue;
    }
    if (!n->is("Reshape") || n->numOperands() < 1 || !n->operand(0))
      return "an operand is not a Reshape view (through scales and Transposes [0, 2, 1])";
    std::optional<Shape> in = knownShape(n->operand(0)), out = knownShape(v);
    if (!in || !out || in->size() != 4 || out->size() != 3)
      return "an operand view is not a Reshape from 4-D to 3-D";
    if (!sameDim(n->operand(0), 2, v, 1) || !sameDim(n->operand(0), 3, v, 2))
      return "an operand view does not keep the two last dims (it is not [B, H, X, Y] -> [B * H, X, Y])";
    view.source = n->operand(0);
    view.reshape = n;
    view.steps.assign(reversed.rbegin(), reversed.rend());
    return nullptr;
  }
  return "an operand goes through too many steps";
}

class UnflattenBatchedMatMul : public Pattern {
public:
  UnflattenBatchedMatMul() : Pattern("MatMul", "simplify-batched-matmul") {}

  bool matchAndRewrite(Node *mm, Rewriter &rewriter) const override {
    if (mm->numOperands() != 2 || !mm->operand(0) || !mm->operand(1) || !mm->result(0))
      return rewriter.notifyMatchFailure(mm, "malformed MatMul");
    std::optional<Shape> cs = knownShape(mm->result(0));
    if (!cs || cs->size() != 3)
      return rewriter.notifyMatchFailure(mm, "the result is not known to be 3-D");
    Node *u = singleUser(mm->result(0));
    if (!u || !u->is("Reshape") || u->operand(0) != mm->result(0) || !u->result(0))
      return rewriter.notifyMatchFailure(mm, "the result is not used only by a Reshape");
    std::optional<Shape> us = knownShape(u->result(0));
    if (!us || us->size() != 4)
      return rewriter.notifyMatchFailure(mm, "the result view is not known to be 4-D");
    OperandView a, b;
    if (const char *reason = matchOperandView(mm->operand(0), a))
      return rewriter.notifyMatchFailure(mm, reason);
    if (const char *reason = matchOperandView(mm->operand(1), b))
      return rewriter.notifyMatchFailure(mm, reason);
    if (!sameDim(a.source, 0, b.source, 0) || !sameDim(a.source, 1, b.source, 1))
      return rewriter.notifyMatchFailure(mm, "the operands' [B, H] are not proven the same");
    Value *y = u->result(0);
    std::optional<Shape> as = knownShape(a.source);
    bool headsPositive = (*as)[1].isValue() && (*as)[1].getValue() > 0;
    if (!sameDim(y, 1, a.source, 1) || !sameDim(y, 2, mm->result(0), 1) || !sameDim(y, 3, mm->result(0), 2) ||
        !(headsPositive || sameDim(y, 0, a.source, 0)))
      return rewriter.notifyMatchFailure(mm, "the result view is not [B, H, M, N] of the operands' B and H");
    std::optional<DataType> dt = knownElemType(mm->result(0));
    if (!dt)
      return rewriter.notifyMatchFailure(mm, "the element type is unknown");

    // Replay each side's steps on the 4-D source.
    auto replay = [&](OperandView &view) {
      Value *v = view.source;
      Shape shape = *knownShape(v);
      for (const ViewStep &step : view.steps) {
        Node *n;
        if (step.node->is("Transpose")) {
          n = rewriter.createNodeBefore(mm, "Transpose", {v}, {step.node->result(0)->name() + "_4d"});
          n->setAttr(Attribute::makeInts("perm", {0, 1, 3, 2}));
          std::swap(shape[2], shape[3]);
        } else {
          std::vector<Value *> ops{step.node->operand(0), step.node->operand(1)};
          ops[step.dataSide] = v;
          n = rewriter.createNodeBefore(mm, std::string(step.node->opType()), ops, {step.node->result(0)->name() + "_4d"});
        }
        n->result(0)->setType(Type::tensor(*dt, shape));
        v = n->result(0);
      }
      return v;
    };
    Value *lhs = replay(a), *rhs = replay(b);
    Node *mm4 = rewriter.createNodeBefore(mm, "MatMul", {lhs, rhs}, {y->name() + "_matmul"});
    mm4->result(0)->setType(y->type());
    replaceFusedNode(u, mm4->result(0), rewriter, "MatMul of the 4-D operands", true);
    std::vector<Node *> chain{mm, a.reshape, b.reshape};
    for (const OperandView *view : {&a, &b})
      for (const ViewStep &step : view->steps)
        chain.push_back(step.node);
    eraseDeadChain(chain, rewriter);
    return true;
  }
};

class SimplifyBatchedMatMulPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "simplify-batched-matmul"; }
  std::string_view description() const override {
    return "MatMul of [B*H, M, K] views of 4-D tensors, viewed back as [B, H, M, N]: MatMul of the 4-D tensors";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<UnflattenBatchedMatMul>(); }
};

} // namespace

std::unique_ptr<Pass> createSimplifyBatchedMatMulPass() { return std::make_unique<SimplifyBatchedMatMulPass>(); }

} // namespace onnxslim
