//===- transforms/FuseLayerNorm.cpp - Decomposed LayerNorm into one op ----===//
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
//     n = Div(d, s)
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
#include "transforms/FoldUtils.h"
#include "transforms/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <algorithm>

namespace onnxslim {

namespace {

/// The sorted, normalized axes a ReduceMean with keepdims = 1 reduces over
/// an input of rank `rank`; nullopt when they are not known.
std::optional<std::vector<int64_t>> meanAxes(const Node &mean, int64_t rank) {
  if (mean.attrInt("keepdims", 1) != 1)
    return std::nullopt;
  std::optional<std::vector<int64_t>> axes;
  if (defaultOpset(mean) < 18) {
    axes = mean.attrInts("axes");
  } else if (mean.numOperands() >= 2 && mean.operand(1)) {
    axes = constantInts(mean.operand(1));
  } else {
    if (mean.attrInt("noop_with_empty_axes", 0) != 0)
      return std::nullopt;
    axes.emplace();
  }
  if (!axes)
    return std::nullopt;
  if (axes->empty())
    for (int64_t i = 0; i < rank; ++i)
      axes->push_back(i);
  for (int64_t &a : *axes) {
    if (a < 0)
      a += rank;
    if (a < 0 || a >= rank)
      return std::nullopt;
  }
  std::sort(axes->begin(), axes->end());
  return axes;
}

/// The operand of binary `node` that is not `known` (null if neither is).
Value *otherOperand(const Node &node, const Value *known) {
  if (node.numOperands() != 2)
    return nullptr;
  if (node.operand(0) == known)
    return node.operand(1);
  if (node.operand(1) == known)
    return node.operand(0);
  return nullptr;
}

/// Whether a single-element constant equals `number`.
bool isConstantNumber(const Value *v, double number) {
  TensorPtr t = constantTensor(v);
  if (!t || t->numElements() != 1)
    return false;
  if (std::optional<std::vector<double>> d = toDoubles(*t))
    return (*d)[0] == number;
  std::optional<std::vector<int64_t>> i = constantInts(v);
  return i && static_cast<double>((*i)[0]) == number;
}

class FuseLayerNormPattern : public Pattern {
public:
  FuseLayerNormPattern() : Pattern("Div", "fuse-layernorm") {}

