//===- transforms/fusion/FuseConvMul.cpp - Per-channel Mul into the Conv weights===//
//
// fuse-conv-mul: the product of a Conv result and a per-channel constant
// scales the Conv's weights and bias instead.
//
//   Before:                                   After:
//     c = Conv(x, W, b)   # c: [N, C, H, W]     y = Conv(x, W', b')
//     y = Mul(c, k)       # k: [C, 1, 1]        # W'[o] = W[o] * k[o], b' = b * k
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - k is a constant (either operand) of the weights' floating dtype whose
//     broadcast against the Conv output changes nothing but channel values:
//     its rank is at most the output's and every dim is 1 except the one
//     aligned with the channel axis, which may be C ([C,1,1], [1,C,1,1],
//     [1], a scalar...). So the Mul's result has the Conv's shape;
//   - the Conv's weights (and bias, if any) are constants; its result is read
//     only by the Mul and is not a graph output.
// Products are computed in double and written in the weights' dtype.
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

class FuseConvMulPattern : public Pattern {
public:
  FuseConvMulPattern() : Pattern("Mul", "fuse-conv-mul") {}

  bool matchAndRewrite(Node *mul, Rewriter &rewriter) const override {
    const char *reason = nullptr;
    std::optional<ConvChannelOperand> m = matchConvChannelOperand(*mul, /*allowTranspose=*/false, reason);
    if (!m)
      return rewriter.notifyMatchFailure(mul, reason);
    Node *conv = m->conv;
    const Tensor &w = *m->weights;
    std::vector<double> wv = *toDoubles(w);
    size_t perChannel = wv.size() / m->values.size();
    for (size_t i = 0; i < wv.size(); ++i)
      wv[i] *= m->values[i / perChannel];
    Graph &g = *conv->graph();
    Value *newW = materializeConstant(rewriter, g, conv, conv->operand(1)->name() + "_scaled",
                                      fromDoubles(w.dtype(), w.dims(), wv));
    rewriter.setOperand(conv, 1, newW);
    if (conv->numOperands() > 2 && conv->operand(2)) {
      std::vector<double> bias = *constantDoubles(conv->operand(2));
      for (size_t o = 0; o < bias.size(); ++o)
        bias[o] *= m->values[o];
      Value *newB = materializeConstant(rewriter, g, conv, conv->result(0)->name() + "_bias",
                                        fromDoubles(w.dtype(), {w.dims()[0]}, bias));
      rewriter.setOperand(conv, 2, newB);
    }
    replaceFusedNode(mul, conv->result(0), rewriter, "folded into the weights of " + nodeLabel(*conv));
    return true;
  }
};

class FuseConvMulPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-conv-mul"; }
  std::string_view description() const override {
    return "Fold a per-channel constant Mul into the Conv weights and bias";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<FuseConvMulPattern>(); }
};

} // namespace

std::unique_ptr<Pass> createFuseConvMulPass() { return std::make_unique<FuseConvMulPass>(); }

} // namespace onnxslim
