//===- transforms/opset/ExpandElementwise.cpp - Activations and quantization written out ===//
//
// Element-wise ops, quantization and the image-sampling ops newer than the
// target opset, written out in the ops of the opset just below them (their
// ONNX function bodies where the spec has one, else an equally exact form);
// the driver walks what they write on to the target (see Adapter.h). Every
// expansion is registered as (op, first version, Down):
//
//   op (first version)          written as (at the opset below)
//   Mish (18)                   x * Tanh(Softplus(x))
//   Swish (24)                  x * Sigmoid(alpha * x)
//   Shrink (9)                  (x - Clip(x, -lambd, lambd)) + (lambd - bias)
//                               * (Cast(x > lambd) - Cast(x < -lambd))
//   MeanVarianceNormalization   its function body (ReduceMean, Pow, Sqrt,
//     (9)                       epsilon 1e-9)
//   Sign (9)                    Cast(x > 0) - Cast(x < 0) in double
//   Sinh, Cosh (9)              (Exp(x) -/+ Exp(-x)) / 2
//   Asinh (9)                   sign(x) * Log(|x| + Sqrt(x^2 + 1))
//   Acosh (9)                   Log(x + Sqrt(x^2 - 1))
//   Atanh (9)                   Log((1 + x) / (1 - x)) / 2
//   IsNaN (9)                   Not(Or(x < 1, x > 0))
//   DequantizeLinear (10)       (Cast(x) - Cast(zero_point)) * scale
//   QuantizeLinear (10)         Cast(Clip(round_half_even(x / scale) +
//                               zero_point, qmin, qmax))
//   Quantize/DequantizeLinear   the same with the scale and zero point
//     per axis (13)             Unsqueezed along axis (replacing, below 13,
//                               VersionBumps.cpp's step, which keeps only
//                               a per-tensor scale)
//   GridSample (16)             4-D, static shapes: Gather on the flattened
//                               input at computed indices, weights from the
//                               grid (bilinear, nearest, bicubic; zeros,
//                               border, reflection; align_corners)
//   CenterCropPad (18)          Slice then Pad (constant shape, static dims)
//   AffineGrid (20)             MatMul of a constant base grid with theta
//                               (constant size; 2-D and 3-D)
//   Expand (8)                  Reshape + Tile (static shapes)
//   ConstantOfShape (9),        a Constant (constant shape / static input
//     EyeLike (9)               shape)
// Declined with their reason: BitwiseAnd/Or/Xor/Not-18, Col2Im-18,
// DeformConv-19, ImageDecoder-20, RegexFullMatch-20, StringConcat-20,
// StringSplit-20, TensorScatter-24, Erf-9, Where-9, OneHot-9, NonZero-9,
// Compress-9, MaxUnpool-9, Scatter-9, TfIdfVectorizer-9, and the forms
// above whose conditions do not hold.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Body.h"

#include "runtime/Float16.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace onnxslim {
namespace opset {

namespace {


std::string typeName(std::optional<DataType> t) { return t ? dataTypeName(*t) : std::string("unknown"); }

/// The static dims of v, or nullopt when a dim (or the rank) is unknown.
std::optional<std::vector<int64_t>> staticDims(const Value *v) {
  std::optional<Shape> s = v ? knownShape(v) : std::nullopt;
  if (!s)
    return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim &d : *s) {
    if (!d.isValue())
      return std::nullopt;
    out.push_back(d.getValue());
  }
  return out;
}

/// The element type of operand 0 when it is float16, float or double (the
/// types of the float element-wise ops at every opset), else nullopt.
std::optional<DataType> floatInput(const Node &node) {
  std::optional<DataType> t = node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt;
  if (t && (*t == DataType::Float || *t == DataType::Double || *t == DataType::Float16))
    return t;
  return std::nullopt;
}
std::string notFloat(const Node &node) {
  return "its input's element type is " + typeName(node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt) +
         " (float16, float or double expected)";
}

//===----------------------------------------------------------------------===//
// Activations and element-wise functions
//===----------------------------------------------------------------------===//

/// Mish-18 -> its body (before 18).
///     Before: y = Mish(x)
///     After:  y = Mul(x, Tanh(Softplus(x)))
std::string mishExpanded(Node &node, StepContext &ctx) {
  if (!floatInput(node))
    return notFloat(node);
  Body b(node, ctx);
  Value *x = node.operand(0);
  Value *t = b.op("Tanh", {b.op("Softplus", {x}, "softplus")}, "tanh");
  b.finish("Mul", {x, t});
  return "";
}

/// Swish-24 -> its body (before 24); alpha = 1 (the default) skips the Mul.
///     Before: y = Swish<alpha = 0.5>(x)
///     After:  y = Mul(x, Sigmoid(Mul(Constant<0.5>, x)))
std::string swishExpanded(Node &node, StepContext &ctx) {
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node);
  Body b(node, ctx);
  Value *x = node.operand(0);
  float alpha = node.attrFloat("alpha", 1.0f);
  Value *in = alpha == 1.0f ? x : b.op("Mul", {b.scalar(*t, alpha, "alpha"), x}, "scaled");
  b.finish("Mul", {x, b.op("Sigmoid", {in}, "sigmoid")});
  return "";
}

/// Shrink-9 -> Clip and comparisons (before 9; Where is 9 too):
///     Before: y = Shrink<lambd = l, bias = b>(x)
///     After:  d = Sub(x, Clip<min = -l, max = l>(x))        x + l, 0 or x - l
///             s = Sub(Cast(Greater(x, l)), Cast(Less(x, -l)))
///             y = Add(d, Mul(s, l - b))                     x + b, 0 or x - b
/// (every term finite where x is, so infinities stay; a NaN input gives NaN
/// where the spec's selects give 0.) Float types only (Clip-6's).
std::string shrinkExpanded(Node &node, StepContext &ctx) {
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node) + "; Clip before 11 takes float types only";
  Body b(node, ctx);
  Value *x = node.operand(0);
  float l = node.attrFloat("lambd", 0.5f), bias = node.attrFloat("bias", 0.0f);
  Value *c = b.op("Clip", {x}, "clipped", {aFloat("min", -l), aFloat("max", l)});
  Value *d = b.op("Sub", {x, c}, "outside");
  if (l == bias) { // soft shrink: nothing to add
    b.finish("Identity", {d});
    return "";
  }
  Value *above = b.op("Cast", {b.op("Greater", {x, b.scalar(*t, l, "lambd")}, "above")}, "above_f", {castTo(*t)});
  Value *below = b.op("Cast", {b.op("Less", {x, b.scalar(*t, -l, "neg_lambd")}, "below")}, "below_f", {castTo(*t)});
  Value *s = b.op("Sub", {above, below}, "side");
  Value *shift = b.op("Mul", {s, b.scalar(*t, static_cast<double>(l) - static_cast<double>(bias), "shift")}, "shift");
  b.finish("Add", {d, shift});
  return "";
}

