//===- transforms/fusion/FuseConvAdd.cpp - Per-channel Add into the Conv bias===//
//
// fuse-conv-add: the Add of a per-channel constant to a Conv (or
// ConvTranspose) result becomes (part of) its bias.
//
//   Before:                                   After:
//     c = Conv(x, W, b)   # c: [N, C, H, W]     y = Conv(x, W, b')   # b' = b + k
//     y = Add(c, k)       # k: [C, 1, 1]
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - k is a constant (either operand) of the weights' floating dtype whose
//     broadcast against the Conv output changes nothing but channel values:
//     its rank is at most the output's and every dim is 1 except the one
//     aligned with the channel axis, which may be C ([C,1,1], [1,C,1,1],
//     [1], a scalar...). So the Add's result has the Conv's shape;
//   - the Conv's weights (and bias, if any) are constants (C is W's dim 0 for
//     Conv, dim 1 times group for ConvTranspose); its result is read
//     only by the Add and is not a graph output.
// The sum is computed in double and written in the weights' dtype.
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

class FuseConvAddPattern : public Pattern {
public:
  FuseConvAddPattern() : Pattern("Add", "fuse-conv-add") {}

  bool matchAndRewrite(Node *add, Rewriter &rewriter) const override {
    const char *reason = nullptr;
    std::optional<ConvChannelOperand> m = matchConvChannelOperand(*add, /*allowTranspose=*/true, reason);
    if (!m)
      return rewriter.notifyMatchFailure(add, reason);
    Node *conv = m->conv;
    int64_t channels = m->channels;
    std::vector<double> bias(static_cast<size_t>(channels), 0.0);
    if (conv->numOperands() > 2 && conv->operand(2))
      bias = *constantDoubles(conv->operand(2));
    for (size_t o = 0; o < bias.size(); ++o)
      bias[o] += m->values[o];
    Value *newB = materializeConstant(rewriter, *conv->graph(), conv, conv->result(0)->name() + "_bias",
                                          fromDoubles(m->weights->dtype(), {channels}, bias));
    if (conv->numOperands() < 3)
      rewriter.resizeOperands(conv, 3);
    rewriter.setOperand(conv, 2, newB);
    replaceFusedNode(add, conv->result(0), rewriter, "added to the bias of " + nodeLabel(*conv));
    return true;
  }
};

class FuseConvAddPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-conv-add"; }
  std::string_view description() const override {
    return "Fold a per-channel constant Add into the Conv/ConvTranspose bias";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<FuseConvAddPattern>(); }
};

} // namespace

std::unique_ptr<Pass> createFuseConvAddPass() { return std::make_unique<FuseConvAddPass>(); }

} // namespace onnxslim
