//===- ir/shape/NN.cpp - Convolution, pooling, normalization, RNN ---------===//
//
// Inference rules for the neural-network ops: Conv/ConvTranspose and their
// integer and quantized forms, pooling (auto_pad, ceil_mode, dilations), the
// normalizations, RNN/GRU/LSTM (both layouts), Resize/Upsample (scales or
// sizes, axes, keep_aspect_ratio_policy), RoI ops, GridSample/AffineGrid,
// the signal ops (DFT, STFT, windows, MelWeightMatrix) and
// NonMaxSuppression.
//
// Window arithmetic on a symbolic spatial dim is exact: floor/ceil divisions
// by the stride become canonical terms (SymDim::floorDiv), so two branches
// that downsample the same input agree on their sizes.
//
//===----------------------------------------------------------------------===//
#include "ir/shape/InferContext.h"

#include <cmath>

namespace onnxslim::shape {

namespace {

DataType elemOf(InferContext &ctx, size_t i) {
  return ctx.elemType(i).value_or(DataType::Undefined);
}

/// Reads an ints attribute of `n` entries (default `dflt` each); fails on a wrong length.
std::optional<std::vector<int64_t>> spatialAttr(InferContext &ctx, const char *name, size_t n,
                                                int64_t dflt, size_t factor = 1) {
  const Attribute *a = ctx.node().attr(name);
  if (!a || a->kind != AttrKind::Ints || a->ints.empty())
    return std::vector<int64_t>(n * factor, dflt);
  if (a->ints.size() != n * factor) {
    ctx.fail(std::string("'") + name + "' has " + std::to_string(a->ints.size()) +
             " entries; expected " + std::to_string(n * factor));
    return std::nullopt;
  }
  return a->ints;
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string autoPad;
  bool ceilMode = false;
};

/// Reads the window attributes for `n` spatial dims; kernel from the
/// attribute or, when `weightKernel` is given, from the weight's dims.
std::optional<Window> readWindow(InferContext &ctx, size_t n,
                                 const std::optional<std::vector<int64_t>> &weightKernel) {
  Window w;
  const Attribute *k = ctx.node().attr("kernel_shape");
  if (k && k->kind == AttrKind::Ints && !k->ints.empty())
    w.kernel = k->ints;
  else if (weightKernel)
    w.kernel = *weightKernel;
  else
    return std::nullopt;
  if (w.kernel.size() != n) {
    ctx.fail("kernel has " + std::to_string(w.kernel.size()) + " dims for " + std::to_string(n) +
             " spatial dims");
    return std::nullopt;
  }
  auto s = spatialAttr(ctx, "strides", n, 1);
  auto d = spatialAttr(ctx, "dilations", n, 1);
  auto p = spatialAttr(ctx, "pads", n, 0, 2);
  if (!s || !d || !p)
    return std::nullopt;
  w.strides = *s;
  w.dilations = *d;
  w.pads = *p;
  for (size_t i = 0; i < n; ++i)
    if (w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0) {
      ctx.fail("kernel, strides and dilations must be positive");
      return std::nullopt;
    }
  w.autoPad = ctx.node().attrString("auto_pad", "NOTSET");
  w.ceilMode = ctx.node().attrInt("ceil_mode", 0) != 0;
  return w;
}

/// Output size of a sliding window over one dim.
SymDim windowOut(InferContext &ctx, const SymDim &in, const Window &w, size_t i) {
  int64_t stride = w.strides[i];
  int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
  int64_t pb = w.pads[i], pe = w.pads[i + w.kernel.size()];
  SymDim out;
  if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") {
    out = in.ceilDiv(stride);
  } else if (w.autoPad == "VALID") {
    out = (in - SymDim::constant(extent)).floorDiv(stride) + SymDim::constant(1);
  } else if (w.autoPad == "NOTSET" || w.autoPad.empty()) {
    SymDim span = in + SymDim::constant(pb + pe - extent);
    out = (w.ceilMode ? span.ceilDiv(stride) : span.floorDiv(stride)) + SymDim::constant(1);
    if (w.ceilMode) {
      // The last window must start inside the input or the left padding.
      auto o = out.constantValue(), x = in.constantValue();
      if (o && x) {
        if ((*o - 1) * stride >= *x + pb)
          out = SymDim::constant(*o - 1);
      } else if (stride + pe > extent) {
        out = SymDim();
      }
    }
  } else {
    ctx.fail("invalid auto_pad '" + w.autoPad + "'");
    return SymDim();
  }
  if (auto c = out.constantValue(); c && *c <= 0) {
    ctx.fail("window leaves no output along spatial dim " + std::to_string(i) + " (input " +
             in.str() + ")");
    return SymDim();
  }
  return out;
}

/// Spatial output dims of Conv/Pool over input `x` ([N, C, spatial...]).
std::optional<SymShape> slidingShape(InferContext &ctx, const SymShape &x, const SymDim &channels,
                                     const std::optional<std::vector<int64_t>> &weightKernel) {
  if (x.size() < 3) {
    ctx.fail("input must be [N, C, spatial...], got " + str(x));
    return std::nullopt;
  }
  size_t n = x.size() - 2;
  auto w = readWindow(ctx, n, weightKernel);
  if (!w) {
    if (!ctx.failed() && !weightKernel)
      return SymShape{x[0], channels};
    return std::nullopt;
  }
  SymShape out{x[0], channels};
  for (size_t i = 0; i < n; ++i) {
    out.push_back(windowOut(ctx, x[i + 2], *w, i));
    if (ctx.failed())
      return std::nullopt;
  }
  return out;
}

std::optional<std::vector<int64_t>> weightKernel(InferContext &ctx, size_t wi) {
  const SymShape *w = ctx.shape(wi);
  if (!w || w->size() < 3)
    return std::nullopt;
  std::vector<int64_t> k;
  for (size_t i = 2; i < w->size(); ++i) {
    auto c = (*w)[i].constantValue();
    if (!c)
      return std::nullopt;
    k.push_back(*c);
  }
  return k;
}

//===--- Convolution ---------------------------------------------------===//

void inferConvGeneric(InferContext &ctx, size_t xi, size_t wi, DataType elem) {
  const SymShape *x = ctx.shape(xi), *w = ctx.shape(wi);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t group = ctx.node().attrInt("group", 1);
  if (group <= 0) {
    ctx.fail("group must be positive");
    return;
  }
  SymDim m = w && !w->empty() ? (*w)[0] : SymDim();
  if (w && x->size() != w->size()) {
    ctx.fail("input " + str(*x) + " and weight " + str(*w) + " ranks differ");
    return;
  }
  if (w && w->size() >= 2 && x->size() >= 2 &&
      provablyDifferent((*x)[1], (*w)[1] * SymDim::constant(group))) {
    ctx.fail("input channels " + (*x)[1].str() + " != weight channels " + (*w)[1].str() +
             " * group " + std::to_string(group));
    return;
  }
  auto out = slidingShape(ctx, *x, m, weightKernel(ctx, wi));
  if (ctx.failed())
    return;
  if (out && out->size() != x->size())
    out = SymShape{(*x)[0], m};
  if (out && out->size() == 2 && x->size() > 2)
    out->resize(x->size());
  ctx.setTensor(0, elem, out);
}

void inferConv(InferContext &ctx) { inferConvGeneric(ctx, 0, 1, elemOf(ctx, 0)); }
void inferConvInteger(InferContext &ctx) { inferConvGeneric(ctx, 0, 1, DataType::Int32); }
void inferQLinearConv(InferContext &ctx) {
  inferConvGeneric(ctx, 0, 3, ctx.elemType(7).value_or(elemOf(ctx, 0)));
}

void inferConvTranspose(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0), *w = ctx.shape(1);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (x->size() < 3) {
    ctx.fail("input must be [N, C, spatial...], got " + str(*x));
    return;
  }
  size_t n = x->size() - 2;
  int64_t group = ctx.node().attrInt("group", 1);
  if (group <= 0) {
    ctx.fail("group must be positive");
    return;
  }
  if (w && w->size() != x->size()) {
    ctx.fail("input " + str(*x) + " and weight " + str(*w) + " ranks differ");
    return;
  }
  if (w && provablyDifferent((*x)[1], (*w)[0])) {
    ctx.fail("input channels " + (*x)[1].str() + " != weight dim 0 " + (*w)[0].str());
    return;
  }
  SymShape out{(*x)[0], w ? (*w)[1] * SymDim::constant(group) : SymDim()};
  auto window = readWindow(ctx, n, weightKernel(ctx, 1));
  if (ctx.failed())
    return;
  std::vector<int64_t> outputShape = ctx.node().attrInts("output_shape");
  if (outputShape.size() == n + 2)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != n) {
    ctx.fail("output_shape has " + std::to_string(outputShape.size()) + " entries for " +
             std::to_string(n) + " spatial dims");
    return;
  }
  auto outPad = spatialAttr(ctx, "output_padding", n, 0);
  if (!outPad)
    return;
  for (size_t i = 0; i < n; ++i) {
    if (!outputShape.empty()) {
      out.push_back(SymDim::constant(outputShape[i]));
      continue;
    }
    if (!window) {
      out.push_back(SymDim());
      continue;
    }
    const SymDim &in = (*x)[i + 2];
    SymDim stride = SymDim::constant(window->strides[i]);
    if (window->autoPad == "SAME_UPPER" || window->autoPad == "SAME_LOWER") {
      out.push_back(in * stride);
      continue;
    }
    int64_t extent = (window->kernel[i] - 1) * window->dilations[i] + 1;
    int64_t pads = window->autoPad == "VALID" ? 0 : window->pads[i] + window->pads[i + n];
    SymDim o = stride * (in - SymDim::constant(1)) + SymDim::constant((*outPad)[i] + extent - pads);
    if (auto c = o.constantValue(); c && *c <= 0) {
      ctx.fail("output size along spatial dim " + std::to_string(i) + " is not positive");
      return;
    }
    out.push_back(o);
  }
  ctx.setTensor(0, elem, out);
}

