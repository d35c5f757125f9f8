//===- transforms/fusion/FuseConvBatchNorm.cpp - Fold BN into the layer before===//
//
// fuse-conv-batchnorm: an inference-mode BatchNormalization right after a
// Conv, ConvTranspose, Gemm or MatMul with constant weights is folded into
// those weights and the bias.
//
//   Before:                                   After:
//     c = Conv(x, W, b)                         y = Conv(x, W', b')
//     y = BatchNormalization(c, s, B, m, v)
//
//     g = MatMul(x, W)        # x: [M, K]       g = MatMul(x, W')
//     y = BatchNormalization(g, s, B, m, v)     y = Add(g, b')
//
// Algebra, per output channel o (computed in double, written back in the
// weights' dtype, float16 included):
//   a[o]  = s[o] / sqrt(v[o] + epsilon)
//   W'[o] = W[o] * a[o]                 (every weight of output channel o)
//   b'[o] = (b[o] - m[o]) * a[o] + B[o] (b = 0 when Conv has no bias)
// Output channel o is W's axis 0 for Conv; for ConvTranspose (W is
// [Cin, M/group, k...]) it is group(ci) * M/group + j for W[ci, j, ...];
// for Gemm/MatMul it is column o of B' (B, or B^T when transB = 1), and the
// Gemm bias becomes C' = beta * a * C + B - a * m with beta set to 1.
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - the BN is in inference form: no used training outputs (mean, var,
//     saved_mean, saved_var), training_mode = 0 (opset >= 14), spatial = 1
//     (opset < 9); is_test (opset <= 6) is ignored when only Y is used, as
//     ONNX Runtime does;
//   - its input is the layer's result, read only by the BN and not a graph
//     output;
//   - the layer's weights (and bias, when present) are constants of a
//     floating dtype; BN's four parameters are floating constants of shape
//     [C], C being the layer's output channel count;
//   - Gemm: B is 2-D, C absent or of shape [N], [1, N], [1] or [];
//     MatMul: W is 2-D and x has rank 2 (the BN channel axis, 1, is then
//     the MatMul's last axis);
//   - the layer's kind is not skipped: option skip=conv, conv-transpose,
//     gemm or matmul (one per occurrence, `fuse-conv-batchnorm{skip=conv
//     skip=gemm}`) leaves BNs after that kind of layer alone. OnnxSlim
//     names two of these fusions apart (FusionConvBN, FusionConvTransposeBN:
//     api/FusionNames.cpp); skipping one must not skip the other.
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <array>
#include <cmath>

namespace onnxslim {

namespace {

/// BN's per-channel scale a and shift B - a * m.
struct BnAffine {
  std::vector<double> scale;
  std::vector<double> shift;
};

/// Whether the BN is an inference BN; null reason = yes.
const char *checkInferenceForm(const Node &bn) {
  if (bn.numOperands() != 5)
    return "not five inputs";
  for (size_t i = 0; i < 5; ++i)
    if (!bn.operand(i))
      return "an input is omitted";
  if (!bn.result(0))
    return "no Y output";
  for (size_t i = 1; i < bn.numResults(); ++i)
    if (bn.result(i) && bn.result(i)->hasUses())
      return "a training output (mean/var/saved statistics) is used";
  int64_t opset = defaultOpset(bn);
  if (opset >= 14 && bn.attrInt("training_mode", 0) != 0)
    return "training_mode = 1";
  if (opset < 9 && bn.attrInt("spatial", 1) == 0)
    return "spatial = 0 (per-activation statistics)";
  return nullptr;
}

/// BN's affine form for `channels` channels; null reason = ok.
std::optional<BnAffine> bnAffine(const Node &bn, int64_t channels, const char *&reason) {
  std::vector<double> p[4];
  for (size_t i = 0; i < 4; ++i) {
    TensorPtr t = constantTensor(bn.operand(i + 1));
    std::optional<std::vector<double>> v = t ? toDoubles(*t) : std::nullopt;
    if (!v) {
      reason = "a BN parameter is not a floating constant";
      return std::nullopt;
    }
    if (t->dims() != std::vector<int64_t>{channels}) {
      reason = "a BN parameter's shape is not [C]";
      return std::nullopt;
    }
    p[i] = std::move(*v);
  }
  double eps = bn.attrFloat("epsilon", 1e-5f);
  BnAffine out;
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    double a = p[0][c] / std::sqrt(p[3][c] + eps);
    out.scale.push_back(a);
    out.shift.push_back(p[1][c] - a * p[2][c]);
  }
  return out;
}

/// The layers a BN is folded into, by the name option skip= gives them.
enum Layer { kConv, kConvTranspose, kGemm, kMatMul, kNumLayers };
constexpr std::array<std::pair<std::string_view, std::string_view>, kNumLayers> kLayers = {
    {{"conv", "Conv"}, {"conv-transpose", "ConvTranspose"}, {"gemm", "Gemm"}, {"matmul", "MatMul"}}};
using SkippedLayers = std::array<bool, kNumLayers>;

class FuseBatchNorm : public Pattern {
public:
  explicit FuseBatchNorm(SkippedLayers skipped) : Pattern("BatchNormalization", "fuse-conv-batchnorm"), skipped_(skipped) {}

  bool matchAndRewrite(Node *bn, Rewriter &rewriter) const override {
    if (const char *reason = checkInferenceForm(*bn))
      return rewriter.notifyMatchFailure(bn, reason);
    Value *x = bn->operand(0);
    Node *layer = x->definingNode();
    if (!layer || !(layer->is("Conv") || layer->is("ConvTranspose") || layer->is("Gemm") || layer->is("MatMul")))
      return rewriter.notifyMatchFailure(bn, "the input is not a Conv, ConvTranspose, Gemm or MatMul result");
    for (size_t i = 0; i < kNumLayers; ++i)
      if (skipped_[i] && layer->is(kLayers[i].second))
        return rewriter.notifyMatchFailure(bn, "the input is a " + std::string(kLayers[i].second) +
                                                   " result, skipped (skip=" + std::string(kLayers[i].first) + ")");
    if (!hasSingleNodeUse(x))
      return rewriter.notifyMatchFailure(bn, "the layer's result has other users or is a graph output");
    if (layer->numOperands() < 2 || !layer->operand(0) || !layer->operand(1))
      return rewriter.notifyMatchFailure(bn, "the layer has no weights");
    TensorPtr w = constantTensor(layer->operand(1));
    if (!w || !isFloatLike(w->dtype()))
      return rewriter.notifyMatchFailure(bn, "the layer's weights are not a floating constant");
    if (layer->is("Conv") || layer->is("ConvTranspose"))
      return fuseConv(bn, layer, *w, rewriter);
    if (layer->is("Gemm"))
      return fuseGemm(bn, layer, *w, rewriter);
    return fuseMatMul(bn, layer, *w, rewriter);
  }

private:
  bool fuseConv(Node *bn, Node *conv, const Tensor &w, Rewriter &rewriter) const {
    const std::vector<int64_t> &dims = w.dims();
    if (dims.size() < 3)
      return rewriter.notifyMatchFailure(bn, "the weights have rank < 3");
    bool transposed = conv->is("ConvTranspose");
    int64_t group = conv->attrInt("group", 1);
    if (group < 1 || (transposed && dims[0] % group != 0))
      return rewriter.notifyMatchFailure(bn, "bad group");
    int64_t channels = transposed ? dims[1] * group : dims[0];
    const char *reason = nullptr;
    std::optional<BnAffine> affine = bnAffine(*bn, channels, reason);
    if (!affine)
      return rewriter.notifyMatchFailure(bn, reason);
    std::optional<std::vector<double>> bias(std::vector<double>(static_cast<size_t>(channels), 0.0));
    if (conv->numOperands() > 2 && conv->operand(2)) {
      TensorPtr b = constantTensor(conv->operand(2));
      bias = b ? toDoubles(*b) : std::nullopt;
      if (!bias || b->dtype() != w.dtype() || b->dims() != std::vector<int64_t>{channels})
        return rewriter.notifyMatchFailure(bn, "the conv bias is not a constant [C] of the weights' dtype");
    }
    std::vector<double> wv = *toDoubles(w);
    // Elements per W[i, j] slice (the kernel) and per W[i] row.
    size_t kernel = 1;
    for (size_t i = 2; i < dims.size(); ++i)
      kernel *= static_cast<size_t>(dims[i]);
    size_t d1 = static_cast<size_t>(dims[1]);
    size_t inPerGroup = transposed ? static_cast<size_t>(dims[0] / group) : 0;
    for (size_t i = 0; i < static_cast<size_t>(dims[0]); ++i)
      for (size_t j = 0; j < d1; ++j) {
        size_t o = transposed ? (i / inPerGroup) * d1 + j : i;
        double a = affine->scale[o];
        for (size_t k = 0, base = (i * d1 + j) * kernel; k < kernel; ++k)
          wv[base + k] *= a;
      }
    std::vector<double> bv(static_cast<size_t>(channels));
    for (size_t o = 0; o < bv.size(); ++o)
      bv[o] = (*bias)[o] * affine->scale[o] + affine->shift[o];
    Graph &g = *conv->graph();
    Value *newW =
        materializeConstant(rewriter, g, conv, conv->operand(1)->name() + "_bn", fromDoubles(w.dtype(), dims, wv));
    Value *newB = materializeConstant(rewriter, g, conv, conv->result(0)->name() + "_bias",
                                      fromDoubles(w.dtype(), {channels}, bv));
    rewriter.setOperand(conv, 1, newW);
    if (conv->numOperands() < 3)
      rewriter.resizeOperands(conv, 3);
    rewriter.setOperand(conv, 2, newB);
    replaceFusedNode(bn, conv->result(0), rewriter, "folded into " + nodeLabel(*conv));
    return true;
  }

  bool fuseGemm(Node *bn, Node *gemm, const Tensor &w, Rewriter &rewriter) const {
    if (w.rank() != 2)
      return rewriter.notifyMatchFailure(bn, "Gemm's B is not 2-D");
    if (gemm->numResults() != 1)
      return rewriter.notifyMatchFailure(bn, "Gemm has extra outputs");
    bool transB = gemm->attrInt("transB", 0) != 0;
    int64_t channels = transB ? w.dims()[0] : w.dims()[1];
    const char *reason = nullptr;
    std::optional<BnAffine> affine = bnAffine(*bn, channels, reason);
    if (!affine)
      return rewriter.notifyMatchFailure(bn, reason);
    double beta = gemm->attrFloat("beta", 1.0f);
    std::vector<double> c(static_cast<size_t>(channels), 0.0);
    if (gemm->numOperands() > 2 && gemm->operand(2)) {
      TensorPtr ct = constantTensor(gemm->operand(2));
      std::optional<std::vector<double>> cv = ct ? toDoubles(*ct) : std::nullopt;
      if (!cv || ct->dtype() != w.dtype())
        return rewriter.notifyMatchFailure(bn, "Gemm's C is not a constant of B's dtype");
      const std::vector<int64_t> &cd = ct->dims();
      bool perColumn = cd == std::vector<int64_t>{channels} || cd == std::vector<int64_t>{1, channels};
      bool single = ct->numElements() == 1 && cd.size() <= 2;
      if (!perColumn && !single)
        return rewriter.notifyMatchFailure(bn, "Gemm's C is not per column ([N], [1, N]) or a single element");
      if (defaultOpset(*gemm) < 7 && gemm->attrInt("broadcast", 0) == 0)
        return rewriter.notifyMatchFailure(bn, "Gemm (opset < 7) without broadcast = 1");
      for (size_t o = 0; o < c.size(); ++o)
        c[o] = perColumn ? (*cv)[o] : (*cv)[0];
    } else if (defaultOpset(*gemm) < 7) {
      return rewriter.notifyMatchFailure(bn, "Gemm (opset < 7) without C");
    }
    std::vector<double> wv = *toDoubles(w);
    size_t rows = static_cast<size_t>(w.dims()[0]), cols = static_cast<size_t>(w.dims()[1]);
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < cols; ++k)
        wv[r * cols + k] *= affine->scale[transB ? r : k];
    std::vector<double> cv(c.size());
    for (size_t o = 0; o < c.size(); ++o)
      cv[o] = beta * affine->scale[o] * c[o] + affine->shift[o];
    Graph &g = *gemm->graph();
    Value *newW =
        materializeConstant(rewriter, g, gemm, gemm->operand(1)->name() + "_bn", fromDoubles(w.dtype(), w.dims(), wv));
    Value *newC = materializeConstant(rewriter, g, gemm, gemm->result(0)->name() + "_bias",
                                      fromDoubles(w.dtype(), {channels}, cv));
    rewriter.setOperand(gemm, 1, newW);
    if (gemm->numOperands() < 3)
      rewriter.resizeOperands(gemm, 3);
    rewriter.setOperand(gemm, 2, newC);
    rewriter.modifyNodeInPlace(gemm, [&] { gemm->setAttr(Attribute::makeFloat("beta", 1.0f)); });
    replaceFusedNode(bn, gemm->result(0), rewriter, "folded into " + nodeLabel(*gemm));
    return true;
  }

  bool fuseMatMul(Node *bn, Node *matmul, const Tensor &w, Rewriter &rewriter) const {
    if (w.rank() != 2)
      return rewriter.notifyMatchFailure(bn, "MatMul's weight is not 2-D");
    std::optional<Shape> xs = knownShape(matmul->operand(0));
    if (!xs || xs->size() != 2)
      return rewriter.notifyMatchFailure(bn, "MatMul's input is not known to be 2-D (BN's channel axis 1 would not "
                                             "be the MatMul's last axis)");
    int64_t channels = w.dims()[1];
    const char *reason = nullptr;
    std::optional<BnAffine> affine = bnAffine(*bn, channels, reason);
    if (!affine)
      return rewriter.notifyMatchFailure(bn, reason);
    std::vector<double> wv = *toDoubles(w);
    size_t rows = static_cast<size_t>(w.dims()[0]), cols = static_cast<size_t>(channels);
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < cols; ++k)
        wv[r * cols + k] *= affine->scale[k];
    Graph &g = *matmul->graph();
    Value *newW = materializeConstant(rewriter, g, matmul, matmul->operand(1)->name() + "_bn",
                                      fromDoubles(w.dtype(), w.dims(), wv));
    Value *shift = materializeConstant(rewriter, g, bn, matmul->result(0)->name() + "_bias",
                                       fromDoubles(w.dtype(), {channels}, affine->shift));
    rewriter.setOperand(matmul, 1, newW);
    Node *add = rewriter.createNodeBefore(bn, "Add", {matmul->result(0), shift}, {bn->result(0)->name() + "_add"});
    add->result(0)->setType(bn->result(0)->type());
    replaceFusedNode(bn, add->result(0), rewriter, "folded into " + nodeLabel(*matmul) + " + Add", true);
    return true;
  }

  SkippedLayers skipped_;
};

class FuseConvBatchNormPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-conv-batchnorm"; }
  std::string_view description() const override {
    return "Fold an inference BatchNormalization into the Conv/ConvTranspose/Gemm/MatMul before it";
  }

  bool setOption(std::string_view key, std::string_view value, std::string &error) override {
    if (key != "skip")
      return Pass::setOption(key, value, error);
    for (size_t i = 0; i < kNumLayers; ++i)
      if (value == kLayers[i].first) {
        skipped_[i] = true;
        return true;
      }
    error = "option skip of " + std::string(name()) + " takes conv, conv-transpose, gemm or matmul, not '" +
            std::string(value) + "'";
    return false;
  }
  std::string optionsText() const override {
    std::string s;
    for (size_t i = 0; i < kNumLayers; ++i)
      if (skipped_[i])
        s += (s.empty() ? "skip=" : " skip=") + std::string(kLayers[i].first);
    return s;
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<FuseBatchNorm>(skipped_); }

private:
  SkippedLayers skipped_{};
};

} // namespace

std::unique_ptr<Pass> createFuseConvBatchNormPass() { return std::make_unique<FuseConvBatchNormPass>(); }

} // namespace onnxslim
