//===- transforms/fusion/FusePadConv.cpp - Explicit Pad into Conv/pool pads===//
//
// fuse-pad-conv: a constant-mode Pad of the spatial axes only, right before
// a Conv or a pool, merges into that op's `pads` attribute.
//
//   Before:                                       After:
//     p = Pad(x, pads)   # pads = [0,0,1,1, 0,0,1,1]   y = Conv <pads = [1,1,1,1]> (x, W)
//     y = Conv(p, W)
//
// Pad forms: opset 1 (`paddings`, `value` attributes), 2-10 (`pads`,
// `value`), 11+ (pads and constant_value inputs), 18+ (an optional axes
// input, negative axes counting from the end).
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - Pad mode is "constant"; its pads (and axes) are constants; every pad
//     is >= 0 and the batch and channel axes (0 and 1) are not padded;
//   - the pad value is 0 for Conv and for AveragePool with
//     count_include_pad = 1 (a zero border counted in the average, exactly
//     what the pool's own padding does), and -inf for MaxPool (never the
//     maximum, as the pool's padding). AveragePool with
//     count_include_pad = 0 fuses only without pads of its own, and becomes
//     count_include_pad = 1: every window then lies in the padded input
//     (ceil_mode 0) and divides by the whole kernel, zeros included, in
//     both forms;
//   - the consumer's auto_pad is NOTSET; a pool's merged pads stay smaller
//     than its kernel (ONNX Runtime requires it); pools use ceil_mode = 0 (with
//     ceil_mode the last window's placement depends on where padding
//     starts); MaxPool's Indices output is unused;
//   - MaxPool: no pooling window may cover explicit (-inf) padding without
//     covering input data, since such a window gives -inf before the fusion
//     but the lowest float after (a pool skips its own padding). With a
//     known spatial size every window is checked (a dilated window's taps
//     can straddle a small input); otherwise the axis needs dilation 1 and
//     merged pads summing below the kernel (then every window of a
//     non-empty axis holds data, and an empty axis has no window);
//   - the Pad result is read only by that one op and is not a graph output.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <cmath>

namespace onnxslim {

namespace {

/// A decoded Pad: mode, per-axis begin/end pads and the constant value.
struct PadSpec {
  std::vector<int64_t> begin, end;
  double value = 0;
};

/// Decodes `pad` for an input of rank `rank`; null reason = ok.
std::optional<PadSpec> decodePad(const Node &pad, size_t rank, const char *&reason) {
  if (pad.attrString("mode", "constant") != "constant") {
    reason = "the Pad mode is not constant";
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> pads;
  std::optional<std::vector<int64_t>> axes;
  PadSpec spec;
  if (defaultOpset(pad) < 11) {
    const Attribute *a = pad.attr("pads");
    if (!a)
      a = pad.attr("paddings");
    if (a && a->kind == AttrKind::Ints)
      pads = a->ints;
    spec.value = pad.attrFloat("value", 0.0f);
  } else {
    if (pad.numOperands() >= 2 && pad.operand(1))
      pads = constantInts(pad.operand(1));
    if (pad.numOperands() >= 3 && pad.operand(2)) {
      TensorPtr v = constantTensor(pad.operand(2));
      std::optional<std::vector<double>> d = v ? toDoubles(*v) : std::nullopt;
      if (v && !d && isInteger(v->dtype()))
        if (std::optional<std::vector<int64_t>> i = constantInts(pad.operand(2)))
          d = std::vector<double>(i->begin(), i->end());
      if (!d || d->size() != 1) {
        reason = "the pad value is not a constant scalar";
        return std::nullopt;
      }
      spec.value = (*d)[0];
    }
    if (pad.numOperands() >= 4 && pad.operand(3)) {
      axes = constantInts(pad.operand(3));
      if (!axes) {
        reason = "the Pad axes are not a constant";
        return std::nullopt;
      }
    }
  }
  if (!pads) {
    reason = "the pads are not a constant";
    return std::nullopt;
  }
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < rank; ++i)
      axes->push_back(static_cast<int64_t>(i));
  }
  if (pads->size() != 2 * axes->size()) {
    reason = "the pads do not match the input rank";
    return std::nullopt;
  }
  spec.begin.assign(rank, 0);
  spec.end.assign(rank, 0);
  int64_t r = static_cast<int64_t>(rank);
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + r : (*axes)[i];
    if (axis < 0 || axis >= r) {
      reason = "a Pad axis is out of range";
      return std::nullopt;
    }
    spec.begin[static_cast<size_t>(axis)] += (*pads)[i];
    spec.end[static_cast<size_t>(axis)] += (*pads)[i + axes->size()];
  }
  return spec;
}

