//===- transforms/fusion/FuseConvRelu.cpp - Conv + activation into FusedConv===//
//
// fuse-conv-relu (target onnxruntime only): a float Conv followed by an
// activation becomes ONNX Runtime's contrib op com.microsoft.FusedConv,
// whose CPU kernel applies the activation in the convolution's output loop.
//
//   Before:                                   After:
//     c = Conv <pads = [1,1,1,1]> (x, W, b)     y = com.microsoft.FusedConv <pads = [1,1,1,1],
//     y = Relu(c)                                     activation = "Relu"> (x, W, b)
//
// The FusedConv contract (ONNX Runtime contrib op, domain com.microsoft,
// version 1; its CPU kernel exists for float only): the Conv's inputs and
// attributes, plus `activation` (string) and `activation_params` (floats):
//   Relu, Sigmoid, Tanh    no params
//   LeakyRelu              [alpha]            (default 0.01)
//   Clip                   [min, max]         (attributes before opset 11,
//                                              constant inputs after; an
//                                              omitted bound is -/+FLT_MAX)
//   HardSigmoid            [alpha, beta]      (defaults 0.2, 0.5)
// The pass adds the com.microsoft opset import (version 1) when it rewrites.
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - the Conv's element type is known to be float;
//   - the Conv result is read only by the activation and is not a graph
//     output; Clip's bounds are constant scalars.
// Runs only with --target=onnxruntime (see requiredTarget() in Passes.h):
// standard ONNX consumers do not know FusedConv.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <limits>

namespace onnxslim {

namespace {

class FuseConvActivation : public Pattern {
public:
  explicit FuseConvActivation(std::string op) : Pattern(std::move(op), "fuse-conv-relu") {}

  bool matchAndRewrite(Node *act, Rewriter &rewriter) const override {
    if (act->numOperands() == 0 || !act->operand(0) || act->numResults() != 1 || !act->result(0))
      return rewriter.notifyMatchFailure(act, "no input or not one result");
    Node *conv = producerOp(act->operand(0), "Conv");
    if (!conv)
      return rewriter.notifyMatchFailure(act, "the input is not a Conv result");
    if (!hasSingleNodeUse(conv->result(0)))
      return rewriter.notifyMatchFailure(act, "the Conv result has other users or is a graph output");
    std::optional<DataType> dt = knownElemType(conv->result(0));
    if (!dt && conv->numOperands() > 1)
      dt = knownElemType(conv->operand(1));
    if (!dt && conv->numOperands() > 0)
      dt = knownElemType(conv->operand(0));
    if (dt != DataType::Float)
      return rewriter.notifyMatchFailure(act, "the Conv is not known to be float (FusedConv's only type)");
    std::vector<float> params;
    if (const char *reason = activationParams(*act, params))
      return rewriter.notifyMatchFailure(act, reason);
    Model *model = conv->graph()->model();
    if (!model || !ensureOpsetImport(*model, "com.microsoft", 1))
      return rewriter.notifyMatchFailure(act, "no model, or an older com.microsoft opset is imported");

    Node *fused = rewriter.createNodeBefore(act, "FusedConv", conv->operands(), {act->result(0)->name() + "_fused"},
                                            "com.microsoft");
    fused->setName(conv->name());
    for (const Attribute &a : conv->attributes()) {
      Attribute copy(a.name, a.kind);
      copy.i = a.i;
      copy.f = a.f;
      copy.s = a.s;
      copy.ints = a.ints;
      copy.floats = a.floats;
      copy.strings = a.strings;
      copy.hasKind = a.hasKind;
      copy.t = a.t;
      copy.refAttrName = a.refAttrName;
      copy.docString = a.docString;
      copy.explicitFields = a.explicitFields;
      fused->setAttr(std::move(copy));
    }
    fused->setAttr(Attribute::makeString("activation", act->opType()));
    if (!params.empty())
      fused->setAttr(Attribute::makeFloats("activation_params", params));
    fused->result(0)->setType(act->result(0)->type());
    replaceFusedNode(act, fused->result(0), rewriter, "FusedConv(" + act->opType() + ")", true);
    if (conv->resultsUnused())
      rewriter.eraseNode(conv);
    return true;
  }

private:
  /// The activation_params of `act`; null reason = ok.
  static const char *activationParams(const Node &act, std::vector<float> &params) {
    if (act.is("LeakyRelu")) {
      params = {act.attrFloat("alpha", 0.01f)};
    } else if (act.is("HardSigmoid")) {
      params = {act.attrFloat("alpha", 0.2f), act.attrFloat("beta", 0.5f)};
    } else if (act.is("Clip")) {
      float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
      if (defaultOpset(act) < 11) {
        lo = act.attrFloat("min", lo);
        hi = act.attrFloat("max", hi);
      } else {
        for (size_t i = 1; i < 3; ++i) {
          if (i >= act.numOperands() || !act.operand(i))
            continue;
          TensorPtr t = constantTensor(act.operand(i));
          if (!t || t->dtype() != DataType::Float || t->numElements() != 1)
            return "a Clip bound is not a constant float scalar";
          (i == 1 ? lo : hi) = t->at<float>(0);
        }
      }
      params = {lo, hi};
    }
    return nullptr;
  }
};

class FuseConvReluPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-conv-relu"; }
  std::string_view description() const override {
    return "[onnxruntime] Fuse Conv + Relu/Clip/LeakyRelu/Sigmoid/HardSigmoid/Tanh into com.microsoft.FusedConv";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    for (const char *op : {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "Tanh"})
      patterns.add<FuseConvActivation>(op);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseConvReluPass() { return std::make_unique<FuseConvReluPass>(); }

} // namespace onnxslim