void inferDeformConv(InferContext &ctx) { inferConvGeneric(ctx, 0, 1, elemOf(ctx, 0)); }

//===--- Pooling -------------------------------------------------------===//

void inferPool(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    if (ctx.numOutputs() > 1)
      ctx.setTensor(1, DataType::Int64, std::nullopt);
    return;
  }
  if (!ctx.node().hasAttr("kernel_shape")) {
    ctx.fail("missing 'kernel_shape'");
    return;
  }
  auto out = slidingShape(ctx, *x, x->size() > 1 ? (*x)[1] : SymDim(), std::nullopt);
  if (ctx.failed())
    return;
  ctx.setTensor(0, elem, out);
  if (ctx.numOutputs() > 1)
    ctx.setTensor(1, DataType::Int64, out);
}

void inferGlobalPool(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (x->size() < 2) {
    ctx.fail("input must be [N, C, spatial...]");
    return;
  }
  SymShape out = *x;
  for (size_t i = 2; i < out.size(); ++i)
    out[i] = SymDim::constant(1);
  ctx.setTensor(0, elem, out);
}

void inferMaxRoiPool(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0), *rois = ctx.shape(1);
  std::vector<int64_t> pooled = ctx.node().attrInts("pooled_shape");
  if (pooled.size() != 2) {
    ctx.fail("'pooled_shape' must have 2 entries");
    return;
  }
  ctx.setTensor(0, elem,
                SymShape{rois && !rois->empty() ? (*rois)[0] : SymDim(),
                         x && x->size() > 1 ? (*x)[1] : SymDim(), SymDim::constant(pooled[0]),
                         SymDim::constant(pooled[1])});
}