/// MeanVarianceNormalization-9 -> its function body (before 9):
///     Before: y = MeanVarianceNormalization<axes = [0, 2, 3]>(x)
///     After:  m = ReduceMean<axes>(x)
///             v = Sub(ReduceMean<axes>(Pow(x, 2)), Pow(m, 2))
///             y = Div(Sub(x, m), Add(Sqrt(v), 1e-9))
std::string mvnExpanded(Node &node, StepContext &ctx) {
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node);
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::vector<int64_t> axes = node.attrInts("axes", {0, 2, 3});
  Value *two = b.scalar(*t, 2.0, "exponent");
  Value *m = b.axesOp("ReduceMean", x, axes, "mean");
  Value *m2 = b.op("Pow", {m, two}, "mean_squared");
  Value *x2 = b.op("Pow", {x, two}, "squared");
  Value *e2 = b.axesOp("ReduceMean", x2, axes, "mean_of_squares");
  Value *var = b.op("Sub", {e2, m2}, "variance");
  Value *sd = b.op("Add", {b.op("Sqrt", {var}, "std"), b.scalar(*t, static_cast<double>(1e-9f), "epsilon")}, "std_eps");
  b.finish("Div", {b.op("Sub", {x, m}, "centered"), sd});
  return "";
}

/// Sign-9 -> comparisons (before 9; Greater and Less take float types
/// only there, so integers are compared in double, which keeps every
/// integer's sign):
///     Before: y = Sign(x: int32)
///     After:  d = Cast<to = double>(x)
///             y = Cast<to = int32>(Sub(Cast(Greater(d, 0)), Cast(Less(d, 0))))
std::string signExpanded(Node &node, StepContext &ctx) {
  Value *x = node.operand(0);
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  if (!t || !typedTensor(*t, {}, {0}) || *t == DataType::Bool || *t == DataType::BFloat16)
    return "its input's element type is " + typeName(t) + " (a numeric type expected)";
  Body b(node, ctx);
  bool direct = *t == DataType::Float || *t == DataType::Double || *t == DataType::Float16;
  DataType w = direct ? *t : DataType::Double;
  Value *d = direct ? x : b.op("Cast", {x}, "wide", {castTo(w)});
  Value *zero = b.scalar(w, 0, "zero");
  Value *pos = b.op("Cast", {b.op("Greater", {d, zero}, "positive")}, "positive_n", {castTo(w)});
  Value *neg = b.op("Cast", {b.op("Less", {d, zero}, "negative")}, "negative_n", {castTo(w)});
  if (direct) {
    b.finish("Sub", {pos, neg});
    return "";
  }
  b.finish("Cast", {b.op("Sub", {pos, neg}, "sign")}, {castTo(*t)});
  return "";
}

/// Sinh-9, Cosh-9 -> (Exp(x) -/+ Exp(Neg(x))) / 2 (before 9).
std::string sinhCoshExpanded(Node &node, StepContext &ctx) {
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node);
  Body b(node, ctx);
  Value *x = node.operand(0);
  bool sinh = node.is("Sinh");
  Value *e = b.op("Exp", {x}, "exp");
  Value *en = b.op("Exp", {b.op("Neg", {x}, "neg")}, "exp_neg");
  Value *s = b.op(sinh ? "Sub" : "Add", {e, en}, "twice");
  b.finish("Div", {s, b.scalar(*t, 2, "two")});
  return "";
}

/// Asinh-9 -> sign(x) * Log(|x| + Sqrt(|x|^2 + 1)) (before 9; odd, so
/// computed on |x| without the cancellation of negative x):
///     After: a = Abs(x)
///            r = Log(Add(a, Sqrt(Add(Mul(a, a), 1))))
///            y = Mul(r, Sub(Cast(Greater(x, 0)), Cast(Less(x, 0))))
/// Acosh-9 -> Log(x + Sqrt(x^2 - 1)); Atanh-9 -> Log((1 + x) / (1 - x)) / 2.
std::string inverseHyperbolicExpanded(Node &node, StepContext &ctx) {
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node);
  Body b(node, ctx);
  Value *x = node.operand(0);
  Value *one = b.scalar(*t, 1, "one");
  if (node.is("Asinh")) {
    Value *a = b.op("Abs", {x}, "abs");
    Value *root = b.op("Sqrt", {b.op("Add", {b.op("Mul", {a, a}, "square"), one}, "square_1")}, "root");
    Value *r = b.op("Log", {b.op("Add", {a, root}, "sum")}, "log");
    Value *zero = b.scalar(*t, 0, "zero");
    Value *pos = b.op("Cast", {b.op("Greater", {x, zero}, "positive")}, "positive_n", {castTo(*t)});
    Value *neg = b.op("Cast", {b.op("Less", {x, zero}, "negative")}, "negative_n", {castTo(*t)});
    b.finish("Mul", {r, b.op("Sub", {pos, neg}, "sign")});
  } else if (node.is("Acosh")) {
    Value *root = b.op("Sqrt", {b.op("Sub", {b.op("Mul", {x, x}, "square"), one}, "square_1")}, "root");
    b.finish("Log", {b.op("Add", {x, root}, "sum")});
  } else {
    Value *q = b.op("Div", {b.op("Add", {one, x}, "one_plus"), b.op("Sub", {one, x}, "one_minus")}, "ratio");
    b.finish("Div", {b.op("Log", {q}, "log"), b.scalar(*t, 2, "two")});
  }
  return "";
}