/// For a MaxPool fed by `pad`: null when every pooling window that covers
/// some of the Pad's (-inf) border also covers input data, so merging the
/// border into the pool's own (skipped) padding changes no output; otherwise
/// why not. `pads` are the merged pads.
const char *windowOnlyInExplicitPadding(const Node &pool, const Node &pad, const PadSpec &spec,
                                        const std::vector<int64_t> &pads, const std::vector<int64_t> &kernel,
                                        size_t spatial) {
  std::vector<int64_t> dilations = pool.attrInts("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> strides = pool.attrInts("strides", std::vector<int64_t>(spatial, 1));
  if (dilations.size() != spatial || strides.size() != spatial || kernel.size() != spatial)
    return "the pool's dilations or strides do not match its spatial rank";
  std::optional<Shape> in = knownShape(pad.operand(0));
  for (size_t i = 0; i < spatial; ++i) {
    int64_t xb = spec.begin[i + 2], xe = spec.end[i + 2];
    if (xb == 0 && xe == 0)
      continue;
    int64_t k = kernel[i], d = dilations[i], st = strides[i], pb = pads[i], pe = pads[i + spatial];
    if (k < 1 || d < 1 || st < 1 || k > (int64_t{1} << 20) || d > (int64_t{1} << 20))
      return "the pool's kernel, dilations or strides are not positive (or are huge)";
    int64_t window = (k - 1) * d + 1;
    const Dim *size = in && in->size() == spatial + 2 ? &(*in)[i + 2] : nullptr;
    if (!size || !size->isValue()) {
      if (d == 1 && pb + pe < k)
        continue;
      return "a dilated (or wholly padded) pool window may cover only the Pad's -inf border "
             "(the spatial size is unknown)";
    }
    int64_t s = size->getValue();
    if (s < 0 || s > (int64_t{1} << 40))
      return "the spatial size is out of range";
    int64_t span = s + pb + pe - window;
    int64_t count = span < 0 ? 0 : span / st + 1;
    if (count > (int64_t{1} << 16) || count * k > (int64_t{1} << 22))
      return "too many pool windows to check";
    for (int64_t o = 0; o < count; ++o) {
      bool data = false, border = false;
      for (int64_t j = 0, at = o * st - pb; j < k; ++j, at += d) {
        data |= at >= 0 && at < s;
        border |= (at >= -xb && at < 0) || (at >= s && at < s + xe);
      }
      if (border && !data)
        return "a pool window would cover only the Pad's -inf border (-inf before, the lowest float after)";
    }
  }
  return nullptr;
}

class FusePadPattern : public Pattern {
public:
  explicit FusePadPattern(std::string op) : Pattern(std::move(op), "fuse-pad-conv") {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (node->numOperands() == 0 || !node->operand(0))
      return rewriter.notifyMatchFailure(node, "no input");
    Node *pad = producerOp(node->operand(0), "Pad");
    if (!pad)
      return rewriter.notifyMatchFailure(node, "the input is not a Pad result");
    if (!hasSingleNodeUse(pad->result(0)) || !pad->operand(0))
      return rewriter.notifyMatchFailure(node, "the Pad result has other users or is a graph output");
    if (node->attrString("auto_pad", "NOTSET") != "NOTSET")
      return rewriter.notifyMatchFailure(node, "auto_pad is not NOTSET");
    bool isConv = node->is("Conv");
    size_t spatial = 0;
    if (const Attribute *k = node->attr("kernel_shape"); k && k->kind == AttrKind::Ints) {
      spatial = k->ints.size();
    } else if (TensorPtr w = isConv && node->numOperands() > 1 ? constantTensor(node->operand(1)) : nullptr;
               w && w->rank() >= 3) {
      spatial = static_cast<size_t>(w->rank() - 2);
    } else if (std::optional<Shape> s = knownShape(node->operand(0)); s && s->size() >= 3) {
      spatial = s->size() - 2;
    }
    if (spatial == 0)
      return rewriter.notifyMatchFailure(node, "the number of spatial axes is unknown");
    double wanted = 0;
    bool countPads = false; // count_include_pad = 0 -> 1 with the Pad's zeros
    if (node->is("AveragePool")) {
      if (node->attrInt("count_include_pad", 0) == 0) {
        // With no pads of its own (and ceil_mode 0, below) every window lies
        // in the padded input, so it divides by the whole kernel: what
        // count_include_pad = 1 does over the merged zero pads.
        for (int64_t p : node->attrInts("pads", {}))
          if (p != 0)
            return rewriter.notifyMatchFailure(node, "AveragePool with count_include_pad = 0 and pads of its own");
        countPads = true;
      }
    } else if (node->is("MaxPool")) {
      wanted = -INFINITY;
      for (size_t i = 1; i < node->numResults(); ++i)
        if (node->result(i) && node->result(i)->hasUses())
          return rewriter.notifyMatchFailure(node, "MaxPool's Indices output is used");
    }
    if (!isConv && node->attrInt("ceil_mode", 0) != 0)
      return rewriter.notifyMatchFailure(node, "ceil_mode = 1");
    const char *reason = nullptr;
    std::optional<PadSpec> spec = decodePad(*pad, spatial + 2, reason);
    if (!spec)
      return rewriter.notifyMatchFailure(node, reason);
    if (spec->value != wanted)
      return rewriter.notifyMatchFailure(node, isConv || wanted == 0 ? "the pad value is not 0"
                                                                      : "the pad value is not -inf");
    for (size_t i = 0; i < spec->begin.size(); ++i) {
      if (spec->begin[i] < 0 || spec->end[i] < 0)
        return rewriter.notifyMatchFailure(node, "a pad is negative (a crop)");
      if (i < 2 && (spec->begin[i] != 0 || spec->end[i] != 0))
        return rewriter.notifyMatchFailure(node, "the batch or channel axis is padded");
    }
    std::vector<int64_t> pads = node->attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
      return rewriter.notifyMatchFailure(node, "the op's pads do not match its spatial rank");
    for (size_t i = 0; i < spatial; ++i) {
      pads[i] += spec->begin[i + 2];
      pads[i + spatial] += spec->end[i + 2];
    }
    // ONNX Runtime's pools want every pad smaller than the kernel.
    std::vector<int64_t> kernel = node->attrInts("kernel_shape");
    if (!isConv)
      for (size_t i = 0; i < 2 * spatial; ++i)
        if (kernel.size() != spatial || pads[i] >= kernel[i % spatial])
          return rewriter.notifyMatchFailure(node, "a merged pool pad would not be smaller than the kernel");
    if (node->is("MaxPool"))
      if (const char *why = windowOnlyInExplicitPadding(*node, *pad, *spec, pads, kernel, spatial))
        return rewriter.notifyMatchFailure(node, why);
    if (rewriter.debugEnabled())
      rewriter.notifyRewrite(node, "absorbed " + nodeLabel(*pad));
    rewriter.modifyNodeInPlace(node, [&] {
      node->setAttr(Attribute::makeInts("pads", pads));
      if (countPads)
        node->setAttr(Attribute::makeInt("count_include_pad", 1));
    });
    rewriter.setOperand(node, 0, pad->operand(0));
    rewriter.eraseNode(pad);
    return true;
  }
};

class FusePadConvPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-pad-conv"; }
  std::string_view description() const override {
    return "Merge a constant-zero spatial Pad into the pads of the Conv/AveragePool (-inf: MaxPool) after it";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<FusePadPattern>("Conv");
    patterns.add<FusePadPattern>("AveragePool");
    patterns.add<FusePadPattern>("MaxPool");
  }
};

} // namespace

std::unique_ptr<Pass> createFusePadConvPass() { return std::make_unique<FusePadConvPass>(); }

} // namespace onnxslim