void inferRoiAlign(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0), *rois = ctx.shape(1);
  if (x && x->size() != 4) {
    ctx.fail("input must be 4-D");
    return;
  }
  ctx.setTensor(0, elem,
                SymShape{rois && !rois->empty() ? (*rois)[0] : SymDim(), x ? (*x)[1] : SymDim(),
                         SymDim::constant(ctx.node().attrInt("output_height", 1)),
                         SymDim::constant(ctx.node().attrInt("output_width", 1))});
}

void inferMaxUnpool(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (ctx.hasInput(2)) {
    auto dims = ctx.elements(2);
    ctx.setTensor(0, elem,
                  dims ? std::optional<SymShape>(SymShape(dims->begin(), dims->end()))
                       : (x ? std::optional<SymShape>(SymShape(x->size())) : std::nullopt));
    return;
  }
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (x->size() < 3) {
    ctx.fail("input must be [N, C, spatial...]");
    return;
  }
  size_t n = x->size() - 2;
  auto w = readWindow(ctx, n, std::nullopt);
  if (!w) {
    if (!ctx.failed())
      ctx.fail("missing 'kernel_shape'");
    return;
  }
  SymShape out{(*x)[0], (*x)[1]};
  for (size_t i = 0; i < n; ++i)
    out.push_back(((*x)[i + 2] - SymDim::constant(1)) * SymDim::constant(w->strides[i]) +
                  SymDim::constant(w->kernel[i] - w->pads[i] - w->pads[i + n]));
  ctx.setTensor(0, elem, out);
}