/// IsNaN-9 -> Not(Or(Less(x, 1), Greater(x, 0))) (before 9; Equal takes no
/// float there): every number, infinities included, is below 1 or above 0;
/// only NaN is neither.
std::string isNaNExpanded(Node &node, StepContext &ctx) {
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node);
  Body b(node, ctx);
  Value *x = node.operand(0);
  Value *lt = b.op("Less", {x, b.scalar(*t, 1, "one")}, "below_one");
  Value *gt = b.op("Greater", {x, b.scalar(*t, 0, "zero")}, "above_zero");
  b.finish("Not", {b.op("Or", {lt, gt}, "ordered")});
  return "";
}

//===----------------------------------------------------------------------===//
// Quantization (opset 10; per-axis scales from 13)
//===----------------------------------------------------------------------===//

/// Whether `v` is known to hold one value (a scalar or one element): the
/// per-tensor form of a scale or zero point.
bool perTensor(const Value *v) {
  std::optional<std::vector<int64_t>> d = staticDims(v);
  if (!d)
    return false;
  int64_t n = 1;
  for (int64_t x : *d)
    n *= x;
  return n == 1;
}

/// How a Quantize/DequantizeLinear's scale and zero point broadcast over
/// its input: per tensor (one value), or per axis (13: 1-D along `axis`),
/// written as Unsqueeze<axes = [1 .. trailing]> to [C, 1, ..., 1] (the
/// input's dims after `axis`).
struct QuantLayout {
  bool perAxis = false;
  int64_t trailing = 0;
};

/// Given a Q/DQ node and whether its version takes a per-axis scale,
/// Execute: fills `layout`, Result: "" or why the scale and zero point
/// have no such form.
std::string quantLayout(const Node &node, bool axisAllowed, QuantLayout &layout) {
  Value *scale = node.operand(1);
  Value *zp = node.numOperands() > 2 ? node.operand(2) : nullptr;
  if (scale && perTensor(scale) && (!zp || perTensor(zp)))
    return "";
  if (!axisAllowed || !scale)
    return "its scale or zero point is not known to be one value";
  std::optional<Shape> ss = knownShape(scale);
  std::optional<Shape> zs = zp ? knownShape(zp) : std::nullopt;
  if (!ss || ss->size() != 1 || (zp && (!zs || zs->size() > 1)))
    return "its scale or zero point is neither known to be one value nor 1-D";
  std::optional<Shape> xs = knownShape(node.operand(0));
  if (!xs)
    return "its input's rank is unknown (a per-axis scale is broadcast along its axis)";
  auto rank = static_cast<int64_t>(xs->size());
  int64_t axis = node.attrInt("axis", 1);
  if (axis < -rank || axis >= rank)
    return "its axis " + std::to_string(axis) + " is outside its input's rank " + std::to_string(rank);
  layout.perAxis = true;
  layout.trailing = rank - 1 - (axis < 0 ? axis + rank : axis);
  return "";
}

/// Given a scale or zero point, Result: it broadcast along the layout's
/// axis (itself when per tensor, one value, or the axis is the last).
Value *alongAxis(Body &b, Value *v, const QuantLayout &layout, std::string_view what) {
  if (!layout.perAxis || layout.trailing == 0 || perTensor(v))
    return v;
  std::vector<int64_t> axes;
  for (int64_t k = 1; k <= layout.trailing; ++k)
    axes.push_back(k);
  return b.axesOp("Unsqueeze", v, axes, what);
}

/// DequantizeLinear -> arithmetic in float, per tensor (DequantizeLinear-10
/// before 10) or per axis (DequantizeLinear-13 before 13):
///     Before: y = DequantizeLinear<axis = 0>(x: uint8[C, H], scale: [C], zp: uint8[C])
///     After:  y = Mul(Sub(Cast<to = float>(x), Cast<to = float>(Unsqueeze<axes = [1]>(zp))),
///                     Unsqueeze<axes = [1]>(scale))
/// (exact as ONNX Runtime computes it: the difference of two 8-bit values
/// is exact in float; int32 x, whose zero point is 0, is cast alone.)
std::string dequantizeBody(Node &node, StepContext &ctx, bool axisAllowed) {
  Value *x = node.operand(0), *scale = node.operand(1);
  Value *zp = node.numOperands() > 2 ? node.operand(2) : nullptr;
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  if (!t || (*t != DataType::UInt8 && *t != DataType::Int8 && *t != DataType::Int32))
    return "its input's element type is " + typeName(t) + " (uint8, int8 or int32 expected)";
  QuantLayout layout;
  if (std::string why = quantLayout(node, axisAllowed, layout); !why.empty())
    return why;
  Body b(node, ctx);
  Value *xf = b.op("Cast", {x}, "x_float", {castTo(DataType::Float)});
  if (zp && *t != DataType::Int32)
    xf = b.op("Sub", {xf, b.op("Cast", {alongAxis(b, zp, layout, "zero_point_along")}, "zero_point_float",
                              {castTo(DataType::Float)})},
              "centered");
  b.finish("Mul", {xf, alongAxis(b, scale, layout, "scale_along")});
  return "";
}

