//===- transforms/opset/Resize.cpp - Upsample and Resize versions ---------===//
//
//   version        change                                      adapter
//   Upsample-9     scales attribute -> input 1                 both ways (a
//                                                               constant going down)
//   Upsample-10    deprecated, replaced by Resize-10 (same     the op is renamed
//                  inputs X, scales; modes nearest, linear)     (both ways)
//   Resize-11      inputs X, roi, scales, sizes; coordinate    see below
//                  transformation and nearest rounding modes
//   Resize-13      roi and scales may be omitted;              downgrade: empty
//                  tf_half_pixel_for_nn dropped                 constants; upgrade:
//                                                               that mode as Gathers
//                                                               (static shapes)
//   Resize-18      antialias, axes, keep_aspect_ratio_policy   version only
//   Resize-19      coordinate mode half_pixel_symmetric        downgrade refuses it
//
//   Before (opset 10):                    After (target=11):
//     y = Resize<mode = "nearest">(x, s)    roi = Constant<value = float[0] {}>()
//                                           y = Resize<coordinate_transformation_mode = "asymmetric",
//                                                      mode = "nearest", nearest_mode = "floor">(x, roi, s)
//
// Resize-10 (and Upsample) maps output index i to input i / scale, and
// nearest takes its floor: Resize-11's "asymmetric" coordinates with
// nearest_mode "floor". Going back with exactly those modes (scales, no
// sizes) keeps the node. Every other mode and coordinate mode (half_pixel,
// align_corners, pytorch_half_pixel, tf_half_pixel_for_nn,
// tf_crop_and_resize; nearest's roundings, cubic, exclude_outside, sizes)
// is written as a separable filter of Gathers along each axis, weighed and
// summed (expansions below, for targets below 11):
//   resizeAsGathers   constant scales/sizes/roi, static input shape:
//                     constant indices and weights per axis
//   resizeComputed    computed scales/sizes/roi: the indices and weights
//                     computed at run time (NonZero/ConstantOfShape for
//                     0 .. out - 1, the coordinate formulas in float32)
// Both follow the spec's formulas as ONNX Runtime's CPU kernel computes
// them (float32 coordinates, linear clamped to the input, cubic taps at
// clamped indices). One place where ONNX Runtime departs from the spec is
// followed by neither: its linear and nearest kernels take an axis whose
// scale is 1 as the identity even where the spec maps it elsewhere
// (tf_crop_and_resize's roi; tf_half_pixel_for_nn's i + 0.5, which ceil
// and round_prefer_ceil take to i + 1 and linear blends).
// Upgrading past 13, which dropped tf_half_pixel_for_nn, resizeAsGathers
// writes such a node too (tfHalfPixelAsGathers), its computed sizes taken
// from a static output shape; a runtime input shape is declined.
// antialias, axes and keep_aspect_ratio_policy (Resize-18) are not written.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/fusion/FusionUtils.h"
#include "transforms/ValueUtils.h"
#include "runtime/Float16.h"

#include <algorithm>
#include <cmath>

