//===- transforms/fusion/FuseRMSNorm.cpp - Decomposed RMS norm into one op===//
//
// fuse-rmsnorm: the decomposed root-mean-square normalization that
// exporters write for Llama-like models becomes one RMSNormalization
// (opset 23).
//
//   Before:                                     After:
//     p = Pow(x, two)          # or Mul(x, x)     y = RMSNormalization <axis = r-k,
//     v = ReduceMean <axes = last k> (p)                epsilon = e> (x, gamma)
//     s = Sqrt(Add(v, e))
//     n = Div(x, s)            # or Mul(x, Reciprocal(s)), Mul(x, Div(1, s))
//     y = Mul(n, gamma)        # optional
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - the model's default-domain opset is >= 23 (the opset is never raised);
//   - x's rank is known; the ReduceMean reduces the last k axes (attribute
//     before opset 18, constant input from 18) with keepdims = 1;
//   - the exponent is a constant 2; e and gamma are constants; x's element
//     type is float, double, float16 or bfloat16 and is theirs; the
//     one-element exponent and epsilon have a rank <= x's;
//   - gamma broadcasts exactly to the normalized shape x.shape[axis:]; a
//     missing gamma needs known normalized dims (a scale of ones is made);
//   - every intermediate value is used only inside the pattern and is not a
//     graph output.
// A LayerNormalization decomposition is x - mean(x) normalized this way;
// fuse-layernorm runs first in the default pipeline and takes it whole.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/fusion/NormFusionUtils.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

class FuseRMSNormPattern : public Pattern {
public:
  /// Given the root op of the normalizing step: "Div" or "Mul".
  explicit FuseRMSNormPattern(std::string root) : Pattern(std::move(root), "fuse-rmsnorm") {}

  bool matchAndRewrite(Node *root, Rewriter &rewriter) const override {
    if (defaultOpset(*root) < 23)
      return rewriter.notifyMatchFailure(root, "opset < 23 has no RMSNormalization");
    std::optional<NormStep> step = matchNormStep(root);
    if (!step)
      return rewriter.notifyMatchFailure(root, "not x / Sqrt(..) or x * Reciprocal(Sqrt(..)) with the Sqrt used once");
    Value *x = step->numerator;
    const char *why = nullptr;
    std::optional<MeanSquarePlusEps> ms = matchMeanSquarePlusEps(
        step->sqrt->operand(0), x, "the mean is not ReduceMean(Pow(x, 2)) or ReduceMean(x * x) of the numerator", why);
    if (!ms)
      return rewriter.notifyMatchFailure(root, why);
    Node *square = ms->square, *mean = ms->mean, *addEps = ms->addEps;
    if (!hasSingleNodeUse(square->result(0)) || !hasSingleNodeUse(mean->result(0)) ||
        !hasSingleNodeUse(addEps->result(0)))
      return rewriter.notifyMatchFailure(root, "an intermediate value has other users or is a graph output");

    Shape xs;
    if (const char *reason = checkMeanSquareOperands(*ms, x, xs))
      return rewriter.notifyMatchFailure(root, reason);
    DataType dt = ms->eps->dtype();
    int64_t rank = static_cast<int64_t>(xs.size());
    std::optional<std::vector<int64_t>> axes = reduceMeanAxes(*mean, rank);
    if (!axes)
      return rewriter.notifyMatchFailure(root, "the ReduceMean axes are unknown or keepdims = 0");
    std::optional<int64_t> axis = firstOfLastAxes(*axes, rank);
    if (!axis)
      return rewriter.notifyMatchFailure(root, "the reduced axes are not the last ones");

    AffineTail tail = matchAffineTail(root, false);
    bool normKnown = true;
    std::vector<int64_t> normDims = normalizedDims(xs, *axis, normKnown);
    if (const char *reason = checkAffineOperand(tail.gamma, normDims, normKnown, rank, dt))
      return rewriter.notifyMatchFailure(root, reason);
    if (!tail.gamma && !normKnown)
      return rewriter.notifyMatchFailure(root, "no gamma and the normalized dims are not known (for a scale of ones)");

    // Rewrite.
    Graph &graph = *root->graph();
    Node *last = tail.last;
    Value *scale = scaleOrOnes(rewriter, graph, last, tail.gamma, normDims, dt, x->name() + "_rms_scale");
    Node *rms = rewriter.createNodeBefore(last, "RMSNormalization", {x, scale}, {last->result(0)->name() + "_rms"});
    rms->setAttr(Attribute::makeInt("axis", *axis));
    rms->setAttr(Attribute::makeFloat("epsilon", static_cast<float>(ms->epsilon)));
    rms->result(0)->setType(last->result(0)->type());
    std::vector<Node *> chain{square, mean, addEps, step->sqrt, step->recip, root, tail.mulGamma};
    std::erase(chain, last); // erased by replaceFusedNode
    replaceFusedNode(last, rms->result(0), rewriter, "RMSNormalization", true);
    eraseDeadChain(chain, rewriter);
    return true;
  }
};

class FuseRMSNormPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-rmsnorm"; }
  std::string_view description() const override {
    return "Replace a decomposed RMS normalization by RMSNormalization (opset >= 23)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<FuseRMSNormPattern>("Div");
    patterns.add<FuseRMSNormPattern>("Mul");
  }
};

} // namespace

std::unique_ptr<Pass> createFuseRMSNormPass() { return std::make_unique<FuseRMSNormPass>(); }

} // namespace onnxslim