//===--- Normalization -------------------------------------------------===//

void inferBatchNorm(InferContext &ctx) {
  ctx.propagate(0, 0);
  const SymShape *x = ctx.shape(0);
  SymDim c = x && x->size() > 1 ? (*x)[1] : SymDim();
  if (x && x->size() < 2) {
    ctx.fail("input must have rank >= 2");
    return;
  }
  // Before opset 9, spatial = 0 takes per-activation statistics: operands
  // of X's shape without the batch dim, not of [C].
  bool perActivation = ctx.opset() < 9 && ctx.node().attrInt("spatial", 1) == 0;
  for (size_t i = 1; i < 5 && i < ctx.numInputs() && !perActivation; ++i)
    if (const SymShape *p = ctx.shape(i); p && x) {
      if (p->size() != 1 || provablyDifferent((*p)[0], c)) {
        ctx.fail("operand " + std::to_string(i) + " " + str(*p) + " does not match channels " +
                 c.str());
        return;
      }
    }
  // Opset 14+: running mean and variance (types of operands 3 and 4);
  // before: mean, var, saved mean, saved var, all of X's type.
  for (size_t i = 1; i < ctx.numOutputs(); ++i) {
    std::optional<DataType> dt = ctx.opset() >= 14 && i <= 2 ? ctx.elemType(i + 2) : std::nullopt;
    ctx.setTensor(i, dt.value_or(elemOf(ctx, 0)), SymShape{c});
  }
}

void inferLayerNorm(InferContext &ctx) {
  ctx.propagate(0, 0);
  const SymShape *x = ctx.shape(0);
  if (!x || ctx.numOutputs() < 2)
    return;
  auto axis = ctx.normalizeAxis(ctx.node().attrInt("axis", -1), static_cast<int64_t>(x->size()));
  if (!axis)
    return;
  SymShape stats = *x;
  for (size_t i = static_cast<size_t>(*axis); i < stats.size(); ++i)
    stats[i] = SymDim::constant(1);
  DataType dt = dataTypeAttr(ctx.node(), "stash_type").value_or(DataType::Float);
  for (size_t i = 1; i < ctx.numOutputs() && i < 3; ++i)
    ctx.setTensor(i, dt, stats);
}