namespace onnxslim {
namespace opset {

namespace {

TensorPtr emptyFloats() { return Tensor::fromValues(DataType::Float, {0}, std::vector<float>{}); }

std::string upsample9(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (!node.hasAttr("scales"))
      return "it has no scales";
    const Attribute *a = node.attr("scales");
    TensorPtr t = Tensor::fromValues(DataType::Float, {static_cast<int64_t>(a->floats.size())}, a->floats);
    Value *s = ctx.constantBefore(node, nodeBase(node, "scales"), t);
    node.removeAttr("scales");
    node.resizeOperands(2);
    node.setOperand(1, s);
    return "";
  }
  std::optional<std::vector<double>> s = node.operand(1) ? constantDoubles(node.operand(1)) : std::nullopt;
  if (!s)
    return "its scales are not a constant";
  node.setAttr(Attribute::makeFloats("scales", std::vector<float>(s->begin(), s->end())));
  clearOperand(node, 1);
  node.resizeOperands(1);
  return "";
}

std::string upsampleToResize(Node &node, StepContext &) {
  node.setOpType("Resize");
  return "";
}

/// Given an element type, dims and values, Result: a tensor of a float
/// type (float, double, float16) holding them, or null for another type.
TensorPtr floatTensor(DataType t, std::vector<int64_t> dims, const std::vector<double> &v) {
  if (t == DataType::Float)
    return Tensor::fromValues(t, std::move(dims), std::vector<float>(v.begin(), v.end()));
  if (t == DataType::Double)
    return Tensor::fromValues(t, std::move(dims), v);
  if (t == DataType::Float16) {
    std::vector<uint16_t> bits(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      bits[i] = rt::doubleToHalfBits(v[i]);
    return Tensor::fromValues(t, std::move(dims), bits);
  }
  return nullptr;
}

/// One resized axis: output position o reads input index idx[t][o] with
/// weight w[t][o] for each tap t (one tap for nearest: no weight), and
/// holds the extrapolation value where outside[o].
struct AxisTaps {
  std::vector<std::vector<int64_t>> idx;
  std::vector<std::vector<double>> w;
  std::vector<bool> outside;
};

/// Resize-11..19's settings the per-axis maps depend on.
struct ResizeModes {
  std::string mode, ctm, nearest;
  float cubicA = -0.75f;
  bool excludeOutside = false;
};

/// Given an axis of `in` elements resized to `out` with scale `scale` (and
/// roi [start, end] for tf_crop_and_resize), Result: the taps, computed as
/// ONNX Runtime's CPU kernel does (float coordinates): the spec's original
/// coordinate per coordinate_transformation_mode; nearest rounds it by
/// nearest_mode and clamps; linear clamps it to [0, in - 1] and weighs its
/// two neighbours; cubic weighs floor - 1 .. floor + 2 (clamped indices)
/// with the cubic_coeff_a kernel, zero outside when exclude_outside (and
/// renormalized); tf_crop_and_resize marks coordinates outside [0, in - 1].
AxisTaps axisTaps(const ResizeModes &m, int64_t in, int64_t out, float scale, float roiStart, float roiEnd) {
  AxisTaps a;
  size_t taps = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  a.idx.assign(taps, std::vector<int64_t>(out));
  a.w.assign(taps, std::vector<double>(out));
  a.outside.assign(out, false);
  auto clampIdx = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    float xr = static_cast<float>(o), lr = static_cast<float>(out), lo = static_cast<float>(in), x;
    if (m.ctm == "asymmetric")
      x = xr / scale;
    else if (m.ctm == "align_corners")
      x = out == 1 ? 0.0f : xr * (lo - 1) / (lr - 1);
    else if (m.ctm == "pytorch_half_pixel")
      x = out > 1 ? (xr + 0.5f) / scale - 0.5f : 0.0f;
    else if (m.ctm == "tf_half_pixel_for_nn")
      x = (xr + 0.5f) / scale;
    else if (m.ctm == "tf_crop_and_resize")
      x = out > 1 ? roiStart * (lo - 1) + (xr * (roiEnd - roiStart) * (lo - 1)) / (lr - 1)
                  : 0.5f * (roiStart + roiEnd) * (lo - 1);
    else if (m.ctm == "half_pixel_symmetric") {
      float adjustment = lr / (scale * lo);
      float center = lo / 2;
      x = center * (1 - adjustment) + (xr + 0.5f) / scale - 0.5f;
    } else // half_pixel
      x = (xr + 0.5f) / scale - 0.5f;
    a.outside[o] = m.ctm == "tf_crop_and_resize" && (x < 0 || x > lo - 1);
    if (m.mode == "nearest") {
      int64_t i;
      if (m.nearest == "floor")
        i = static_cast<int64_t>(std::floor(x));
      else if (m.nearest == "ceil")
        i = static_cast<int64_t>(std::ceil(x));
      else if (m.nearest == "round_prefer_ceil")
        i = static_cast<int64_t>(std::round(x));
      else // round_prefer_floor
        i = x == static_cast<float>(static_cast<int64_t>(x)) + 0.5f ? static_cast<int64_t>(std::floor(x))
                                                                      : static_cast<int64_t>(std::round(x));
      a.idx[0][o] = clampIdx(i);
      a.w[0][o] = 1;
    } else if (m.mode == "linear") {
      x = std::max(0.0f, std::min(x, lo - 1));
      int64_t i1 = std::min<int64_t>(static_cast<int64_t>(x), in - 1), i2 = std::min<int64_t>(i1 + 1, in - 1);
      float d1 = std::abs(x - static_cast<float>(i1)), d2 = std::abs(x - static_cast<float>(i2));
      if (i1 == i2)
        d1 = d2 = 0.5f;
      a.idx[0][o] = i1, a.w[0][o] = d2;
      a.idx[1][o] = i2, a.w[1][o] = d1;
    } else { // cubic
      float fl = std::floor(x), s = std::abs(x - fl), A = m.cubicA;
      float c[4] = {((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A,
                    ((A + 2) * s - (A + 3)) * s * s + 1,
                    ((A + 2) * (1 - s) - (A + 3)) * (1 - s) * (1 - s) + 1,
                    ((A * (2 - s) - 5 * A) * (2 - s) + 8 * A) * (2 - s) - 4 * A};
      int64_t base = static_cast<int64_t>(fl) - 1;
      float sum = 0;
      for (int t = 0; t < 4; ++t) {
        if (m.excludeOutside && (base + t < 0 || base + t >= in))
          c[t] = 0;
        sum += c[t];
      }
      for (int t = 0; t < 4; ++t) {
        a.idx[t][o] = clampIdx(base + t);
        a.w[t][o] = m.excludeOutside ? c[t] / sum : c[t];
      }
    }
  }
  return a;
}

/// Given a node whose results some ops replace, Execute: the node becomes
/// the last op created during this step (which must compute `v`), its
/// Constant operands that nothing else reads erased.
void becomeLast(Node &node, StepContext &ctx, Value *v) {
  std::vector<Value *> old = node.operands();
  node.attributes().clear();
  Node *last = ctx.created.empty() ? nullptr : ctx.created.back();
  if (!last || last->result(0) != v || v->hasUses()) {
    node.setOpType("Identity");
    node.resizeOperands(1);
    node.setOperand(0, v);
  } else {
    std::vector<Value *> ops = last->operands();
    std::vector<Attribute> attrs = std::move(last->attributes());
    node.setOpType(last->opType());
    ctx.created.pop_back();
    last->erase();
    node.resizeOperands(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
      node.setOperand(i, ops[i]);
    node.attributes() = std::move(attrs);
  }
  for (Value *o : old)
    if (Node *def = o ? o->definingNode() : nullptr; def && def->is("Constant") && def->resultsUnused())
      def->erase();
}

/// Whether operand i is absent or known to be empty (an empty constant or
/// a value of static shape [0]); nullopt when that is unknown.
std::optional<bool> emptyOperand(const Node &node, size_t i) {
  if (i >= node.numOperands() || !node.operand(i))
    return true;
  std::optional<Shape> s = knownShape(node.operand(i));
  std::optional<int64_t> n = s ? staticNumElements(*s) : std::nullopt;
  if (!n)
    return std::nullopt;
  return *n == 0;
}

/// The static shape of the node's result 0: its type's, else the type a
/// graph output reading it declares; nullopt when neither is static.
std::optional<Shape> staticResultShape(const Node &node) {
  auto isStatic = [](const std::optional<Shape> &s) {
    return s && std::all_of(s->begin(), s->end(), [](const Dim &d) { return d.isValue(); });
  };
  Value *r = node.result(0);
  if (!r)
    return std::nullopt;
  if (std::optional<Shape> s = knownShape(r); isStatic(s))
    return s;
  for (Use *u : r->uses())
    if (u->isGraphOutput())
      if (const GraphOutput &slot = u->ownerGraph()->outputSlots()[u->index()];
          slot.type && isStatic(slot.type->shape()))
        return slot.type->shape();
  return std::nullopt;
}

/// Resize-11..19 down to an opset without its mode (below 11: Resize-10 is
/// only asymmetric with floor rounding): every mode and coordinate mode as
/// Gathers of constant indices along each resized axis, weighed and summed
/// (a separable filter; exact up to float rounding), for a static input
/// shape and constant scales or sizes (and roi for tf_crop_and_resize):
///
///   Before (opset 13):
///     y = Resize<mode = "linear">(x, , s)       x: float[1, 1, 2, 2], s = [1, 1, 2, 2]
///   After (target=9; per resized axis k, two taps):
///     g0 = Gather<axis = 2>(x, i0)   g1 = Gather<axis = 2>(x, i1)  i0 = [0, 0, 0, 1], w0 = [[1], [.75], [.25], [.5]]
///     h = Add(Mul(g0, w0), Mul(g1, w1))                            ... likewise along axis 3 into y
///
/// Nearest is one Gather per axis (no weight: exact); tf_crop_and_resize's
/// outside positions are Where(mask, extrapolation_value, _). Declines an
/// antialias or keep_aspect_ratio_policy that is not the default, axes, an
/// unknown shape, computed scales/sizes/roi, and linear/cubic on
/// non-float data. With `sizesFromOutput`, computed sizes (scales empty)
/// are taken from the output's static shape, which they must equal.
std::string resizeAsGathers(Node &node, StepContext &ctx, bool sizesFromOutput = false) {
  if (node.attrInt("antialias", 0) != 0)
    return "antialias = 1 has no form before opset 18";
  if (node.hasAttr("axes"))
    return "its axes attribute has no form before opset 18";
  std::optional<Shape> shape = knownShape(node.operand(0));
  if (!shape)
    return "its input's shape is unknown (the interpolation's constant indices need it)";
  std::vector<int64_t> in;
  for (const Dim &d : *shape) {
    if (!d.isValue())
      return "its input's shape is not static (the interpolation's constant indices need it)";
    in.push_back(d.getValue());
  }
  size_t rank = in.size();
  ResizeModes m{node.attrString("mode", "nearest"), node.attrString("coordinate_transformation_mode", "half_pixel"),
                node.attrString("nearest_mode", "round_prefer_floor"), node.attrFloat("cubic_coeff_a", -0.75f),
                node.attrInt("exclude_outside", 0) != 0};
  std::optional<DataType> et = knownElemType(node.operand(0));
  if (!et)
    return "its input's element type is unknown";
  if (m.mode != "nearest" && !floatTensor(*et, {}, {0}))
    return "mode '" + m.mode + "' on " + dataTypeName(*et) + " data has no exact form before opset 11";
  auto operandValues = [&](size_t i) -> std::optional<std::vector<double>> {
    if (emptyOperand(node, i).value_or(false))
      return std::vector<double>{};
    if (std::optional<std::vector<int64_t>> v = i == 3 ? constantInts(node.operand(i)) : std::nullopt)
      return std::vector<double>(v->begin(), v->end());
    return constantDoubles(node.operand(i));
  };
  std::optional<std::vector<double>> scales = operandValues(2), sizes = operandValues(3), roi = operandValues(1);
  if (std::optional<Shape> r = staticResultShape(node);
      !sizes && sizesFromOutput && scales && scales->empty() && r && r->size() == rank) {
    sizes.emplace();
    for (const Dim &d : *r)
      sizes->push_back(static_cast<double>(d.getValue()));
  }
  if (!scales || !sizes)
    return sizesFromOutput ? "its scales or sizes are computed at run time (and its output's shape, which would "
                             "say its sizes, is not static)"
                           : "its scales or sizes are not constants";
  std::vector<float> scale(rank);
  std::vector<int64_t> out(rank);
  if (!sizes->empty()) {
    if (sizes->size() != rank)
      return "its sizes do not have one value per axis";
    if (node.attrString("keep_aspect_ratio_policy", "stretch") != "stretch")
      return "keep_aspect_ratio_policy has no form before opset 18";
    for (size_t k = 0; k < rank; ++k) {
      out[k] = static_cast<int64_t>((*sizes)[k]);
      scale[k] = static_cast<float>(out[k]) / static_cast<float>(in[k]);
    }
  } else if (scales->size() == rank) {
    for (size_t k = 0; k < rank; ++k) {
      scale[k] = static_cast<float>((*scales)[k]);
      out[k] = static_cast<int64_t>(scale[k] * static_cast<float>(in[k]));
    }
  } else {
    return "its scales do not have one value per axis";
  }
  bool crop = m.ctm == "tf_crop_and_resize";
  if (crop && !floatTensor(*et, {}, {0}))
    return "tf_crop_and_resize's extrapolation_value on " + dataTypeName(*et) + " data is not written";
  if (crop && roi->size() != 2 * rank)
    return "its roi is not a constant of two values per axis (tf_crop_and_resize needs it)";
  if (std::optional<Shape> r = knownShape(node.result(0)); r && r->size() == rank)
    for (size_t k = 0; k < rank; ++k)
      if ((*r)[k].isValue() && (*r)[k].getValue() != out[k])
        return "its output's inferred dim " + std::to_string(k) + " differs from the computed " +
               std::to_string(out[k]);
  for (size_t k = 0; k < rank; ++k)
    if (in[k] <= 0 || out[k] <= 0 || !(scale[k] > 0))
      return "its dim " + std::to_string(k) + " is empty or its scale not positive";

  Value *x = node.operand(0);
  Value *extrap = nullptr;
  Node *g = nullptr;
  for (size_t k = 0; k < rank; ++k) {
    AxisTaps a = axisTaps(m, in[k], out[k], scale[k], crop ? static_cast<float>((*roi)[k]) : 0.0f,
                          crop ? static_cast<float>((*roi)[k + rank]) : 1.0f);
    bool identity = in[k] == out[k] && std::none_of(a.outside.begin(), a.outside.end(), [](bool b) { return b; });
    for (int64_t o = 0; identity && o < out[k]; ++o) {
      size_t hit = 0;
      for (size_t t = 0; t < a.idx.size(); ++t)
        if (a.w[t][o] != 0)
          hit += a.idx[t][o] == o && a.w[t][o] == 1 ? 1 : 2;
      identity = hit == 1;
    }
    if (identity)
      continue;
    std::string at = "axis" + std::to_string(k) + "_";
    std::vector<int64_t> wdims(rank - k, 1);
    wdims[0] = out[k];
    Value *sum = nullptr;
    for (size_t t = 0; t < a.idx.size(); ++t) {
      std::string tap = at + "tap" + std::to_string(t);
      Value *idx = ctx.constantBefore(node, nodeBase(node, tap + "_indices"), StepContext::int64s(a.idx[t]));
      g = ctx.nodeBefore(node, "Gather", {x, idx}, nodeBase(node, tap));
      g->setAttr(Attribute::makeInt("axis", static_cast<int64_t>(k)));
      Value *term = g->result(0);
      if (m.mode != "nearest") {
        Value *w = ctx.constantBefore(node, nodeBase(node, tap + "_weights"), floatTensor(*et, wdims, a.w[t]));
        term = ctx.nodeBefore(node, "Mul", {term, w}, nodeBase(node, tap + "_weighed"))->result(0);
      }
      if (sum) {
        term = ctx.nodeBefore(node, "Add", {sum, term}, nodeBase(node, at + "sum"))->result(0);
      }
      sum = term;
    }
    if (std::any_of(a.outside.begin(), a.outside.end(), [](bool b) { return b; })) {
      if (!extrap)
        extrap = ctx.constantBefore(node, nodeBase(node, "extrapolation_value"),
                                    floatTensor(*et, {}, {node.attrFloat("extrapolation_value", 0.0f)}));
      std::vector<uint8_t> mask(a.outside.begin(), a.outside.end());
      Value *cond = ctx.constantBefore(node, nodeBase(node, at + "outside"),
                                       Tensor::fromValues(DataType::Bool, wdims, mask));
      sum = ctx.nodeBefore(node, "Where", {cond, extrap, sum}, nodeBase(node, at + "extrapolated"))->result(0);
    }
    x = sum;
  }
  becomeLast(node, ctx, x);
  return "";
}

/// Resize-11..13 down to an opset without its mode when its scales or sizes
/// (or roi) are computed: the same separable filter as resizeAsGathers,
/// its indices and weights computed at run time in float32, the way ONNX
/// Runtime's kernel does:
///   in_k = Cast(Gather(Shape(x), [k])), out_k = Cast(in_k * scale_k) (or
///   sizes[k], scale_k = sizes[k] / in_k), o = Cast(NonZero(ConstantOfShape(out_k, 1)))
///   (0 .. out_k - 1), c = the original coordinate of o (the mode's formula),
///   nearest: Gather(x, clamp(round(c))) with floor/ceil/ceil(c - .5) for
///   round_prefer_floor/floor(c + .5) for round_prefer_ceil;
///   linear: c clamped to [0, in_k - 1], Gathers at floor(c) and
///   min(floor(c) + 1, in_k - 1) weighed 1 - f and f (f = c - floor(c));
///   cubic: Gathers at floor(c) - 1 .. floor(c) + 2 (clamped) weighed by the
///   cubic_coeff_a kernel of f (exclude_outside: zero outside, renormalized);
///   tf_crop_and_resize: Where(c outside [0, in_k - 1], extrapolation_value, _).
/// Every op exists from opset 9 (NonZero, ConstantOfShape, Where).
std::string resizeComputed(Node &node, StepContext &ctx) {
  std::optional<Shape> shape = knownShape(node.operand(0));
  if (!shape)
    return "its input's rank is unknown (needed to resize axis by axis)";
  auto rank = static_cast<int64_t>(shape->size());
  ResizeModes m{node.attrString("mode", "nearest"), node.attrString("coordinate_transformation_mode", "half_pixel"),
                node.attrString("nearest_mode", "round_prefer_floor"), node.attrFloat("cubic_coeff_a", -0.75f),
                node.attrInt("exclude_outside", 0) != 0};
  std::optional<DataType> et = knownElemType(node.operand(0));
  if (!et)
    return "its input's element type is unknown";
  if (m.mode != "nearest" && !floatTensor(*et, {}, {0}))
    return "mode '" + m.mode + "' on " + dataTypeName(*et) + " data has no exact form before opset 11";
  std::optional<bool> noScales = emptyOperand(node, 2), noSizes = emptyOperand(node, 3);
  if (!noScales || !noSizes || *noScales == *noSizes)
    return "it is not known which of its scales and sizes is given";
  bool crop = m.ctm == "tf_crop_and_resize";
  if (crop && (node.numOperands() < 2 || !node.operand(1)))
    return "tf_crop_and_resize without roi";
  if (crop && !floatTensor(*et, {}, {0}))
    return "tf_crop_and_resize's extrapolation_value on " + dataTypeName(*et) + " data is not written";
  if (m.ctm == "half_pixel_symmetric")
    return "coordinate_transformation_mode 'half_pixel_symmetric' needs opset 19";

  int n = 0;
  auto op = [&](const char *type, const std::vector<Value *> &in) {
    return ctx.nodeBefore(node, type, in, nodeBase(node, "resize" + std::to_string(n++)));
  };
  auto v = [&](const char *type, const std::vector<Value *> &in) { return op(type, in)->result(0); };
  auto f32 = [&](float f) {
    return ctx.constantBefore(node, nodeBase(node, "c"), Tensor::fromValues(DataType::Float, {}, std::vector<float>{f}));
  };
  auto ints = [&](const std::vector<int64_t> &i) { return ctx.constantBefore(node, nodeBase(node, "c"), StepContext::int64s(i)); };
  auto cast = [&](Value *x, DataType t) {
    Node *c = op("Cast", {x});
    c->setAttr(Attribute::makeInt("to", static_cast<int64_t>(t)));
    return c->result(0);
  };
  auto gather = [&](Value *data, Value *idx, int64_t axis) {
    Node *g = op("Gather", {data, idx});
    g->setAttr(Attribute::makeInt("axis", axis));
    return g->result(0);
  };
  auto clamp = [&](Value *x, Value *hi) { return v("Min", {v("Max", {x, f32(0)}), hi}); };

  Value *shapeX = v("Shape", {node.operand(0)});
  Value *roi = crop ? cast(node.operand(1), DataType::Float) : nullptr;
  Value *extrap = nullptr;
  Value *cur = node.operand(0);
  for (int64_t k = 0; k < rank; ++k) {
    Value *lo = cast(gather(shapeX, ints({k}), 0), DataType::Float); // [1]
    Value *outI, *scale;
    if (!*noSizes) {
      outI = gather(node.operand(3), ints({k}), 0);
      scale = v("Div", {cast(outI, DataType::Float), lo});
    } else {
      scale = gather(cast(node.operand(2), DataType::Float), ints({k}), 0);
      outI = cast(v("Mul", {lo, scale}), DataType::Int64);
    }
    Value *lr = cast(outI, DataType::Float);
    Node *ones = op("ConstantOfShape", {outI});
    ones->setAttr(Attribute::makeTensor("value", Tensor::fromValues(DataType::Float, {1}, std::vector<float>{1})));
    Value *o = cast(v("Reshape", {v("NonZero", {ones->result(0)}), ints({-1})}), DataType::Float);
    Value *loM1 = v("Sub", {lo, f32(1)});
    Value *big = v("Greater", {lr, f32(1)});
    Value *halfPixel = v("Div", {v("Add", {o, f32(0.5f)}), scale});
    Value *x;
    if (m.ctm == "asymmetric")
      x = v("Div", {o, scale});
    else if (m.ctm == "tf_half_pixel_for_nn")
      x = halfPixel;
    else if (m.ctm == "pytorch_half_pixel")
      x = v("Where", {big, v("Sub", {halfPixel, f32(0.5f)}), f32(0)});
    else if (m.ctm == "align_corners")
      x = v("Where", {big, v("Div", {v("Mul", {o, loM1}), v("Sub", {lr, f32(1)})}), f32(0)});
    else if (crop) {
      Value *rs = gather(roi, ints({k}), 0), *re = gather(roi, ints({k + rank}), 0);
      Value *span = v("Mul", {v("Mul", {o, v("Sub", {re, rs})}), loM1});
      Value *many = v("Add", {v("Mul", {rs, loM1}), v("Div", {span, v("Sub", {lr, f32(1)})})});
      Value *one = v("Mul", {v("Mul", {f32(0.5f), v("Add", {rs, re})}), loM1});
      x = v("Where", {big, many, one});
    } else
      x = v("Sub", {halfPixel, f32(0.5f)});
    // Weights [out_k] as [out_k, 1, ..., 1] in the data's type.
    std::vector<int64_t> wshape(static_cast<size_t>(rank - k), 1);
    wshape[0] = -1;
    auto weight = [&](Value *w) {
      Value *r = v("Reshape", {w, ints(wshape)});
      return *et == DataType::Float ? r : cast(r, *et);
    };
    auto index = [&](Value *f) { return cast(clamp(f, loM1), DataType::Int64); };
    Value *val;
    if (m.mode == "nearest") {
      Value *r = m.nearest == "floor"               ? v("Floor", {x})
                 : m.nearest == "ceil"              ? v("Ceil", {x})
                 : m.nearest == "round_prefer_ceil" ? v("Floor", {v("Add", {x, f32(0.5f)})})
                                                    : v("Ceil", {v("Sub", {x, f32(0.5f)})});
      val = gather(cur, index(r), k);
    } else if (m.mode == "linear") {
      Value *xc = clamp(x, loM1);
      Value *fl = v("Floor", {xc});
      Value *w2 = v("Sub", {xc, fl});
      Value *w1 = v("Sub", {f32(1), w2});
      val = v("Add", {v("Mul", {gather(cur, index(fl), k), weight(w1)}),
                      v("Mul", {gather(cur, index(v("Add", {fl, f32(1)})), k), weight(w2)})});
    } else { // cubic
      float A = m.cubicA;
      Value *fl = v("Floor", {x});
      Value *s = v("Sub", {x, fl});
      auto outer = [&](Value *t) { // ((A t - 5A) t + 8A) t - 4A
        Value *p = v("Sub", {v("Mul", {f32(A), t}), f32(5 * A)});
        p = v("Add", {v("Mul", {p, t}), f32(8 * A)});
        return v("Sub", {v("Mul", {p, t}), f32(4 * A)});
      };
      auto inner = [&](Value *t) { // ((A + 2) t - (A + 3)) t t + 1
        Value *p = v("Sub", {v("Mul", {f32(A + 2), t}), f32(A + 3)});
        return v("Add", {v("Mul", {v("Mul", {p, t}), t}), f32(1)});
      };
      std::vector<Value *> c = {outer(v("Add", {s, f32(1)})), inner(s), inner(v("Sub", {f32(1), s})),
                                outer(v("Sub", {f32(2), s}))};
      std::vector<Value *> at(4);
      for (int t = 0; t < 4; ++t)
        at[t] = v("Add", {fl, f32(static_cast<float>(t - 1))});
      if (m.excludeOutside) {
        Value *sum = nullptr;
        for (int t = 0; t < 4; ++t) {
          Value *outside = v("Or", {v("Less", {at[t], f32(0)}), v("Greater", {at[t], loM1})});
          c[t] = v("Where", {outside, f32(0), c[t]});
          sum = sum ? v("Add", {sum, c[t]}) : c[t];
        }
        for (int t = 0; t < 4; ++t)
          c[t] = v("Div", {c[t], sum});
      }
      val = nullptr;
      for (int t = 0; t < 4; ++t) {
        Value *term = v("Mul", {gather(cur, index(at[t]), k), weight(c[t])});
        val = val ? v("Add", {val, term}) : term;
      }
    }
    if (crop) {
      if (!extrap)
        extrap = ctx.constantBefore(node, nodeBase(node, "extrapolation_value"),
                                    floatTensor(*et, {}, {node.attrFloat("extrapolation_value", 0.0f)}));
      Value *outside = v("Or", {v("Less", {x, f32(0)}), v("Greater", {x, loM1})});
      val = v("Where", {v("Reshape", {outside, ints(wshape)}), extrap, val});
    }
    cur = val;
  }
  becomeLast(node, ctx, cur);
  return "";
}

/// Resize-11 -> Resize-10: the same node when Resize-10 says it (below),
/// else resizeAsGathers.
std::string resize11To10(Node &node, StepContext &ctx);

std::string resize11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down)
    return resize11To10(node, ctx);
  {
    Value *scales = node.operand(1);
    Value *roi = ctx.constantBefore(node, nodeBase(node, "roi"), emptyFloats());
    node.resizeOperands(3);
    node.setOperand(1, roi);
    node.setOperand(2, scales);
    node.setAttr(Attribute::makeString("coordinate_transformation_mode", "asymmetric"));
    if (node.attrString("mode", "nearest") == "nearest")
      node.setAttr(Attribute::makeString("nearest_mode", "floor"));
    return "";
  }
  return "";
}

/// Resize-11 -> Resize-10 keeping the node: Resize-10's own modes
/// (asymmetric, floor, scales). Result: "" or why not (nothing changed).
std::string resizeAsResize10(Node &node) {
  std::string mode = node.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    return "mode '" + mode + "' needs opset 11";
  if (node.attrString("coordinate_transformation_mode", "half_pixel") != "asymmetric")
    return "coordinate_transformation_mode '" + node.attrString("coordinate_transformation_mode", "half_pixel") +
           "' needs opset 11 (Resize-10 is 'asymmetric')";
  if (mode == "nearest" && node.attrString("nearest_mode", "round_prefer_floor") != "floor")
    return "nearest_mode '" + node.attrString("nearest_mode", "round_prefer_floor") +
           "' needs opset 11 (Resize-10 rounds down)";
  if (node.attrInt("exclude_outside", 0) != 0)
    return "exclude_outside needs opset 11";
  if (node.operand(3))
    return "it is given sizes, which need opset 11";
  Value *scales = node.operand(2);
  if (!scales)
    return "it has no scales";
  for (const char *a : {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                        "extrapolation_value"})
    node.removeAttr(a);
  node.resizeOperands(3);
  node.setOperand(2, nullptr);
  Value *roi = node.operand(1);
  node.setOperand(1, scales);
  node.resizeOperands(2);
  if (Node *def = roi ? roi->definingNode() : nullptr; def && def->is("Constant") && def->resultsUnused())
    def->erase();
  return "";
}

std::string resize11To10(Node &node, StepContext &ctx) {
  std::string why = resizeAsResize10(node);
  if (why.empty())
    return "";
  std::string gathers = resizeAsGathers(node, ctx);
  if (gathers.empty())
    return "";
  std::string computed = resizeComputed(node, ctx);
  return computed.empty() ? "" : why + "; " + computed;
}

/// Resize-11 with tf_half_pixel_for_nn -> Gathers (from 13, which dropped
/// that coordinate mode): resizeAsGathers' constant indices, for a static
/// input shape and constant scales or sizes. Nearest, the mode it is made
/// for, is one Gather per resized axis, at x_original = (i + 0.5) / scale
/// rounded by nearest_mode and clamped to [0, in - 1]:
///   Before (opset 11, x: float[1, 1, 4, 4], sizes [1, 1, 3, 2]):
///     y = Resize<coordinate_transformation_mode = "tf_half_pixel_for_nn">(x, roi, , sizes)
///   After (target=13):
///     h = Gather<axis = 2>(x, [1, 2, 3])     (i + .5) / .75 = .67, 2, 3.33
///     y = Gather<axis = 3>(h, [1, 3])        (i + .5) / .5 = 1, 3
/// Sizes computed at run time are the output's static dims (sizes and
/// output must agree). Other modes are their weighed Gathers (as below 11).
std::string tfHalfPixelAsGathers(Node &node, StepContext &ctx) {
  std::optional<Shape> shape = knownShape(node.operand(0));
  bool dynamic = !shape || std::any_of(shape->begin(), shape->end(), [](const Dim &d) { return !d.isValue(); });
  if (dynamic)
    return "coordinate_transformation_mode 'tf_half_pixel_for_nn' has no form from opset 13, and its input's shape "
           "is not static (its Gathers' constant indices need it)";
  if (std::string why = resizeAsGathers(node, ctx, /*sizesFromOutput=*/true); !why.empty())
    return "coordinate_transformation_mode 'tf_half_pixel_for_nn' has no form from opset 13, and its Gather form "
           "does not apply: " + why;
  return "";
}

std::string resize13(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    // Resize-13 dropped this coordinate mode (x_in = (x_out + 0.5) / scale).
    if (node.attrString("coordinate_transformation_mode", "half_pixel") == "tf_half_pixel_for_nn")
      return tfHalfPixelAsGathers(node, ctx);
  } else {
    if (node.numOperands() < 3)
      node.resizeOperands(3);
    if (!node.operand(1))
      node.setOperand(1, ctx.constantBefore(node, nodeBase(node, "roi"), emptyFloats()));
    if (!node.operand(2))
      node.setOperand(2, ctx.constantBefore(node, nodeBase(node, "scales"), emptyFloats()));
  }
  return "";
}

std::string resize19(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down &&
      node.attrString("coordinate_transformation_mode", "half_pixel") == "half_pixel_symmetric")
    return "coordinate_transformation_mode 'half_pixel_symmetric' needs opset 19";
  return "";
}

std::string bump(Node &, StepContext &) { return ""; }

/// Resize-10 -> Upsample-9 (before 10): the same inputs and modes.
std::string resizeToUpsample(Node &node, StepContext &) {
  node.setOpType("Upsample");
  return "";
}

} // namespace

void registerResize(AdapterRegistry &r) {
  r.addBoth("Upsample", 9, upsample9);
  r.add("Upsample", 10, Direction::Up, upsampleToResize);
  r.add("Resize", 10, Direction::Down, resizeToUpsample);
  r.addBoth("Resize", 11, resize11);
  r.addBoth("Resize", 13, resize13);
  r.addBoth("Resize", 18, bump);
  r.addBoth("Resize", 19, resize19);
}

} // namespace opset
} // namespace onnxslim