/// QuantizeLinear -> arithmetic in float, per tensor (QuantizeLinear-10
/// before 10) or per axis (QuantizeLinear-13 before 13), as ONNX Runtime
/// computes it: x / scale rounded half to even (Round from 11; before,
/// Floor and comparisons), plus the zero point, saturated to the output
/// type's range, cast:
///     Before: y = QuantizeLinear(x, scale, zp: uint8)
///     After:  q = Div(x, scale)
///             r = q rounded half to even (Round-11, or roundBody)
///             y = Cast<to = uint8>(Clip<min = 0, max = 255>(Add(r, Cast<to = float>(zp))))
/// A per-axis scale and zero point are Unsqueezed to broadcast along axis
/// (alongAxis); Clip takes its bounds as inputs from 11.
std::string quantizeBody(Node &node, StepContext &ctx, bool axisAllowed) {
  Value *x = node.operand(0), *scale = node.operand(1);
  Value *zp = node.numOperands() > 2 ? node.operand(2) : nullptr;
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  if (!t || (*t != DataType::Float && *t != DataType::Int32))
    return "its input's element type is " + typeName(t) + " (float or int32 expected)";
  QuantLayout layout;
  if (std::string why = quantLayout(node, axisAllowed, layout); !why.empty())
    return why;
  DataType out = DataType::UInt8;
  if (zp) {
    std::optional<DataType> zt = knownElemType(zp);
    if (!zt || (*zt != DataType::UInt8 && *zt != DataType::Int8))
      return "its zero point's element type is " + typeName(zt) + " (uint8 or int8 expected)";
    out = *zt;
  }
  // The opset the written nodes land in (Adapter.h): the one below the
  // node's version.
  int64_t landed = ctx.from - 1;
  Body b(node, ctx);
  DataType f32 = DataType::Float;
  Value *xf = *t == f32 ? x : b.op("Cast", {x}, "x_float", {castTo(f32)});
  Value *q = b.op("Div", {xf, alongAxis(b, scale, layout, "scale_along")}, "scaled");
  Value *r = landed >= 11 ? b.op("Round", {q}, "rounded_even") : roundBody(b, q, f32, /*finish=*/false);
  if (zp)
    r = b.op("Add",
             {r, b.op("Cast", {alongAxis(b, zp, layout, "zero_point_along")}, "zero_point_float", {castTo(f32)})},
             "shifted");
  bool u8 = out == DataType::UInt8;
  float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f;
  Value *c = landed >= 11 ? b.op("Clip", {r, b.scalar(f32, lo, "qmin"), b.scalar(f32, hi, "qmax")}, "saturated")
                          : b.op("Clip", {r}, "saturated", {aFloat("min", lo), aFloat("max", hi)});
  b.finish("Cast", {c}, {castTo(out)});
  return "";
}

std::string dequantizeExpanded(Node &node, StepContext &ctx) { return dequantizeBody(node, ctx, false); }
std::string quantizeExpanded(Node &node, StepContext &ctx) { return quantizeBody(node, ctx, false); }

/// Quantize/DequantizeLinear-13 -> 10: a scale known to be one value keeps
/// the op, its axis dropped (what VersionBumps.cpp's scalarScale does; this
/// adapter is registered after it and so replaces its Down step); a
/// per-axis one, which opset 10 lacks, is written out as above:
///     Before: y = QuantizeLinear<axis = 1>(x: float[N, C, H], s: [C], zp: int8[C])
///     After:  y = Cast<to = int8>(Clip(Add(Round(Div(x, Unsqueeze<axes = [1]>(s))),
///                                          Cast<to = float>(Unsqueeze<axes = [1]>(zp))), -128, 127))
std::string perAxisQuant13(Node &node, StepContext &ctx) {
  std::optional<Shape> s = node.operand(1) ? knownShape(node.operand(1)) : std::nullopt;
  if (!s)
    return "the rank of its scale is unknown (a per-axis scale needs opset 13)";
  std::optional<int64_t> n = staticNumElements(*s);
  if (s->empty() || (n && *n == 1)) {
    node.removeAttr("axis");
    return "";
  }
  std::string why = node.is("QuantizeLinear") ? quantizeBody(node, ctx, true) : dequantizeBody(node, ctx, true);
  return why.empty() ? "" : "its scale is per-axis (opset 13) and its arithmetic form does not apply: " + why;
}

//===----------------------------------------------------------------------===//
// GridSample (opset 16)
//===----------------------------------------------------------------------===//

/// The sampling positions along one spatial axis of size `size` at the taps
/// `offsets` from Floor(p) (or from p itself, already whole, for nearest):
/// each tap's index after padding (float, whole), and for zeros padding
/// whether the unpadded index is inside.
struct Taps {
  std::vector<Value *> index;
  std::vector<Value *> inside;
};

Taps padTaps(Body &b, DataType t, Value *base, int64_t size, const std::vector<int64_t> &offsets,
             const std::string &padding, bool align, const std::string &axis) {
  Taps out;
  for (int64_t o : offsets) {
    std::string at = axis + std::to_string(o + 1);
    Value *i = o == 0 ? base : b.op("Add", {base, b.scalar(t, static_cast<double>(o), at + "_off")}, at);
    Value *hi = b.scalar(t, static_cast<double>(size - 1), at + "_last");
    Value *zero = b.scalar(t, 0, at + "_zero");
    Value *clamped = b.op("Max", {b.op("Min", {i, hi}, at + "_min"), zero}, at + "_clamped");
    if (padding == "zeros") {
      Value *ge = b.op("Greater", {i, b.scalar(t, -1, at + "_m1")}, at + "_ge0");
      Value *lt = b.op("Less", {i, b.scalar(t, static_cast<double>(size), at + "_size")}, at + "_lt");
      out.inside.push_back(b.op("And", {ge, lt}, at + "_inside"));
      out.index.push_back(clamped);
    } else if (padding == "border" || size == 1) {
      out.index.push_back(clamped);
    } else { // reflection of a whole index: period 2W (edges repeated) or 2(W - 1)
      double period = align ? 2.0 * static_cast<double>(size - 1) : 2.0 * static_cast<double>(size);
      Value *p = b.scalar(t, period, at + "_period");
      Value *m = b.op("Sub", {i, b.op("Mul", {p, b.op("Floor", {b.op("Div", {i, p}, at + "_q")}, at + "_qf")}, at + "_qp")},
                      at + "_mod");
      Value *top = b.scalar(t, align ? period : period - 1, at + "_top");
      out.index.push_back(b.op("Min", {m, b.op("Sub", {top, m}, at + "_mirror")}, at + "_reflected"));
    }
  }
  return out;
}