//===--- Recurrent -----------------------------------------------------===//

void inferRecurrent(InferContext &ctx, int64_t gates, bool hasCell) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0), *w = ctx.shape(1), *r = ctx.shape(2);
  std::string direction = ctx.node().attrString("direction", "forward");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    ctx.fail("invalid direction '" + direction + "'");
    return;
  }
  bool batchFirst = ctx.opset() >= 14 && ctx.node().attrInt("layout", 0) != 0;
  if (x && x->size() != 3) {
    ctx.fail("X must be 3-D, got " + str(*x));
    return;
  }
  SymDim hidden;
  if (ctx.node().hasAttr("hidden_size"))
    hidden = SymDim::constant(ctx.node().attrInt("hidden_size", 0));
  else if (r && r->size() == 3)
    hidden = (*r)[2];
  else if (w && w->size() == 3)
    hidden = (*w)[1].divExact(SymDim::constant(gates));
  if (w && w->size() == 3 && provablyDifferent((*w)[0], SymDim::constant(dirs))) {
    ctx.fail("W's first dim " + (*w)[0].str() + " != num_directions " + std::to_string(dirs));
    return;
  }
  SymDim seq = x ? (*x)[batchFirst ? 1 : 0] : SymDim();
  SymDim batch = x ? (*x)[batchFirst ? 0 : 1] : SymDim();
  SymDim nd = SymDim::constant(dirs);
  ctx.setTensor(0, elem,
                batchFirst ? SymShape{batch, seq, nd, hidden} : SymShape{seq, nd, batch, hidden});
  SymShape state = batchFirst ? SymShape{batch, nd, hidden} : SymShape{nd, batch, hidden};
  ctx.setTensor(1, elem, state);
  if (hasCell)
    ctx.setTensor(2, elem, state);
}

void inferRNN(InferContext &ctx) { inferRecurrent(ctx, 1, false); }
void inferGRU(InferContext &ctx) { inferRecurrent(ctx, 3, false); }
void inferLSTM(InferContext &ctx) { inferRecurrent(ctx, 4, true); }

//===--- Resize --------------------------------------------------------===//

/// floor(d * scale) for a constant or symbolic d; unknown when a float
/// rounding subtlety or a non-reciprocal scale makes it uncertain.
SymDim scaleDim(const SymDim &d, double scale) {
  if (scale == 1.0)
    return d;
  if (auto c = d.constantValue()) {
    double exact = std::floor(static_cast<double>(*c) * scale);
    float single = std::floor(static_cast<float>(*c) * static_cast<float>(scale));
    if (exact != static_cast<double>(single) || exact < 0)
      return SymDim();
    return SymDim::constant(static_cast<int64_t>(exact));
  }
  if (scale >= 1 && std::trunc(scale) == scale)
    return d * SymDim::constant(static_cast<int64_t>(scale));
  if (scale > 0 && scale < 1) {
    double inv = 1.0 / scale;
    if (std::trunc(inv) == inv)
      return d.floorDiv(static_cast<int64_t>(inv));
  }
  return SymDim();
}

