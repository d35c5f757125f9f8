//===- transforms/fusion/FuseLayerNorm.cpp - Decomposed LayerNorm into one op===//
//
// fuse-layernorm: the decomposed layer normalization that exporters write
// becomes one LayerNormalization (opset 17).
//
//   Before:                                     After:
//     m = ReduceMean <axes=[-1]> (x)              y = LayerNormalization <axis = -1 as r-1,
//     d = Sub(x, m)                                     epsilon = e> (x, gamma, beta)
//     p = Pow(d, two)          # or Mul(d, d)
//     v = ReduceMean <axes=[-1]> (p)
//     s = Sqrt(Add(v, e))
//     n = Div(d, s)            # or Mul(d, Reciprocal(s))
//     y = Add(Mul(n, gamma), beta)   # both optional
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - the model's default-domain opset is >= 17 (the opset is never raised);
//   - x's rank is known; both ReduceMeans reduce the same axes (attribute
//     before opset 18, constant input from 18), which are the last k axes,
//     with keepdims = 1;
//   - the exponent is a constant 2; e, gamma and beta are constants; x's
//     element type is float, double, float16 or bfloat16 and is theirs;
//   - the one-element exponent and epsilon have a rank <= x's (a [1,1,1]
//     epsilon broadcasts a rank-2 x to rank 3; LayerNormalization keeps
//     x's rank);
//   - gamma/beta broadcast exactly to the normalized shape x.shape[axis:]
//     (equal dims after dropping leading 1s, rank <= x's), so the result's
//     shape is x's; a missing gamma needs known normalized dims (a Scale
//     of ones is made);
//   - every intermediate value is used only inside the pattern and is not a
//     graph output (d feeds exactly the square and the Div).
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/fusion/NormFusionUtils.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <algorithm>

namespace onnxslim {

namespace {

class FuseLayerNormPattern : public Pattern {
public:
  /// Given the root op of the normalizing step: "Div" (d / s) or "Mul"
  /// (d * Reciprocal(s)).
  explicit FuseLayerNormPattern(std::string root) : Pattern(std::move(root), "fuse-layernorm") {}