/// GridSample-16 -> Gather on the flattened input (before 16), as ONNX
/// Runtime computes it: the grid's x and y denormalized (align_corners:
/// (g + 1) / 2 * (W - 1), else ((g + 1) * W - 1) / 2); nearest takes
/// Round(x) (half to even), bilinear the 2x2 taps from Floor(x) weighted
/// dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22), bicubic
/// the 4x4 taps from Floor(x) - 1 with the cubic coefficients (A = -0.75);
/// each tap's index padded as the reference pads pixels: zeros (Where of
/// the inside mask, index clamped for the Gather), border (clamped),
/// reflection (reflected whole index). Needs static input and grid shapes
/// (the offsets of each batch and channel are a constant) and one float
/// type for both.
///     Before: y = GridSample<mode = "bilinear">(x[N, C, H, W], grid[N, Ho, Wo, 2])
///     After:  g = Transpose<perm = [0, 3, 1, 2]>(grid); gx, gy = Slice(g, ...)
///             px = Div(Sub(Mul(Add(gx, 1), W), 1), 2), ...
///             i11 = Add(Cast<to = int64>(Add(Mul(y1, W), x1)), offsets[N, C, 1, 1])
///             p11 = Gather(Reshape(x, [-1]), i11), ...
///             y = Add(Mul(dy2, Add(Mul(dx2, p11), Mul(dx1, p12))), Mul(dy1, ...))
std::string gridSampleExpanded(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *grid = node.operand(1);
  std::optional<std::vector<int64_t>> xd = staticDims(x), gd = staticDims(grid);
  if (!xd || !gd)
    return "its input or grid shape is not static (the gather offsets are a constant of them)";
  if (xd->size() != 4 || gd->size() != 4 || (*gd)[3] != 2 || (*gd)[0] != (*xd)[0])
    return "its input is not 4-D with a matching [N, Ho, Wo, 2] grid";
  std::optional<DataType> t = knownElemType(x), gt = knownElemType(grid);
  if (!t || !gt || *t != *gt || (*t != DataType::Float && *t != DataType::Double))
    return "its input and grid types are " + typeName(t) + " and " + typeName(gt) +
           " (one type, float or double, expected: the weights multiply the input)";
  std::string mode = node.attrString("mode", "bilinear"), padding = node.attrString("padding_mode", "zeros");
  bool align = node.attrInt("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return "its mode '" + mode + "' is not bilinear, nearest or bicubic";
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return "its padding_mode '" + padding + "' is not zeros, border or reflection";
  int64_t n = (*xd)[0], c = (*xd)[1], h = (*xd)[2], w = (*xd)[3];
  if (n * c * h * w <= 0 || (*gd)[1] * (*gd)[2] <= 0)
    return "its input or grid is empty";
  if (n * c > (1 << 20))
    return "its batch times channels exceeds 2^20 (the offsets constant would be too large)";
  Body b(node, ctx);
  Value *one = b.scalar(*t, 1, "one"), *two = b.scalar(*t, 2, "two");
  Value *g = b.op("Transpose", {grid}, "grid_nchw", {aInts("perm", {0, 3, 1, 2})});
  Value *axes1 = b.ints({1}, "coord_axes");
  auto coord = [&](int64_t k, int64_t size, const std::string &name) {
    Value *gk = b.op("Slice", {g, b.ints({k}, name + "_start"), b.ints({k + 1}, name + "_end"), axes1}, "grid_" + name);
    Value *p1 = b.op("Add", {gk, one}, name + "_plus1");
    if (align)
      return b.op("Mul", {b.op("Div", {p1, two}, name + "_half"), b.scalar(*t, static_cast<double>(size - 1), name + "_span")},
                  name + "_pos");
    Value *scaled = b.op("Mul", {p1, b.scalar(*t, static_cast<double>(size), name + "_size")}, name + "_scaled");
    return b.op("Div", {b.op("Sub", {scaled, one}, name + "_shifted"), two}, name + "_pos");
  };
  Value *px = coord(0, w, "x"), *py = coord(1, h, "y");

  std::vector<double> offs(static_cast<size_t>(n * c));
  for (int64_t i = 0; i < n * c; ++i)
    offs[static_cast<size_t>(i)] = static_cast<double>(i * h * w);
  Value *offsets = b.constant(typedTensor(DataType::Int64, {n, c, 1, 1}, offs), "offsets");
  Value *flat = b.op("Reshape", {x, b.ints({-1}, "flat_shape")}, "flat");
  Value *wc = b.scalar(*t, static_cast<double>(w), "width");
  Value *zero = b.scalar(*t, 0, "zero");
  // The pixel at row tap ty and column tap tx, padded.
  auto pixel = [&](const Taps &ys, size_t iy, const Taps &xs, size_t ix) {
    std::string at = "p" + std::to_string(iy) + std::to_string(ix);
    Value *lin = b.op("Add", {b.op("Mul", {ys.index[iy], wc}, at + "_row"), xs.index[ix]}, at + "_lin");
    Value *idx = b.op("Add", {b.op("Cast", {lin}, at + "_int", {castTo(DataType::Int64)}), offsets}, at + "_idx");
    Value *v = b.op("Gather", {flat, idx}, at);
    if (xs.inside.empty())
      return v;
    Value *in = b.op("And", {ys.inside[iy], xs.inside[ix]}, at + "_inside");
    return b.op("Where", {in, v, zero}, at + "_padded");
  };

  if (mode == "nearest") {
    Taps xs = padTaps(b, *t, b.op("Round", {px}, "x_round"), w, {0}, padding, align, "x");
    Taps ys = padTaps(b, *t, b.op("Round", {py}, "y_round"), h, {0}, padding, align, "y");
    Value *p = pixel(ys, 0, xs, 0);
    b.finish("Identity", {p});
    return "";
  }
  Value *x1 = b.op("Floor", {px}, "x_floor"), *y1 = b.op("Floor", {py}, "y_floor");
  if (mode == "bilinear") {
    Taps xs = padTaps(b, *t, x1, w, {0, 1}, padding, align, "x");
    Taps ys = padTaps(b, *t, y1, h, {0, 1}, padding, align, "y");
    Value *dx1 = b.op("Sub", {px, x1}, "dx1");
    Value *dx2 = b.op("Sub", {b.op("Add", {x1, one}, "x2"), px}, "dx2");
    Value *dy1 = b.op("Sub", {py, y1}, "dy1");
    Value *dy2 = b.op("Sub", {b.op("Add", {y1, one}, "y2"), py}, "dy2");
    auto row = [&](size_t iy) {
      std::string at = "row" + std::to_string(iy);
      return b.op("Add", {b.op("Mul", {dx2, pixel(ys, iy, xs, 0)}, at + "_left"),
                          b.op("Mul", {dx1, pixel(ys, iy, xs, 1)}, at + "_right")},
                  at);
    };
    Value *top = b.op("Mul", {dy2, row(0)}, "top");
    Value *bottom = b.op("Mul", {dy1, row(1)}, "bottom");
    b.finish("Add", {top, bottom});
    return "";
  }
  // bicubic: taps floor - 1 .. floor + 2, coefficients of t = p - floor(p).
  Taps xs = padTaps(b, *t, x1, w, {-1, 0, 1, 2}, padding, align, "x");
  Taps ys = padTaps(b, *t, y1, h, {-1, 0, 1, 2}, padding, align, "y");
  auto coeffs = [&](Value *p, Value *f, const std::string &name) {
    const double a = -0.75;
    Value *tt = b.op("Sub", {p, f}, name + "_t");
    auto k = [&](double v, const std::string &what) { return b.scalar(*t, v, name + "_" + what); };
    // c0: ((A * (t + 1) - 5A) * (t + 1) + 8A) * (t + 1) - 4A
    Value *t1 = b.op("Add", {tt, one}, name + "_t1");
    Value *c0 = b.op("Sub", {b.op("Mul", {b.op("Add", {b.op("Mul", {b.op("Sub", {b.op("Mul", {k(a, "a"), t1}, name + "_c0a"),
                                                                                 k(5 * a, "a5")},
                                                                           name + "_c0b"),
                                                                     t1},
                                                               name + "_c0c"),
                                                         k(8 * a, "a8")},
                                                   name + "_c0d"),
                                             t1},
                                       name + "_c0e"),
                                 k(4 * a, "a4")},
                         name + "_c0");
    // c1: ((A + 2) * t - (A + 3)) * t * t + 1
    auto mid = [&](Value *u, const std::string &tag) {
      Value *s = b.op("Sub", {b.op("Mul", {k(a + 2, "a2_" + tag), u}, name + "_" + tag + "a"), k(a + 3, "a3_" + tag)},
                      name + "_" + tag + "b");
      Value *m = b.op("Mul", {b.op("Mul", {s, u}, name + "_" + tag + "c"), u}, name + "_" + tag + "d");
      return b.op("Add", {m, one}, name + "_" + tag);
    };
    Value *c1 = mid(tt, "c1");
    Value *c2 = mid(b.op("Sub", {one, tt}, name + "_1mt"), "c2");
    // c3: ((A * (2 - t) - 5A) * (2 - t) + 8A) * (2 - t) - 4A
    Value *t2 = b.op("Sub", {two, tt}, name + "_2mt");
    Value *c3 = b.op("Sub", {b.op("Mul", {b.op("Add", {b.op("Mul", {b.op("Sub", {b.op("Mul", {k(a, "b"), t2}, name + "_c3a"),
                                                                                 k(5 * a, "b5")},
                                                                           name + "_c3b"),
                                                                     t2},
                                                               name + "_c3c"),
                                                         k(8 * a, "b8")},
                                                   name + "_c3d"),
                                             t2},
                                       name + "_c3e"),
                                 k(4 * a, "b4")},
                         name + "_c3");
    return std::vector<Value *>{c0, c1, c2, c3};
  };
  std::vector<Value *> cx = coeffs(px, x1, "x"), cy = coeffs(py, y1, "y");
  auto dot = [&](const std::vector<Value *> &cs, const std::vector<Value *> &vs, const std::string &at) {
    Value *acc = b.op("Mul", {cs[0], vs[0]}, at + "_0");
    for (size_t i = 1; i < 4; ++i)
      acc = b.op("Add", {acc, b.op("Mul", {cs[i], vs[i]}, at + "_m" + std::to_string(i))}, at + "_" + std::to_string(i));
    return acc;
  };
  std::vector<Value *> rows;
  for (size_t iy = 0; iy < 4; ++iy) {
    std::vector<Value *> ps;
    for (size_t ix = 0; ix < 4; ++ix)
      ps.push_back(pixel(ys, iy, xs, ix));
    rows.push_back(dot(cx, ps, "row" + std::to_string(iy)));
  }
  Value *v = dot(cy, rows, "cubic");
  b.finish("Identity", {v});
  return "";
}

//===----------------------------------------------------------------------===//
// CenterCropPad (opset 18), AffineGrid (opset 20)
//===----------------------------------------------------------------------===//

/// CenterCropPad-18 -> Slice then Pad (before 18), for a constant shape and
/// static dims on the axes it changes: an axis of size n going to s is
/// cropped from (n - s) / 2 (rounded down) or padded with zeros, (s - n) / 2
/// (rounded down) before, the rest after, as the reference does.
///     Before: y = CenterCropPad(x[5, 2], Constant<[3, 4]>)
///     After:  c = Slice(x, [1], [4], [0])
///             y = Pad(c, [0, 1, 0, 1])
std::string centerCropPadExpanded(Node &node, StepContext &ctx) {
  Value *x = node.operand(0);
  std::optional<Shape> xs = x ? knownShape(x) : std::nullopt;
  std::optional<std::vector<int64_t>> shape = constantIntsOperand(node, 1);
  if (!xs || !shape)
    return "its input's rank is unknown or its shape is not a constant (the Slice and Pad amounts are constants)";
  int64_t r = static_cast<int64_t>(xs->size());
  std::vector<int64_t> axes = node.attrInts("axes", {});
  if (axes.empty())
    for (int64_t i = 0; i < static_cast<int64_t>(shape->size()); ++i)
      axes.push_back(i);
  if (axes.size() != shape->size())
    return "its shape and axes differ in length";
  std::vector<int64_t> starts, ends, sliceAxes, pads(static_cast<size_t>(2 * r), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];
    if (a < 0 || a >= r)
      return "its axis " + std::to_string(axes[k]) + " is out of range";
    const Dim &d = (*xs)[static_cast<size_t>(a)];
    if (!d.isValue())
      return "its input's dim " + std::to_string(a) + " is not static";
    int64_t n = d.getValue(), want = (*shape)[k];
    if (want < n) {
      sliceAxes.push_back(a);
      starts.push_back((n - want) / 2);
      ends.push_back((n - want) / 2 + want);
    } else if (want > n) {
      pads[static_cast<size_t>(a)] = (want - n) / 2;
      pads[static_cast<size_t>(a + r)] = want - n - (want - n) / 2;
    }
  }
  bool pad = std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v != 0; });
  Body b(node, ctx);
  Value *v = x;
  if (!sliceAxes.empty()) {
    std::vector<Value *> in{x, b.ints(starts, "starts"), b.ints(ends, "ends"), b.ints(sliceAxes, "axes")};
    if (!pad) {
      b.finish("Slice", in);
      return "";
    }
    v = b.op("Slice", in, "cropped");
  }
  if (!pad) {
    b.finish("Identity", {v});
    return "";
  }
  b.finish("Pad", {v, b.ints(pads, "pads")});
  return "";
}