void inferResize(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(x->size());
  std::vector<int64_t> axes = ctx.node().attrInts("axes");
  if (ctx.opset() < 18 || axes.empty()) {
    axes.resize(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i)
      axes[static_cast<size_t>(i)] = i;
  } else {
    for (int64_t &a : axes) {
      auto n = ctx.normalizeAxis(a, r);
      if (!n)
        return;
      a = *n;
    }
  }
  size_t scalesIn = ctx.opset() < 11 ? 1 : 2;
  bool useSizes = ctx.opset() >= 11 && ctx.hasInput(3);
  if (useSizes) {
    if (const SymShape *ss = ctx.shape(3);
        ss && ss->size() == 1 && ss->front().constantValue() == 0)
      useSizes = false;
  }
  SymShape out = *x;
  if (useSizes) {
    auto sizes = ctx.elements(3);
    if (!sizes) {
      for (int64_t a : axes)
        out[static_cast<size_t>(a)] = SymDim();
      ctx.setTensor(0, elem, out);
      return;
    }
    if (sizes->size() != axes.size()) {
      ctx.fail("sizes has " + std::to_string(sizes->size()) + " entries for " +
               std::to_string(axes.size()) + " axes");
      return;
    }
    std::string policy = ctx.node().attrString("keep_aspect_ratio_policy", "stretch");
    if (ctx.opset() >= 18 && policy != "stretch") {
      // One scale for all axes: min (not_larger) or max (not_smaller) of size/in.
      std::optional<double> scale;
      for (size_t i = 0; i < axes.size(); ++i) {
        auto s = (*sizes)[i].constantValue(),
             d = (*x)[static_cast<size_t>(axes[i])].constantValue();
        if (!s || !d || *d == 0) {
          scale.reset();
          break;
        }
        double q = static_cast<double>(*s) / static_cast<double>(*d);
        scale = !scale ? q : (policy == "not_larger" ? std::min(*scale, q) : std::max(*scale, q));
        if (i + 1 == axes.size())
          break;
      }
      for (int64_t a : axes) {
        auto d = (*x)[static_cast<size_t>(a)].constantValue();
        out[static_cast<size_t>(a)] =
            scale && d ? SymDim::constant(
                             static_cast<int64_t>(std::round(*scale * static_cast<double>(*d))))
                       : SymDim();
      }
    } else {
      for (size_t i = 0; i < axes.size(); ++i)
        out[static_cast<size_t>(axes[i])] = (*sizes)[i];
    }
    ctx.setTensor(0, elem, out);
    return;
  }
  if (!ctx.hasInput(scalesIn)) {
    ctx.fail("neither scales nor sizes given");
    return;
  }
  auto scales = ctx.doubles(scalesIn);
  if (!scales) {
    for (int64_t a : axes)
      out[static_cast<size_t>(a)] = SymDim();
    ctx.setTensor(0, elem, out);
    return;
  }
  if (scales->size() != axes.size()) {
    ctx.fail("scales has " + std::to_string(scales->size()) + " entries for " +
             std::to_string(axes.size()) + " axes");
    return;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if ((*scales)[i] <= 0) {
      ctx.fail("scales must be positive");
      return;
    }
    out[static_cast<size_t>(axes[i])] = scaleDim((*x)[static_cast<size_t>(axes[i])], (*scales)[i]);
  }
  ctx.setTensor(0, elem, out);
}

void inferUpsample(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  std::optional<std::vector<double>> scales;
  if (const Attribute *a = ctx.node().attr("scales"); a && a->kind == AttrKind::Floats)
    scales = std::vector<double>(a->floats.begin(), a->floats.end());
  else if (ctx.hasInput(1))
    scales = ctx.doubles(1);
  if (!scales) {
    ctx.setTensor(0, elem, SymShape(x->size()));
    return;
  }
  if (scales->size() != x->size()) {
    ctx.fail("scales has " + std::to_string(scales->size()) + " entries for rank " +
             std::to_string(x->size()));
    return;
  }
  SymShape out;
  for (size_t i = 0; i < x->size(); ++i)
    out.push_back(scaleDim((*x)[i], (*scales)[i]));
  ctx.setTensor(0, elem, out);
}

//===--- Sampling ------------------------------------------------------===//

void inferGridSample(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0), *grid = ctx.shape(1);
  if (!x || !grid) {
    ctx.setTensor(0, elem, x ? std::optional<SymShape>(SymShape(x->size())) : std::nullopt);
    return;
  }
  if (x->size() < 3 || grid->size() != x->size()) {
    ctx.fail("input " + str(*x) + " and grid " + str(*grid) + " do not match");
    return;
  }
  SymShape out{(*x)[0], (*x)[1]};
  out.insert(out.end(), grid->begin() + 1, grid->end() - 1);
  ctx.setTensor(0, elem, out);
}