  bool matchAndRewrite(Node *div, Rewriter &rewriter) const override {
    if (defaultOpset(*div) < 17)
      return rewriter.notifyMatchFailure(div, "opset < 17 has no LayerNormalization");
    std::optional<NormStep> step = matchNormStep(div);
    if (!step)
      return rewriter.notifyMatchFailure(div, "not d / Sqrt(..) or d * Reciprocal(Sqrt(..)) with the Sqrt used once");
    Node *sub = producerOp(step->numerator, "Sub");
    Node *sqrt = step->sqrt;
    if (!sub || sub->numOperands() != 2)
      return rewriter.notifyMatchFailure(div, "not Div(Sub(..), Sqrt(..))");
    Node *mean1 = producerOp(sub->operand(1), "ReduceMean");
    Value *x = sub->operand(0);
    if (!mean1 || !x || mean1->operand(0) != x)
      return rewriter.notifyMatchFailure(div, "the Sub is not x - ReduceMean(x)");
    Node *addEps = producerOp(sqrt->operand(0), "Add");
    if (!addEps || addEps->numOperands() != 2)
      return rewriter.notifyMatchFailure(div, "the Sqrt input is not an Add");
    size_t varSide = producerOp(addEps->operand(0), "ReduceMean") ? 0 : 1;
    Node *mean2 = producerOp(addEps->operand(varSide), "ReduceMean");
    TensorPtr eps = constantTensor(addEps->operand(1 - varSide));
    std::optional<std::vector<double>> epsValue = eps ? toDoubles(*eps) : std::nullopt;
    if (!mean2 || !epsValue || epsValue->size() != 1)
      return rewriter.notifyMatchFailure(div, "the Sqrt input is not ReduceMean(..) + a constant epsilon");
    Node *square = mean2->operand(0) ? mean2->operand(0)->definingNode() : nullptr;
    Value *d = sub->result(0);
    bool isPow = square && square->is("Pow") && square->numOperands() == 2 && square->operand(0) == d &&
                 isConstantNumber(square->operand(1), 2.0);
    bool isMul = square && square->is("Mul") && square->numOperands() == 2 && square->operand(0) == d &&
                 square->operand(1) == d;
    if (!isPow && !isMul)
      return rewriter.notifyMatchFailure(div, "the variance is not ReduceMean(Pow(d, 2)) or ReduceMean(d * d)");
    // Uses: every intermediate stays inside the pattern.
    if (!hasSingleNodeUse(mean1->result(0)) || !hasSingleNodeUse(square->result(0)) ||
        !hasSingleNodeUse(mean2->result(0)) || !hasSingleNodeUse(addEps->result(0)) ||
        !hasSingleNodeUse(sqrt->result(0)) || d->isGraphOutput() || d->useCount() != (isPow ? 2u : 3u))
      return rewriter.notifyMatchFailure(div, "an intermediate value has other users or is a graph output");

    std::optional<Shape> xs = knownShape(x);
    std::optional<DataType> dt = knownElemType(x);
    if (!xs || xs->empty())
      return rewriter.notifyMatchFailure(div, "x's rank is unknown");
    if (!dt || !isFloatLike(*dt) || eps->dtype() != *dt)
      return rewriter.notifyMatchFailure(div, "x's element type is unknown, not floating, or not epsilon's");
    int64_t rank = static_cast<int64_t>(xs->size());
    if (eps->rank() > rank)
      return rewriter.notifyMatchFailure(div, "epsilon's rank exceeds x's (it would broadcast the result to a higher rank)");
    if (isPow) {
      TensorPtr two = constantTensor(square->operand(1));
      if (!two || two->rank() > rank)
        return rewriter.notifyMatchFailure(div, "the exponent's rank exceeds x's (it would broadcast the result to a higher rank)");
    }
    std::optional<std::vector<int64_t>> axes1 = reduceMeanAxes(*mean1, rank), axes2 = reduceMeanAxes(*mean2, rank);
    if (!axes1 || !axes2 || *axes1 != *axes2)
      return rewriter.notifyMatchFailure(div, "the ReduceMean axes are unknown, differ, or keepdims = 0");
    int64_t axis = rank - static_cast<int64_t>(axes1->size());
    for (size_t i = 0; i < axes1->size(); ++i)
      if ((*axes1)[i] != axis + static_cast<int64_t>(i))
        return rewriter.notifyMatchFailure(div, "the reduced axes are not the last ones");

    // The optional affine tail.
    AffineTail tail = matchAffineTail(div, true);
    Node *last = tail.last;
    std::vector<int64_t> normDims;
    bool normKnown = true;
    for (int64_t i = axis; i < rank; ++i) {
      const Dim &dim = (*xs)[static_cast<size_t>(i)];
      normKnown = normKnown && dim.isValue();
      normDims.push_back(dim.isValue() ? dim.getValue() : -1);
    }
    if (const char *reason = checkAffineOperand(tail.gamma, normDims, normKnown, rank, *dt))
      return rewriter.notifyMatchFailure(div, reason);
    if (const char *reason = checkAffineOperand(tail.beta, normDims, normKnown, rank, *dt))
      return rewriter.notifyMatchFailure(div, reason);
    if (!tail.gamma && !normKnown)
      return rewriter.notifyMatchFailure(div, "no gamma and the normalized dims are not known (for a Scale of ones)");

    // Rewrite.
    Graph &graph = *div->graph();
    Value *scale = nullptr;
    if (!tail.gamma) {
      int64_t n = 1;
      for (int64_t v : normDims)
        n *= v;
      scale = materializeConstant(rewriter, graph, last, x->name() + "_ln_scale",
                                  fromDoubles(*dt, normDims, std::vector<double>(static_cast<size_t>(n), 1.0)));
    } else {
      scale = asNormalizedShape(rewriter, graph, last, tail.gamma, normDims);
    }
    std::vector<Value *> operands{x, scale};
    if (tail.beta)
      operands.push_back(asNormalizedShape(rewriter, graph, last, tail.beta, normDims));
    Node *ln = rewriter.createNodeBefore(last, "LayerNormalization", operands, {last->result(0)->name() + "_ln"});
    ln->setAttr(Attribute::makeInt("axis", axis));
    ln->setAttr(Attribute::makeFloat("epsilon", static_cast<float>((*epsValue)[0])));
    ln->result(0)->setType(last->result(0)->type());
    std::vector<Node *> chain{mean1, sub, square, mean2, addEps, sqrt, step->recip, div, tail.mulGamma, tail.addBeta};
    std::erase(chain, last); // erased by replaceFusedNode
    replaceFusedNode(last, ln->result(0), rewriter, "LayerNormalization", true);
    eraseDeadChain(chain, rewriter);
    return true;
  }
};

class FuseLayerNormPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-layernorm"; }
  std::string_view description() const override {
    return "Replace a decomposed layer normalization by LayerNormalization (opset >= 17)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<FuseLayerNormPattern>("Div");
    patterns.add<FuseLayerNormPattern>("Mul"); }
};

} // namespace

std::unique_ptr<Pass> createFuseLayerNormPass() { return std::make_unique<FuseLayerNormPass>(); }

} // namespace onnxslim