/// AffineGrid-20 -> MatMul of a constant base grid with theta (before 20),
/// for a constant size: the base holds (x, y[, z], 1) of every output
/// position (x over W, y over H, z over D; align_corners: -1 + 2i / (n - 1),
/// else -1 + (2i + 1) / n), the grid is base @ theta^T per batch.
///     Before: g = AffineGrid(theta[N, 2, 3], Constant<[N, C, H, W]>)
///     After:  t = Transpose<perm = [0, 2, 1]>(theta)
///             g = Reshape(MatMul(base[H*W, 3], t), [N, H, W, 2])
std::string affineGridExpanded(Node &node, StepContext &ctx) {
  Value *theta = node.operand(0);
  std::optional<DataType> t = floatInput(node);
  if (!t)
    return notFloat(node);
  std::optional<std::vector<int64_t>> size = constantIntsOperand(node, 1);
  if (!size || (size->size() != 4 && size->size() != 5))
    return "its size is not a constant of 4 or 5 values (the base grid is a constant of it)";
  bool align = node.attrInt("align_corners", 0) != 0;
  size_t sp = size->size() - 2;
  std::vector<int64_t> dims(size->begin() + 2, size->end()); // (D,) H, W
  int64_t count = 1;
  for (int64_t d : dims)
    count *= d;
  if (count <= 0 || count > (1 << 22))
    return "its output positions are none or more than 2^22";
  if (align && std::find(dims.begin(), dims.end(), 1) != dims.end())
    return "align_corners with a spatial size of 1: the spec's reference places the point at -1, ONNX Runtime at 1";
  auto coordinate = [&](int64_t i, int64_t n) {
    if (align)
      return -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
  };
  int64_t cols = static_cast<int64_t>(sp) + 1;
  std::vector<double> base;
  base.reserve(static_cast<size_t>(count * cols));
  for (int64_t p = 0; p < count; ++p) {
    int64_t w = p % dims.back(), rest = p / dims.back();
    int64_t h = rest % dims[sp - 2];
    base.push_back(coordinate(w, dims.back()));
    base.push_back(coordinate(h, dims[sp - 2]));
    if (sp == 3)
      base.push_back(coordinate(rest / dims[sp - 2], dims[0]));
    base.push_back(1.0);
  }
  Body b(node, ctx);
  Value *bg = b.constant(typedTensor(*t, {count, cols}, base), "base");
  Value *tt = b.op("Transpose", {theta}, "theta_t", {aInts("perm", {0, 2, 1})});
  Value *m = b.op("MatMul", {bg, tt}, "points");
  std::vector<int64_t> out{(*size)[0]};
  out.insert(out.end(), dims.begin(), dims.end());
  out.push_back(static_cast<int64_t>(sp));
  b.finish("Reshape", {m, b.ints(out, "grid_shape")});
  return "";
}

