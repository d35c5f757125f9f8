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
//     n = Div(x, s)            # or Mul(x, Reciprocal(s))
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
#include "transforms/folding/FoldUtils.h"
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
    Node *addEps = producerOp(step->sqrt->operand(0), "Add");
    if (!addEps || addEps->numOperands() != 2)
      return rewriter.notifyMatchFailure(root, "the Sqrt input is not an Add");
    size_t varSide = producerOp(addEps->operand(0), "ReduceMean") ? 0 : 1;
    Node *mean = producerOp(addEps->operand(varSide), "ReduceMean");
    TensorPtr eps = constantTensor(addEps->operand(1 - varSide));
    std::optional<std::vector<double>> epsValue = eps ? toDoubles(*eps) : std::nullopt;
    if (!mean || !epsValue || epsValue->size() != 1)
      return rewriter.notifyMatchFailure(root, "the Sqrt input is not ReduceMean(..) + a constant epsilon");
    Node *square = mean->operand(0) ? mean->operand(0)->definingNode() : nullptr;
    bool isPow = square && square->is("Pow") && square->numOperands() == 2 && square->operand(0) == x &&
                 isConstantNumber(square->operand(1), 2.0);
    bool isMul = square && square->is("Mul") && square->numOperands() == 2 && square->operand(0) == x &&
                 square->operand(1) == x;
    if (!isPow && !isMul)
      return rewriter.notifyMatchFailure(root, "the mean is not ReduceMean(Pow(x, 2)) or ReduceMean(x * x) of the numerator");
    if (!hasSingleNodeUse(square->result(0)) || !hasSingleNodeUse(mean->result(0)) ||
        !hasSingleNodeUse(addEps->result(0)))
      return rewriter.notifyMatchFailure(root, "an intermediate value has other users or is a graph output");

    std::optional<Shape> xs = knownShape(x);
    std::optional<DataType> dt = knownElemType(x);
    if (!xs || xs->empty())
      return rewriter.notifyMatchFailure(root, "x's rank is unknown");
    if (!dt || !isFloatLike(*dt) || eps->dtype() != *dt)
      return rewriter.notifyMatchFailure(root, "x's element type is unknown, not floating, or not epsilon's");
    int64_t rank = static_cast<int64_t>(xs->size());
    if (eps->rank() > rank)
      return rewriter.notifyMatchFailure(root, "epsilon's rank exceeds x's (it would broadcast the result to a higher rank)");
    if (isPow) {
      TensorPtr two = constantTensor(square->operand(1));
      if (!two || two->rank() > rank)
        return rewriter.notifyMatchFailure(root, "the exponent's rank exceeds x's (it would broadcast the result to a higher rank)");
    }
    std::optional<std::vector<int64_t>> axes = reduceMeanAxes(*mean, rank);
    if (!axes)
      return rewriter.notifyMatchFailure(root, "the ReduceMean axes are unknown or keepdims = 0");
    int64_t axis = rank - static_cast<int64_t>(axes->size());
    for (size_t i = 0; i < axes->size(); ++i)
      if ((*axes)[i] != axis + static_cast<int64_t>(i))
        return rewriter.notifyMatchFailure(root, "the reduced axes are not the last ones");

    AffineTail tail = matchAffineTail(root, false);
    std::vector<int64_t> normDims;
    bool normKnown = true;
    for (int64_t i = axis; i < rank; ++i) {
      const Dim &dim = (*xs)[static_cast<size_t>(i)];
      normKnown = normKnown && dim.isValue();
      normDims.push_back(dim.isValue() ? dim.getValue() : -1);
    }
    if (const char *reason = checkAffineOperand(tail.gamma, normDims, normKnown, rank, *dt))
      return rewriter.notifyMatchFailure(root, reason);
    if (!tail.gamma && !normKnown)
      return rewriter.notifyMatchFailure(root, "no gamma and the normalized dims are not known (for a scale of ones)");

    // Rewrite.
    Graph &graph = *root->graph();
    Node *last = tail.last;
    Value *scale = nullptr;
    if (!tail.gamma) {
      int64_t n = 1;
      for (int64_t v : normDims)
        n *= v;
      scale = materializeConstant(rewriter, graph, last, x->name() + "_rms_scale",
                                  fromDoubles(*dt, normDims, std::vector<double>(static_cast<size_t>(n), 1.0)));
    } else {
      scale = asNormalizedShape(rewriter, graph, last, tail.gamma, normDims);
    }
    Node *rms = rewriter.createNodeBefore(last, "RMSNormalization", {x, scale}, {last->result(0)->name() + "_rms"});
    rms->setAttr(Attribute::makeInt("axis", axis));
    rms->setAttr(Attribute::makeFloat("epsilon", static_cast<float>((*epsValue)[0])));
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
