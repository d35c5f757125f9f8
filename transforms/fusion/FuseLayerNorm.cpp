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
    const char *why = nullptr;
    std::optional<MeanSquarePlusEps> var = matchMeanSquarePlusEps(
        sqrt->operand(0), sub->result(0), "the variance is not ReduceMean(Pow(d, 2)) or ReduceMean(d * d)", why);
    if (!var)
      return rewriter.notifyMatchFailure(div, why);
    Node *square = var->square, *mean2 = var->mean, *addEps = var->addEps;
    Value *d = sub->result(0);
    // Uses: every intermediate stays inside the pattern.
    if (!hasSingleNodeUse(mean1->result(0)) || !hasSingleNodeUse(square->result(0)) ||
        !hasSingleNodeUse(mean2->result(0)) || !hasSingleNodeUse(addEps->result(0)) ||
        !hasSingleNodeUse(sqrt->result(0)) || d->isGraphOutput() || d->useCount() != (var->isPow ? 2u : 3u))
      return rewriter.notifyMatchFailure(div, "an intermediate value has other users or is a graph output");

    Shape xs;
    if (const char *reason = checkMeanSquareOperands(*var, x, xs))
      return rewriter.notifyMatchFailure(div, reason);
    DataType dt = var->eps->dtype();
    int64_t rank = static_cast<int64_t>(xs.size());
    std::optional<std::vector<int64_t>> axes1 = reduceMeanAxes(*mean1, rank), axes2 = reduceMeanAxes(*mean2, rank);
    if (!axes1 || !axes2 || *axes1 != *axes2)
      return rewriter.notifyMatchFailure(div, "the ReduceMean axes are unknown, differ, or keepdims = 0");
    std::optional<int64_t> axis = firstOfLastAxes(*axes1, rank);
    if (!axis)
      return rewriter.notifyMatchFailure(div, "the reduced axes are not the last ones");

    // The optional affine tail.
    AffineTail tail = matchAffineTail(div, true);
    Node *last = tail.last;
    bool normKnown = true;
    std::vector<int64_t> normDims = normalizedDims(xs, *axis, normKnown);
    if (const char *reason = checkAffineOperand(tail.gamma, normDims, normKnown, rank, dt))
      return rewriter.notifyMatchFailure(div, reason);
    if (const char *reason = checkAffineOperand(tail.beta, normDims, normKnown, rank, dt))
      return rewriter.notifyMatchFailure(div, reason);
    if (!tail.gamma && !normKnown)
      return rewriter.notifyMatchFailure(div, "no gamma and the normalized dims are not known (for a Scale of ones)");

    // Rewrite.
    Graph &graph = *div->graph();
    Value *scale = scaleOrOnes(rewriter, graph, last, tail.gamma, normDims, dt, x->name() + "_ln_scale");
    std::vector<Value *> operands{x, scale};
    if (tail.beta)
      operands.push_back(asNormalizedShape(rewriter, graph, last, tail.beta, normDims));
    Node *ln = rewriter.createNodeBefore(last, "LayerNormalization", operands, {last->result(0)->name() + "_ln"});
    ln->setAttr(Attribute::makeInt("axis", *axis));
    ln->setAttr(Attribute::makeFloat("epsilon", static_cast<float>(var->epsilon)));
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