//===----------------------------------------------------------------------===//
// Shapes known statically: Expand-8, ConstantOfShape-9, EyeLike-9
//===----------------------------------------------------------------------===//

/// Expand-8 -> Reshape to the output's rank, Tile where a dim grows
/// (before 8), for any element type; needs the input's static shape and a
/// constant shape.
///     Before: y = Expand(x[3, 1], Constant<[2, 1, 4]>)
///     After:  y = Tile(Reshape(x, [1, 3, 1]), [2, 1, 4])
std::string expandExpanded(Node &node, StepContext &ctx) {
  std::optional<std::vector<int64_t>> xd = staticDims(node.operand(0));
  std::optional<std::vector<int64_t>> shape = constantIntsOperand(node, 1);
  if (!xd || !shape)
    return "its input's shape is not static or its shape is not a constant (Tile's repeats are)";
  size_t r = std::max(xd->size(), shape->size());
  std::vector<int64_t> padded(r - xd->size(), 1), want(r - shape->size(), 1);
  padded.insert(padded.end(), xd->begin(), xd->end());
  want.insert(want.end(), shape->begin(), shape->end());
  std::vector<int64_t> reps(r, 1);
  for (size_t i = 0; i < r; ++i) {
    if (padded[i] == want[i] || want[i] == 1)
      continue;
    if (padded[i] != 1)
      return "its shape does not broadcast with the input's";
    reps[i] = want[i];
  }
  Body b(node, ctx);
  Value *x = node.operand(0);
  if (padded.size() != xd->size())
    x = b.op("Reshape", {x, b.ints(padded, "rank_shape")}, "ranked");
  b.finish("Tile", {x, b.ints(reps, "repeats")});
  return "";
}

/// The node becomes a Constant holding `value`.
void becomeConstant(Node &node, StepContext &ctx, TensorPtr value) {
  Body b(node, ctx);
  b.finish("Constant", {}, {aTensor("value", std::move(value))});
}