  bool matchAndRewrite(Node *div, Rewriter &rewriter) const override {
    if (defaultOpset(*div) < 17)
      return rewriter.notifyMatchFailure(div, "opset < 17 has no LayerNormalization");
    if (div->numOperands() != 2 || !div->operand(0) || !div->operand(1) || !div->result(0))
      return rewriter.notifyMatchFailure(div, "not two inputs and one result");
    Node *sub = producerOp(div->operand(0), "Sub");
    Node *sqrt = producerOp(div->operand(1), "Sqrt");
    if (!sub || !sqrt || sub->numOperands() != 2 || sqrt->numOperands() != 1)
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
    std::optional<std::vector<int64_t>> axes1 = meanAxes(*mean1, rank), axes2 = meanAxes(*mean2, rank);
    if (!axes1 || !axes2 || *axes1 != *axes2)
      return rewriter.notifyMatchFailure(div, "the ReduceMean axes are unknown, differ, or keepdims = 0");
    int64_t axis = rank - static_cast<int64_t>(axes1->size());
    for (size_t i = 0; i < axes1->size(); ++i)
      if ((*axes1)[i] != axis + static_cast<int64_t>(i))
        return rewriter.notifyMatchFailure(div, "the reduced axes are not the last ones");

    // The optional affine tail.
    Node *last = div;
    Node *mulGamma = nullptr;
    Value *gamma = nullptr, *beta = nullptr;
    if (Node *u = singleUser(div->result(0)); u && u->is("Mul")) {
      Value *g = otherOperand(*u, div->result(0));
      if (g && constantTensor(g)) {
        mulGamma = u, gamma = g, last = u;
        if (Node *a = singleUser(u->result(0)); a && a->is("Add")) {
          Value *b = otherOperand(*a, u->result(0));
          if (b && constantTensor(b))
            beta = b, last = a;
        }
      }
    }
    std::vector<int64_t> normDims;
    bool normKnown = true;
    for (int64_t i = axis; i < rank; ++i) {
      const Dim &dim = (*xs)[static_cast<size_t>(i)];
      normKnown = normKnown && dim.isValue();
      normDims.push_back(dim.isValue() ? dim.getValue() : -1);
    }
    const char *reason = nullptr;
    Value *scale = affineOperand(gamma, normDims, normKnown, rank, *dt, reason);
    if (reason)
      return rewriter.notifyMatchFailure(div, reason);
    Value *bias = affineOperand(beta, normDims, normKnown, rank, *dt, reason);
    if (reason)
      return rewriter.notifyMatchFailure(div, reason);
    if (!gamma && !normKnown)
      return rewriter.notifyMatchFailure(div, "no gamma and the normalized dims are not known (for a Scale of ones)");

    // Rewrite.
    Graph &graph = *div->graph();
    if (!scale) {
      int64_t n = 1;
      for (int64_t v : normDims)
        n *= v;
      scale = materializeConstant(rewriter, graph, last, x->name() + "_ln_scale",
                                      fromDoubles(*dt, normDims, std::vector<double>(static_cast<size_t>(n), 1.0)));
    } else if (scale == gamma && constantTensor(gamma)->dims() != normDims) {
      scale = reshaped(graph, last, gamma, normDims, rewriter);
    }
    if (bias && constantTensor(beta)->dims() != normDims)
      bias = reshaped(graph, last, beta, normDims, rewriter);
    std::vector<Value *> operands{x, scale};
    if (bias)
      operands.push_back(bias);
    Node *ln = rewriter.createNodeBefore(last, "LayerNormalization", operands, {last->result(0)->name() + "_ln"});
    ln->setAttr(Attribute::makeInt("axis", axis));
    ln->setAttr(Attribute::makeFloat("epsilon", static_cast<float>((*epsValue)[0])));
    ln->result(0)->setType(last->result(0)->type());
    replaceFusedNode(last, ln->result(0), rewriter, "LayerNormalization", true);
    std::vector<Node *> chain{mean1, sub, square, mean2, addEps, sqrt, div, mulGamma};
    chain.resize(last == div ? 6 : last == mulGamma ? 7 : 8);
    eraseDeadChain(chain, rewriter);
    return true;
  }

private:
  /// Checks a gamma/beta constant against the normalized dims; Result: the
  /// value itself (reshaped later when its dims differ), or null when absent.
  static Value *affineOperand(Value *v, const std::vector<int64_t> &normDims, bool normKnown, int64_t rank,
                              DataType dt, const char *&reason) {
    if (!v)
      return nullptr;
    TensorPtr t = constantTensor(v);
    if (t->dtype() != dt) {
      reason = "gamma/beta's dtype is not x's";
      return nullptr;
    }
    std::vector<int64_t> td = t->dims();
    if (td == normDims)
      return v;
    // Dims after dropping leading 1s must be the normalized dims (without
    // their leading 1s), and the constant's rank must not exceed x's.
    auto strip = [](std::vector<int64_t> dims) {
      size_t i = 0;
      while (i < dims.size() && dims[i] == 1)
        ++i;
      return std::vector<int64_t>(dims.begin() + static_cast<std::ptrdiff_t>(i), dims.end());
    };
    if (!normKnown || strip(td) != strip(normDims) || td.size() > static_cast<size_t>(rank)) {
      reason = "gamma/beta do not match the normalized shape exactly";
      return nullptr;
    }
    return v;
  }

  /// A new initializer holding `v`'s data with dims `dims` (same element count).
  static Value *reshaped(Graph &graph, Node *before, Value *v, const std::vector<int64_t> &dims, Rewriter &rewriter) {
    TensorPtr t = constantTensor(v);
    auto copy = std::make_shared<Tensor>(t->dtype(), dims, t->buffer());
    return materializeConstant(rewriter, graph, before, v->name() + "_reshaped", copy);
  }
};

class FuseLayerNormPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-layernorm"; }
  std::string_view description() const override {
    return "Replace a decomposed layer normalization by LayerNormalization (opset >= 17)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<FuseLayerNormPattern>(); }
};

} // namespace

std::unique_ptr<Pass> createFuseLayerNormPass() { return std::make_unique<FuseLayerNormPass>(); }

} // namespace onnxslim