void inferAffineGrid(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  auto size = ctx.elements(1);
  if (!size) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  if (size->size() != 4 && size->size() != 5) {
    ctx.fail("size must have 4 or 5 entries");
    return;
  }
  SymShape out{(*size)[0]};
  out.insert(out.end(), size->begin() + 2, size->end());
  out.push_back(SymDim::constant(static_cast<int64_t>(size->size()) - 2));
  ctx.setTensor(0, elem, out);
}

//===--- Signal --------------------------------------------------------===//

void inferDFT(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (!x) {
    ctx.setTensor(0, elem, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(x->size());
  if (r < 2) {
    ctx.fail("input must have rank >= 2");
    return;
  }
  int64_t axisValue = ctx.node().attrInt("axis", 1);
  if (ctx.opset() >= 20) {
    axisValue = -2;
    if (ctx.hasInput(2)) {
      auto a = ctx.ints(2);
      if (!a || a->size() != 1) {
        ctx.setTensor(0, elem, SymShape(x->size()));
        return;
      }
      axisValue = (*a)[0];
    }
  }
  // The last dim holds the real/imaginary parts and is not a signal axis.
  auto axis = ctx.normalizeAxis(axisValue, r);
  if (!axis)
    return;
  if (*axis == r - 1) {
    ctx.fail("the DFT axis cannot be the last (real/imaginary) dim");
    return;
  }
  size_t a = static_cast<size_t>(*axis);
  SymShape out = *x;
  if (ctx.hasInput(1)) {
    auto n = ctx.elements(1);
    out[a] = n && n->size() == 1 ? (*n)[0] : SymDim();
  }
  bool inverse = ctx.node().attrInt("inverse", 0) != 0;
  if (ctx.node().attrInt("onesided", 0) != 0 && !inverse)
    out[a] = out[a].floorDiv(2) + SymDim::constant(1);
  out.back() = SymDim::constant(2);
  ctx.setTensor(0, elem, out);
}

void inferSTFT(InferContext &ctx) {
  DataType elem = elemOf(ctx, 0);
  const SymShape *x = ctx.shape(0);
  if (x && x->size() != 3) {
    ctx.fail("signal must be [batch, length, 1 or 2]");
    return;
  }
  SymDim frameLength;
  if (ctx.hasInput(3)) {
    if (auto e = ctx.elements(3); e && e->size() == 1)
      frameLength = (*e)[0];
  } else if (const SymShape *w = ctx.shape(2); w && w->size() == 1) {
    frameLength = (*w)[0];
  }
  SymDim frames;
  auto step = ctx.ints(1);
  if (x && step && step->size() == 1 && (*step)[0] > 0)
    frames = ((*x)[1] - frameLength).floorDiv((*step)[0]) + SymDim::constant(1);
  bool onesided = ctx.node().attrInt("onesided", 1) != 0;
  SymDim bins = onesided ? frameLength.floorDiv(2) + SymDim::constant(1) : frameLength;
  ctx.setTensor(0, elem, SymShape{x ? (*x)[0] : SymDim(), frames, bins, SymDim::constant(2)});
}

void inferWindow(InferContext &ctx) {
  DataType dt = dataTypeAttr(ctx.node(), "output_datatype").value_or(DataType::Float);
  auto size = ctx.elements(0);
  ctx.setTensor(0, dt, SymShape{size && size->size() == 1 ? (*size)[0] : SymDim()});
}

void inferMelWeightMatrix(InferContext &ctx) {
  DataType dt = dataTypeAttr(ctx.node(), "output_datatype").value_or(DataType::Float);
  auto bins = ctx.elements(0), dft = ctx.elements(1);
  SymDim rows = dft && dft->size() == 1 ? (*dft)[0].floorDiv(2) + SymDim::constant(1) : SymDim();
  ctx.setTensor(0, dt, SymShape{rows, bins && bins->size() == 1 ? (*bins)[0] : SymDim()});
}

void inferNonMaxSuppression(InferContext &ctx) {
  ctx.setTensor(0, DataType::Int64, SymShape{ctx.freshDim(), SymDim::constant(3)});
}

/// Attention-23: Y is [B, q_heads, Sq, Dv] (4-D) or [B, Sq, q_heads * Dv]
/// (3-D, Dv = V's last dim / kv_num_heads); present_key/value are 4-D with
/// the past length added; qk_matmul_output is [B, q_heads, Sq, Skv].
void inferAttention(InferContext &ctx) {
  DataType dt = elemOf(ctx, 0);
  const SymShape *q = ctx.shape(0), *k = ctx.shape(1), *v = ctx.shape(2);
  if (!q || !k || !v || q->size() != k->size() || q->size() != v->size() || (q->size() != 3 && q->size() != 4)) {
    for (size_t i = 0; i < ctx.numOutputs(); ++i)
      ctx.setTensor(i, dt, std::nullopt);
    return;
  }
  if (q->size() == 4) {
    ctx.setTensor(0, dt, SymShape{(*q)[0], (*q)[1], (*q)[2], (*v)[3]});
    return;
  }
  int64_t qh = ctx.node().attrInt("q_num_heads", 0), kvh = ctx.node().attrInt("kv_num_heads", 0);
  SymDim last;
  if ((*v)[2] == (*k)[2] && (*q)[2] == (*k)[2] && qh == kvh)
    last = (*q)[2];
  else if (qh > 0 && kvh > 0)
    last = (*v)[2].floorDiv(kvh) * SymDim::constant(qh);
  ctx.setTensor(0, dt, SymShape{(*q)[0], (*q)[1], last});
}

} // namespace

void addNNRules(RuleTable &t) {
  t["Conv"] = inferConv;
  t["ConvInteger"] = inferConvInteger;
  t["QLinearConv"] = inferQLinearConv;
  t["ConvTranspose"] = inferConvTranspose;
  t["DeformConv"] = inferDeformConv;
  t["AveragePool"] = inferPool;
  t["MaxPool"] = inferPool;
  t["LpPool"] = inferPool;
  t["GlobalAveragePool"] = inferGlobalPool;
  t["GlobalMaxPool"] = inferGlobalPool;
  t["GlobalLpPool"] = inferGlobalPool;
  t["MaxRoiPool"] = inferMaxRoiPool;
  t["RoiAlign"] = inferRoiAlign;
  t["MaxUnpool"] = inferMaxUnpool;
  for (const char *op : {"InstanceNormalization", "LpNormalization", "MeanVarianceNormalization",
                         "LRN", "GroupNormalization", "RMSNormalization"})
    t[op] = [](InferContext &ctx) { ctx.propagate(0, 0); };
  t["BatchNormalization"] = inferBatchNorm;
  t["LayerNormalization"] = inferLayerNorm;
  t["RotaryEmbedding"] = [](InferContext &ctx) { ctx.propagate(0, 0); };
  t["Attention"] = inferAttention;
  t["RNN"] = inferRNN;
  t["GRU"] = inferGRU;
  t["LSTM"] = inferLSTM;
  t["Resize"] = inferResize;
  t["Upsample"] = inferUpsample;
  t["GridSample"] = inferGridSample;
  t["AffineGrid"] = inferAffineGrid;
  t["DFT"] = inferDFT;
  t["STFT"] = inferSTFT;
  t["HannWindow"] = inferWindow;
  t["HammingWindow"] = inferWindow;
  t["BlackmanWindow"] = inferWindow;
  t["MelWeightMatrix"] = inferMelWeightMatrix;
  t["NonMaxSuppression"] = inferNonMaxSuppression;
}

} // namespace onnxslim::shape