/// ConstantOfShape-9 -> a Constant (before 9), for a constant shape.
std::string constantOfShapeExpanded(Node &node, StepContext &ctx) {
  std::optional<std::vector<int64_t>> shape = constantIntsOperand(node, 0);
  if (!shape)
    return "its shape is not a constant (no op before 9 makes a tensor of a computed shape)";
  int64_t count = 1;
  for (int64_t d : *shape)
    count *= d;
  if (count > (1 << 22))
    return "its constant would hold more than 2^22 elements";
  const Attribute *v = node.attr("value");
  TensorPtr fill = v ? v->t : typedTensor(DataType::Float, {1}, {0});
  if (!fill || fill->numElements() != 1)
    return "its value is not one element";
  size_t es = elementSize(fill->dtype());
  if (es == 0 || fill->byteSize() < es)
    return "its value's element type has no fixed size";
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * es);
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + static_cast<size_t>(i) * es, fill->rawData(), es);
  TensorPtr out = std::make_shared<Tensor>(fill->dtype(), *shape, Buffer::copyOf(bytes.data(), bytes.size()));
  clearOperand(node, 0);
  becomeConstant(node, ctx, out);
  return "";
}

/// EyeLike-9 -> a Constant (before 9), for a static 2-D input shape.
std::string eyeLikeExpanded(Node &node, StepContext &ctx) {
  std::optional<std::vector<int64_t>> d = staticDims(node.operand(0));
  if (!d || d->size() != 2)
    return "its input's shape is not a static 2-D one (no op before 9 makes a tensor of a computed shape)";
  if ((*d)[0] * (*d)[1] > (1 << 22))
    return "its constant would hold more than 2^22 elements";
  std::optional<DataType> in = knownElemType(node.operand(0));
  DataType t = node.hasAttr("dtype") ? static_cast<DataType>(node.attrInt("dtype", 1)) : in.value_or(DataType::Undefined);
  int64_t k = node.attrInt("k", 0);
  std::vector<double> v(static_cast<size_t>((*d)[0] * (*d)[1]), 0);
  for (int64_t i = 0; i < (*d)[0]; ++i)
    if (int64_t j = i + k; j >= 0 && j < (*d)[1])
      v[static_cast<size_t>(i * (*d)[1] + j)] = 1;
  TensorPtr out = typedTensor(t, *d, v);
  if (!out)
    return "its output's element type is " + dataTypeName(t) + " (a numeric type expected)";
  clearOperand(node, 0);
  becomeConstant(node, ctx, out);
  return "";
}

//===----------------------------------------------------------------------===//
// Declines with a reason
//===----------------------------------------------------------------------===//

std::string bitwiseDeclined(Node &, StepContext &) {
  return "no op before 18 computes bitwise results on integers (an exact form would split every bit by Div and Mod)";
}
std::string stringOpDeclined(Node &, StepContext &) { return "no string op before 20 computes it"; }
std::string col2imDeclined(Node &, StepContext &) {
  return "not written: summing the overlapping blocks needs ScatterElements' reduction or a constant matrix (not here)";
}
std::string deformConvDeclined(Node &, StepContext &) {
  return "not written: the learned offsets need bilinear sampling per kernel tap (GridSample-sized expansion per tap)";
}
std::string imageDecoderDeclined(Node &, StepContext &) { return "no op before 20 decodes images"; }
std::string tensorScatterDeclined(Node &, StepContext &) {
  return "not written: the cache update at runtime write positions needs ScatterND with computed indices";
}
std::string erfDeclined(Node &, StepContext &) {
  return "no exact form from the ops before 9 (Erf has no closed form in Exp/Tanh)";
}
std::string whereDeclined(Node &, StepContext &) {
  return "no exact select before 9 (blending by a 0/1 mask gives NaN where the other branch is infinite)";
}
std::string before9Declined(Node &node, StepContext &) {
  return "no op before 9 computes " + node.opType() + " (its output depends on run-time values in a way "
         "no fixed graph of older ops reproduces exactly)";
}

} // namespace

void registerElementwiseExpansions(AdapterRegistry &r) {
  r.add("Mish", 18, Direction::Down, mishExpanded);
  r.add("Swish", 24, Direction::Down, swishExpanded);
  r.add("Shrink", 9, Direction::Down, shrinkExpanded);
  r.add("MeanVarianceNormalization", 9, Direction::Down, mvnExpanded);
  r.add("Sign", 9, Direction::Down, signExpanded);
  r.add("Sinh", 9, Direction::Down, sinhCoshExpanded);
  r.add("Cosh", 9, Direction::Down, sinhCoshExpanded);
  for (const char *op : {"Asinh", "Acosh", "Atanh"})
    r.add(op, 9, Direction::Down, inverseHyperbolicExpanded);
  r.add("IsNaN", 9, Direction::Down, isNaNExpanded);
  r.add("DequantizeLinear", 10, Direction::Down, dequantizeExpanded);
  r.add("QuantizeLinear", 10, Direction::Down, quantizeExpanded);
  r.add("DequantizeLinear", 13, Direction::Down, perAxisQuant13);
  r.add("QuantizeLinear", 13, Direction::Down, perAxisQuant13);
  r.add("GridSample", 16, Direction::Down, gridSampleExpanded);
  r.add("CenterCropPad", 18, Direction::Down, centerCropPadExpanded);
  r.add("AffineGrid", 20, Direction::Down, affineGridExpanded);
  r.add("Expand", 8, Direction::Down, expandExpanded);
  r.add("ConstantOfShape", 9, Direction::Down, constantOfShapeExpanded);
  r.add("EyeLike", 9, Direction::Down, eyeLikeExpanded);
  for (const char *op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"})
    r.add(op, 18, Direction::Down, bitwiseDeclined);
  for (const char *op : {"RegexFullMatch", "StringConcat", "StringSplit"})
    r.add(op, 20, Direction::Down, stringOpDeclined);
  r.add("Col2Im", 18, Direction::Down, col2imDeclined);
  r.add("DeformConv", 19, Direction::Down, deformConvDeclined);
  r.add("ImageDecoder", 20, Direction::Down, imageDecoderDeclined);
  r.add("TensorScatter", 24, Direction::Down, tensorScatterDeclined);
  r.add("Erf", 9, Direction::Down, erfDeclined);
  r.add("Where", 9, Direction::Down, whereDeclined);
  for (const char *op : {"OneHot", "NonZero", "Compress", "MaxUnpool", "Scatter", "TfIdfVectorizer"})
    r.add(op, 9, Direction::Down, before9Declined);
}

} // namespace opset
} // namespace onnxslim
