//===- transforms/opset/VersionBumps.cpp - Steps that change only the version ===//
//
// The op versions whose change, read in the ONNX changelog
// (docs/Changelog.md), leaves every model of the older version meaning the
// same thing in the newer one: wider type lists (bfloat16 at 13, float8 at
// 19, int4 at 21, float4 at 23...), a new attribute or optional input whose
// default is the old behaviour (ArgMax select_last_index, pooling
// ceil_mode/dilations, Reshape allowzero, RNN layout, Shape start/end,
// ScatterND reduction...), or a clarified specification.
//
//   Before (opset 12):            After (target=13):
//     y = Relu(x)                   y = Relu(x)          (Relu-6 -> Relu-13)
//
// Downgrading the same step needs nothing either, except what the driver
// checks after every step (an attribute the older version lacks must hold
// its default, the arity must fit, an element type must exist there) and
// what is listed below: negative axes became legal at 11 (a downgrade keeps
// those the older version takes: Gather's, and OneHot's and TopK's default
// -1; it normalizes the others with the known rank they count in, the
// output's for OneHot and Unsqueeze, or refuses), a per-axis
// QuantizeLinear/DequantizeLinear scale at 13, the reductions ScatterND and
// ScatterElements got at 18 (max, min), Pad's wrap mode at 19, Reshape's
// allowzero = 1 at 14 (dropped going down when the shape is a constant
// without 0), RNN/GRU/LSTM's layout = 1 at 14 (batch first: going down,
// Transposes turn inputs and results to and from sequence first), Cast's
// and CastLike's saturate at 19 and round_mode at 24 (dropped going down,
// whatever their value, from a cast that is not to float8, resp.
// float8e8m0, the only casts they apply to; those are refused), and the
// quantizers' attributes that can say what the older version does: axis
// with a per-tensor scale (13), QuantizeLinear's saturate (19) as Cast's,
// its output_dtype (21: the zero point's type, or uint8, or a zero point
// of that type added), its precision and DequantizeLinear's output_dtype
// (23: the scale's type), and Constant-12's value_float(s), value_int(s)
// and value_string(s) (the `value` tensor each stands for, below 12).
//
// Downgrades that rewrite the node into ops the older version has (each
// exact; see the function's comment):
//   Add/Sub/Mul/Div-14   8- and 16-bit integers computed in uint32/int64,
//                        wrapped modulo 2^n, Cast back      (smallIntArith14)
//   Min/Max-12           integers: Where(Greater/Less) chains (minMaxInts12)
//   Clip-12              integers: Where(Less(x, lo)), Where(Greater(_, hi))
//                                                            (clipInts12)
//   Equal-11             floats: not less, not greater, no NaN; other
//                        integers in int64                   (equalTyped11)
//   Pow-12               integer exponents / int32 base in double; int64
//                        base with a constant exponent: Muls (powTyped12)
//   MaxPool-12           int8/uint8 pooled in float           (maxPoolInts12)
//   ArgMax/ArgMin-12     select_last_index = 1: the axis reversed
//                                                            (selectLastIndex12)
//   Gemm-11              an omitted C: a zero scalar          (gemmBias11)
//   DepthToSpace-11      mode = "CRD": Reshape, Transpose, Reshape (static
//                        shape)                              (depthToSpace11)
//   MaxPool-10,          ceil_mode = 1: the end pads grown so that floor
//   AveragePool-10       mode gives the same windows (static input; not
//                        AveragePool counting pads)          (poolCeilMode10)
//
// Steps that are not listed (DFT-20's axis input, and those with their own
// files: Scan-9's batch axis, GroupNormalization-21's per-channel scale...)
// have no adapter here.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "ir/ShapeInference.h"
#include "transforms/ValueUtils.h"

#include "transforms/fusion/FusionUtils.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace onnxslim {
namespace opset {

namespace {

std::string bump(Node &, StepContext &) { return ""; }

/// Rank of `v` when known.
std::optional<int64_t> rankOf(const Value *v) {
  std::optional<Shape> s = v ? knownShape(v) : std::nullopt;
  return s ? std::optional<int64_t>(static_cast<int64_t>(s->size())) : std::nullopt;
}

/// Downgrade below 11: negative axes came at 11. What the older versions
/// take, read in their schemas:
///   Gather-1             any axis in [-r, r-1] (negative already): kept;
///   OneHot-9, TopK-1/10  -1, their default (the innermost axis): kept;
///   every other op       non-negative axes only.
/// A negative axis that must go is made non-negative with the rank it
/// counts in: the output's for Unsqueeze (rank(data) + len(axes)) and
/// OneHot (rank(indices) + 1), the input's for the others; refused when
/// that rank is unknown.
std::string nonNegativeAxes(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.is("Gather"))
    return "";
  bool innermostKept = node.is("OneHot") || node.is("TopK");
  auto mustGo = [&](int64_t v) { return v < 0 && !(innermostKept && v == -1); };
  for (const char *name : {"axis", "axes"}) {
    const Attribute *a = node.attr(name);
    if (!a)
      continue;
    bool scalar = a->kind == AttrKind::Int;
    std::vector<int64_t> axes = scalar ? std::vector<int64_t>{a->i} : a->ints;
    if (std::none_of(axes.begin(), axes.end(), mustGo))
      continue;
    std::optional<int64_t> rank = rankOf(node.operand(0));
    if (node.is("Unsqueeze") || node.is("OneHot")) {
      int64_t added = node.is("OneHot") ? 1 : static_cast<int64_t>(axes.size());
      std::optional<int64_t> out = rankOf(node.result(0));
      rank = out ? out : rank ? std::optional<int64_t>(*rank + added) : std::nullopt;
    }
    if (!rank)
      return "its " + std::string(name) + " is negative (allowed from opset 11) and the rank it counts in is unknown";
    for (int64_t &v : axes)
      if (mustGo(v))
        v += *rank;
    node.setAttr(scalar ? Attribute::makeInt(name, axes[0]) : Attribute::makeInts(name, axes));
  }
  return "";
}

/// Downgrade below 14: allowzero = 1 (a 0 in the shape is a zero dim, not
/// "copy the input's dim") means the same as its absence when the shape is
/// a constant without 0, and is then dropped; otherwise the driver refuses
/// the attribute.
std::string allowzero14(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.attrInt("allowzero", 0) == 0)
    return "";
  std::optional<std::vector<int64_t>> shape = constantIntsOperand(node, 1);
  if (shape && std::find(shape->begin(), shape->end(), 0) == shape->end())
    node.removeAttr("allowzero");
  return "";
}

/// MaxPool-10 / AveragePool-10 -> 8 / 7: ceil_mode came at 10. With a
/// static input and explicit pads, the ceil-mode output is the floor-mode
/// output of the same pooling with the end pads grown until the last
/// window fits (the output size as ONNX Runtime counts it: ceil, less one
/// when the last window would start past the input and its begin pad).
/// Exact for MaxPool (a pad is never the maximum of a window holding an
/// input element) and for AveragePool without count_include_pad (pads are
/// not counted); AveragePool counting pads would count the grown ones.
///   Before:                                    After:
///     MaxPool<kernel_shape = [3], strides = [2],   MaxPool<kernel_shape = [3], strides = [2],
///             ceil_mode = 1>(x: [1, 1, 4])                 pads = [0, 1]>(x)
std::string poolCeilMode10(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.attrInt("ceil_mode", 0) == 0)
    return "";
  if (node.attrString("auto_pad", "NOTSET") != "NOTSET")
    return "ceil_mode with auto_pad '" + node.attrString("auto_pad", "") + "' has no form before opset 10";
  std::optional<Shape> shape = knownShape(node.operand(0));
  std::vector<int64_t> kernel = node.attrInts("kernel_shape");
  size_t n = kernel.size();
  if (!shape || shape->size() != n + 2)
    return "its ceil_mode needs the input's spatial dims, which are not known";
  std::vector<int64_t> strides = node.attrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = node.attrInts("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = node.attrInts("pads", std::vector<int64_t>(2 * n, 0));
  if (strides.size() != n || dil.size() != n || pads.size() != 2 * n)
    return "its strides, dilations or pads do not match kernel_shape";
  bool grown = false;
  for (size_t i = 0; i < n; ++i) {
    const Dim &d = (*shape)[i + 2];
    if (!d.isValue())
      return "its ceil_mode needs the input's spatial dims, which are not known";
    int64_t len = d.getValue(), window = (kernel[i] - 1) * dil[i] + 1;
    int64_t span = len + pads[i] + pads[i + n] - window;
    if (span < 0 || strides[i] <= 0)
      return "";
    int64_t out = (span + strides[i] - 1) / strides[i] + 1;
    if ((out - 1) * strides[i] >= len + pads[i])
      --out;
    int64_t extra = (out - 1) * strides[i] + window - (len + pads[i] + pads[i + n]);
    if (extra > 0) {
      pads[i + n] += extra;
      grown = true;
    }
  }
  if (grown && node.is("AveragePool") && node.attrInt("count_include_pad", 0) != 0)
    return "its ceil_mode with count_include_pad = 1 would count the end pads it needs";
  node.removeAttr("ceil_mode");
  if (grown)
    node.setAttr(Attribute::makeInts("pads", pads));
  return "";
}

/// Given a node, an operand index and a permutation, Execute: puts a
/// Transpose by `perm` on that operand (when present).
void transposeOperand(Node &node, StepContext &ctx, size_t i, const std::vector<int64_t> &perm) {
  if (i >= node.numOperands() || !node.operand(i))
    return;
  Node *t = ctx.nodeBefore(node, "Transpose", {node.operand(i)}, nodeBase(node, "seq_first"));
  t->setAttr(Attribute::makeInts("perm", perm));
  node.setOperand(i, t->result(0));
}

/// Downgrade below 14: RNN/GRU/LSTM with layout = 1 (batch first) become
/// the sequence-first form between Transposes:
///   X [B, S, I] and initial_h/initial_c [B, dirs, H] in by perm [1, 0, 2];
///   Y [S, dirs, B, H] out by perm [2, 0, 1, 3] to [B, S, dirs, H];
///   Y_h/Y_c [dirs, B, H] out by perm [1, 0, 2].
std::string layout14(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.attrInt("layout", 0) == 0)
    return "";
  transposeOperand(node, ctx, 0, {1, 0, 2});
  transposeOperand(node, ctx, 5, {1, 0, 2});
  if (node.is("LSTM"))
    transposeOperand(node, ctx, 6, {1, 0, 2});
  for (size_t i = node.numResults(); i-- > 0;) {
    Value *r = node.result(i);
    if (!r)
      continue;
    std::vector<int64_t> perm = i == 0 ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{1, 0, 2};
    Node *t = node.graph()->createNode("Transpose", {r}, {ctx.model.names().fresh(nodeBase(node, "batch_first"))});
    t->setName(ctx.model.names().fresh(t->result(0)->name() + "_node"));
    t->setAttr(Attribute::makeInts("perm", perm));
    wrapResult(node, i, t, ctx, std::nullopt, "seq_first");
  }
  node.removeAttr("layout");
  return "";
}

/// Downgrade below 13: the scale must be a scalar (per-axis came at 13);
/// `axis`, which came with it and is ignored for a per-tensor scale, is
/// then dropped whatever its value.
std::string scalarScale(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<Shape> s = node.operand(1) ? knownShape(node.operand(1)) : std::nullopt;
  if (!s)
    return "the rank of its scale is unknown (a per-axis scale needs opset 13)";
  std::optional<int64_t> n = staticNumElements(*s);
  if (!s->empty() && (!n || *n != 1))
    return "its scale is per-axis, which needs opset 13";
  node.removeAttr("axis");
  return "";
}

/// Downgrade below 21 (QuantizeLinear): output_dtype says the type the
/// older version takes from the zero point, or uint8 without one. With a
/// zero point (whose type it must be) or as uint8 it is dropped; another
/// type without a zero point becomes a zero point of that type, zeros of
/// the scale's shape (known).
std::string outputDtype21(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || !node.hasAttr("output_dtype"))
    return "";
  auto t = static_cast<DataType>(node.attrInt("output_dtype", 0));
  node.removeAttr("output_dtype");
  bool zeroPoint = node.numOperands() > 2 && node.operand(2);
  if (zeroPoint || t == DataType::Undefined || t == DataType::UInt8)
    return "";
  std::optional<Shape> s = node.operand(1) ? knownShape(node.operand(1)) : std::nullopt;
  std::optional<int64_t> n = s ? staticNumElements(*s) : std::nullopt;
  if (!n || elementBits(t) == 0)
    return "output_dtype " + dataTypeName(t) +
           " has no older form without a zero point, and the scale's shape is unknown (for a zero one)";
  std::vector<int64_t> dims;
  for (const Dim &d : *s)
    dims.push_back(d.getValue());
  std::vector<uint8_t> zeros(storageSize(t, *n), 0);
  node.resizeOperands(3);
  node.setOperand(2, ctx.constantBefore(node, nodeBase(node, "zero_point"), Tensor::fromValues(t, dims, zeros)));
  return "";
}

/// Downgrade below 23: QuantizeLinear's precision (of the division by the
/// scale) and DequantizeLinear's output_dtype default to the scale's type:
/// dropped when they say that type, refused otherwise.
std::string scaleTyped23(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  const char *name = node.is("QuantizeLinear") ? "precision" : "output_dtype";
  if (!node.hasAttr(name))
    return "";
  auto t = static_cast<DataType>(node.attrInt(name, 0));
  std::optional<DataType> scale = node.operand(1) ? knownElemType(node.operand(1)) : std::nullopt;
  if (t != DataType::Undefined && (!scale || *scale != t))
    return std::string(name) + " " + dataTypeName(t) + " is not the scale's type, which opset " +
           std::to_string(ctx.to) + " always uses";
  node.removeAttr(name);
  return "";
}

/// Downgrade below 12 (Constant): value_float(s), value_int(s) and
/// value_string(s) came at 12; each is the `value` tensor it stands for (a
/// float, int64 or string scalar, or 1-D tensor), which the older version
/// takes.
std::string constantValue12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  for (const Attribute &a : node.attributes()) {
    auto n = static_cast<int64_t>(a.kind == AttrKind::Floats ? a.floats.size()
                                  : a.kind == AttrKind::Ints ? a.ints.size()
                                                             : a.strings.size());
    TensorPtr t;
    if (a.name == "value_float" && a.kind == AttrKind::Float)
      t = Tensor::fromValues(DataType::Float, {}, std::vector<float>{a.f});
    else if (a.name == "value_floats" && a.kind == AttrKind::Floats)
      t = Tensor::fromValues(DataType::Float, {n}, a.floats);
    else if (a.name == "value_int" && a.kind == AttrKind::Int)
      t = StepContext::int64s({a.i}, /*scalar=*/true);
    else if (a.name == "value_ints" && a.kind == AttrKind::Ints)
      t = StepContext::int64s(a.ints);
    else if (a.name == "value_string" && a.kind == AttrKind::String)
      t = Tensor::fromStrings({}, {a.s});
    else if (a.name == "value_strings" && a.kind == AttrKind::Strings)
      t = Tensor::fromStrings({n}, a.strings);
    if (!t)
      continue;
    std::string name = a.name;
    node.removeAttr(name);
    node.setAttr(Attribute::makeTensor("value", std::move(t)));
    return "";
  }
  return "";
}

/// Downgrade below 18: reduction max and min came at 18.
std::string noMinMaxReduction(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down) {
    std::string r = node.attrString("reduction", "none");
    if (r == "max" || r == "min")
      return "reduction '" + r + "' needs opset 18";
  }
  return "";
}

/// Downgrade below 19: Pad's wrap mode came at 19.
std::string noWrapPad(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Down && node.attrString("mode", "constant") == "wrap")
    return "mode 'wrap' needs opset 19";
  return "";
}

bool isFloat8(DataType t) {
  return t == DataType::Float8E4M3FN || t == DataType::Float8E4M3FNUZ || t == DataType::Float8E5M2 ||
         t == DataType::Float8E5M2FNUZ || t == DataType::Float8E8M0;
}

/// The element type a Cast (its `to`), CastLike (its second input's) or
/// QuantizeLinear (its output_dtype, else its zero point's, else uint8)
/// converts to, when known.
std::optional<DataType> convertsTo(const Node &node) {
  if (node.is("QuantizeLinear")) {
    if (int64_t t = node.attrInt("output_dtype", 0); t != 0)
      return static_cast<DataType>(t);
    if (node.numOperands() > 2 && node.operand(2))
      return knownElemType(node.operand(2));
    return DataType::UInt8;
  }
  if (node.is("Cast")) {
    const Attribute *to = node.attr("to");
    return to && to->kind == AttrKind::Int ? std::optional<DataType>(static_cast<DataType>(to->i)) : std::nullopt;
  }
  std::optional<DataType> t = node.operand(1) ? knownElemType(node.operand(1)) : std::nullopt;
  return t ? t : node.result(0) ? knownElemType(node.result(0)) : std::nullopt;
}

/// Downgrade below 19 (Cast, CastLike, QuantizeLinear): `saturate` applies
/// only to conversions to a float8 type, which came at 19 with it; a
/// conversion from or to float8 is refused, and for any other `saturate`
/// is dropped whatever its value (0 is refused only when the type converted
/// to is unknown).
std::string saturate19(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> to = convertsTo(node);
  std::optional<DataType> from = node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt;
  if (to && isFloat8(*to))
    return "it converts to " + dataTypeName(*to) + ", which needs opset 19";
  if (from && isFloat8(*from))
    return "it converts from " + dataTypeName(*from) + ", which needs opset 19";
  if (!to && node.attrInt("saturate", 1) != 1)
    return "saturate = 0 matters only for conversions to float8 (opset 19), and the type it converts to is unknown";
  node.removeAttr("saturate");
  return "";
}

/// Downgrade below 24 (Cast, CastLike): `round_mode` applies only to casts
/// to float8e8m0, which came at 24 with it; a cast to float8e8m0 is
/// refused, and for any other cast `round_mode` is dropped whatever its
/// value (other than "up" is refused only when the type cast to is
/// unknown).
std::string roundMode24(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> to = convertsTo(node);
  if (to && *to == DataType::Float8E8M0)
    return "it casts to " + dataTypeName(*to) + ", which needs opset 24";
  if (!to && node.attrString("round_mode", "up") != "up")
    return "round_mode matters only for casts to float8e8m0 (opset 24), and the type it casts to is unknown";
  node.removeAttr("round_mode");
  return "";
}

/// Element types an op version added (beyond the broad ones the driver
/// checks: bfloat16 at 13, float8 at 19...): a downgrade past it refuses them.
struct AddedTypes {
  const char *op;
  int version;
  std::vector<DataType> types;
};
const std::vector<AddedTypes> &addedTypes() {
  using D = DataType;
  static const std::vector<D> kSmallInts = {D::UInt8, D::Int8, D::UInt16, D::Int16};
  static const std::vector<D> kInts = {D::UInt8, D::Int8, D::UInt16, D::Int16, D::UInt32, D::Int32, D::UInt64, D::Int64};
  static const std::vector<AddedTypes> kTable = {
      {"Add", 14, kSmallInts}, {"Sub", 14, kSmallInts}, {"Mul", 14, kSmallInts}, {"Div", 14, kSmallInts},
      {"Relu", 14, {D::Int8, D::Int16, D::Int32, D::Int64}}, {"Clip", 12, kInts}, {"Max", 12, kInts},
      {"Min", 12, kInts}, {"ReduceMax", 12, {D::Int8, D::UInt8}}, {"ReduceMin", 12, {D::Int8, D::UInt8}},
      {"ReduceMax", 20, {D::Bool}}, {"ReduceMin", 20, {D::Bool}}, {"MaxPool", 12, {D::Int8, D::UInt8}},
      {"Equal", 11, {D::Float, D::Double, D::Float16, D::UInt8, D::Int8, D::UInt16, D::Int16, D::UInt32, D::UInt64}},
      {"Equal", 19, {D::String}}, {"Greater", 9, kInts}, {"Less", 9, kInts}, {"Cast", 9, {D::String}},
      {"Pow", 12, kInts}, {"Pow", 15, {D::BFloat16}}, {"PRelu", 9, kInts}, {"PRelu", 16, {D::BFloat16}},
      {"LeakyRelu", 16, {D::BFloat16}}, {"Where", 16, {D::BFloat16}}, {"GreaterOrEqual", 16, {D::BFloat16}},
      {"LessOrEqual", 16, {D::BFloat16}}, {"ScatterElements", 16, {D::BFloat16}},
      {"ScatterND", 16, {D::BFloat16}}, {"MatMul", 9, {D::Int32, D::Int64, D::UInt32, D::UInt64}},
      {"Gemm", 9, {D::Int32, D::Int64, D::UInt32, D::UInt64}}, {"Flatten", 9, kInts},
  };
  return kTable;
}

/// A version bump that, going down, refuses the types the newer version added.
std::string bumpTyped(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  for (const AddedTypes &a : addedTypes()) {
    if (node.opType() != a.op || a.version != ctx.from)
      continue;
    std::vector<Value *> values = node.operands();
    for (Value *r : node.results())
      values.push_back(r);
    for (Value *v : values) {
      std::optional<DataType> t = v ? knownElemType(v) : std::nullopt;
      if (t && std::find(a.types.begin(), a.types.end(), *t) != a.types.end())
        return "'" + v->name() + "' is " + dataTypeName(*t) + ", which " + a.op + " takes from opset " +
               std::to_string(a.version);
    }
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Downgrades that rewrite: types and attributes the older version lacks
//===----------------------------------------------------------------------===//

/// Writes an adapter's nodes before `node` (in their form at ctx.to).
struct Writer {
  Node &node;
  StepContext &ctx;

  template <typename... A> Value *op(const char *type, const std::vector<Value *> &in, std::string_view what, A... attrs) {
    Node *n = ctx.nodeBefore(node, type, in, nodeBase(node, what));
    (n->setAttr(std::move(attrs)), ...);
    return n->result(0);
  }
  Value *cast(Value *v, DataType t, std::string_view what) {
    return op("Cast", {v}, what, Attribute::makeInt("to", static_cast<int64_t>(t)));
  }
  /// An op written in its form at the target opset and typed, not walked:
  /// for a step whose older version (ctx.to) lacks an op the target has
  /// (Min-12 -> Min-8 needs Where, which came at 9).
  template <typename... A>
  Value *opAtTarget(const char *type, const std::vector<Value *> &in, std::string_view what, A... attrs) {
    std::string name = ctx.model.names().fresh(nodeBase(node, what));
    Node *n = node.graph()->createNode(type, in, {name});
    n->setName(ctx.model.names().fresh(name + "_node"));
    (n->setAttr(std::move(attrs)), ...);
    node.graph()->insertBefore(&node, n);
    if (std::optional<Type> t = inferNodeResultType(*n, 0))
      n->result(0)->setType(std::move(*t));
    return n->result(0);
  }
  Value *constant(TensorPtr t, std::string_view what) { return ctx.constantBefore(node, nodeBase(node, what), std::move(t)); }
  /// A scalar of integer type `t` holding `v` (its low bytes: two's complement).
  Value *intScalar(DataType t, int64_t v, std::string_view what) {
    std::vector<uint8_t> bytes(elementSize(t));
    std::memcpy(bytes.data(), &v, bytes.size());
    return constant(Tensor::fromValues(t, {}, bytes), what);
  }
  /// Turns `node` into `type` over `in` (attributes replaced by `attrs`).
  template <typename... A> void become(const char *type, const std::vector<Value *> &in, A... attrs) {
    node.attributes().clear();
    node.setOpType(type);
    node.resizeOperands(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      node.setOperand(i, in[i]);
    (node.setAttr(std::move(attrs)), ...);
  }
};

bool isIntegerType(DataType t) {
  switch (t) {
  case DataType::Int8: case DataType::Int16: case DataType::Int32: case DataType::Int64:
  case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64: return true;
  default: return false;
  }
}
bool isUnsignedType(DataType t) {
  return t == DataType::UInt8 || t == DataType::UInt16 || t == DataType::UInt32 || t == DataType::UInt64;
}
bool isFloatType(DataType t) { return t == DataType::Float || t == DataType::Double || t == DataType::Float16; }

/// The element type of every present operand, when all are known and alike.
std::optional<DataType> operandsType(const Node &node) {
  std::optional<DataType> t;
  for (Value *v : node.operands()) {
    if (!v)
      continue;
    std::optional<DataType> u = knownElemType(v);
    if (!u || (t && *t != *u))
      return std::nullopt;
    t = u;
  }
  return t;
}

/// Downgrade below 14 (Add, Sub, Mul, Div): the 8- and 16-bit integers came
/// at 14. They are computed in a wider type the older version takes and
/// brought back with the wraparound of their own arithmetic (modulo 2^n):
///   uint8/uint16: in uint32 (a + b, a - b as a + (2^n - b), a * b and a / b
///     all fit without wrapping), then v - (v / 2^n) * 2^n (skipped for Div,
///     whose quotient fits);
///   int8/int16: in int64, then ((v + 2^(n-1) + 2^32) mod 2^n) - 2^(n-1) by
///     the same quotient (the operand of the mod is positive), which is the
///     two's complement wraparound (-128 / -1 is -128, as C++ computes it);
/// then Cast back (the value fits, so the Cast is exact).
///   Before (opset 14):                After (opset 13):
///     z = Add(a: uint8, b: uint8)       v = Add(Cast<to = uint32>(a), Cast<to = uint32>(b))
///                                       r = Sub(v, Mul(Div(v, 256), 256))
///                                       z = Cast<to = uint8>(r)
std::string smallIntArith14(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> t = operandsType(node);
  if (!t || (*t != DataType::UInt8 && *t != DataType::UInt16 && *t != DataType::Int8 && *t != DataType::Int16))
    return bumpTyped(node, ctx);
  if (node.numOperands() != 2 || !node.operand(0) || !node.operand(1))
    return "it does not have two operands";
  Writer w{node, ctx};
  bool unsignedT = isUnsignedType(*t);
  DataType wide = unsignedT ? DataType::UInt32 : DataType::Int64;
  int64_t modulus = int64_t{1} << (8 * elementSize(*t));
  Value *a = w.cast(node.operand(0), wide, "wide_a");
  Value *b = w.cast(node.operand(1), wide, "wide_b");
  std::string op = node.opType();
  Value *v;
  if (op == "Sub" && unsignedT)
    v = w.op("Add", {a, w.op("Sub", {w.intScalar(wide, modulus, "modulus"), b}, "complement")}, "wide");
  else
    v = w.op(op.c_str(), {a, b}, "wide");
  if (!(op == "Div" && unsignedT)) {
    Value *half = unsignedT ? nullptr : w.intScalar(wide, modulus / 2, "half");
    Value *u = unsignedT ? v : w.op("Add", {v, w.intScalar(wide, modulus / 2 + (int64_t{1} << 32), "offset")}, "offset");
    Value *m = w.intScalar(wide, modulus, "modulus");
    Value *r = w.op("Sub", {u, w.op("Mul", {w.op("Div", {u, m}, "quotient"), m}, "multiple")}, "wrapped");
    v = unsignedT ? r : w.op("Sub", {r, half}, "signed");
  }
  w.become("Cast", {v}, Attribute::makeInt("to", static_cast<int64_t>(*t)));
  return "";
}

/// Given a value x and bounds (a comparison and a value each), Execute:
/// writes x = Where(cmp(x, bound), bound, x) for each in turn, in int64
/// for the integer types ONNX Runtime's Where and Less lack (8- and 16-bit,
/// uint32: each value fits int64, so the Casts are exact), Result: the
/// last value, in x's type. `atTarget`: written in the target's form
/// (Writer::opAtTarget), for a step to an opset without Where.
Value *selectChain(Writer &w, Value *x, DataType t, std::vector<std::pair<const char *, Value *>> bounds,
                   bool atTarget) {
  auto op = [&](const char *type, const std::vector<Value *> &in, std::string_view what) {
    return atTarget ? w.opAtTarget(type, in, what) : w.op(type, in, what);
  };
  auto cast = [&](Value *v, DataType to, std::string_view what) {
    return atTarget ? w.opAtTarget("Cast", {v}, what, Attribute::makeInt("to", static_cast<int64_t>(to)))
                    : w.cast(v, to, what);
  };
  bool widen = t != DataType::Int32 && t != DataType::Int64 && t != DataType::UInt64;
  if (widen) {
    x = cast(x, DataType::Int64, "wide");
    for (auto &b : bounds)
      b.second = cast(b.second, DataType::Int64, "wide_bound");
  }
  for (auto &[cmp, bound] : bounds)
    x = op("Where", {op(cmp, {x, bound}, "outside"), bound, x}, "bounded");
  return widen ? cast(x, t, "narrow") : x;
}

/// Downgrade below 12 (Min, Max): integers came at 12 (8 takes floats).
/// Integers are compared and chosen left to right, which is exact (and
/// broadcasts as the variadic op does):
///   Before (opset 12):         After (opset 11):
///     y = Min(a, b, c)           m = Where(Less(b, a), b, a)
///                                t = Where(Less(c, m), c, m)
///                                y = Identity(t)
/// (Max with Greater; in int64 for the types ONNX Runtime's Where lacks,
/// see selectChain.) Min-8 is the older form, which has no Where: the
/// chain is written in the target's form (9 to 11), and the node becomes
/// its Identity; below 9 it is refused.
std::string minMaxInts12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> t = operandsType(node);
  if (!t || !isIntegerType(*t))
    return bumpTyped(node, ctx);
  if (ctx.target < 9)
    return "its operands are " + dataTypeName(*t) + ", which " + node.opType() +
           " takes from opset 12, and the form that compares and selects needs Where (opset 9)";
  Writer w{node, ctx};
  std::vector<Value *> in;
  for (Value *v : node.operands())
    if (v)
      in.push_back(v);
  if (in.empty())
    return "it has no operands";
  std::vector<std::pair<const char *, Value *>> picks;
  for (size_t i = 1; i < in.size(); ++i)
    picks.emplace_back(node.is("Min") ? "Greater" : "Less", in[i]);
  w.become("Identity", {selectChain(w, in[0], *t, picks, /*atTarget=*/true)});
  return "";
}

/// Downgrade below 12 (Clip): integers came at 12 (11 takes floats).
/// Clip(x, lo, hi) = Min(Max(x, lo), hi) with Where, which is exact for
/// integers (and hi wins when lo > hi, as the spec says):
///   Before (opset 12):         After (opset 11):
///     y = Clip(x, lo, hi)        m = Where(Less(x, lo), lo, x)
///                                y = Identity(Where(Greater(m, hi), hi, m))
/// (in int64 for the types ONNX Runtime's Where lacks, see selectChain).
std::string clipInts12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> t = node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt;
  if (!t || !isIntegerType(*t))
    return bumpTyped(node, ctx);
  Writer w{node, ctx};
  std::vector<std::pair<const char *, Value *>> bounds; // raise to lo, then lower to hi
  if (node.numOperands() > 1 && node.operand(1))
    bounds.emplace_back("Less", node.operand(1));
  if (node.numOperands() > 2 && node.operand(2))
    bounds.emplace_back("Greater", node.operand(2));
  w.become("Identity", {selectChain(w, node.operand(0), *t, bounds, /*atTarget=*/false)});
  return "";
}

/// Downgrade below 11 (Equal): 7 takes bool, int32 and int64.
///   floats: a == b is neither a < b nor a > b, neither being NaN (IsNaN
///   came at 9; a number is below 1 or above 0, NaN is neither):
///     Before (opset 11):         After (opset 7):
///       y = Equal(a, b)            n = And(Or(Less(a, 1), Greater(a, 0)),
///                                          Or(Less(b, 1), Greater(b, 0)))
///                                  y = And(Not(Or(Less(a, b), Greater(a, b))), n)
///   other integers: both Cast to int64, which keeps equality (a
///   bijection for uint64, exact for the others).
std::string equalTyped11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> t = operandsType(node);
  if (!t || *t == DataType::Bool || *t == DataType::Int32 || *t == DataType::Int64)
    return bumpTyped(node, ctx);
  if (node.numOperands() != 2 || !node.operand(0) || !node.operand(1))
    return "it does not have two operands";
  Writer w{node, ctx};
  Value *a = node.operand(0), *b = node.operand(1);
  if (isIntegerType(*t)) {
    w.become("Equal", {w.cast(a, DataType::Int64, "wide_a"), w.cast(b, DataType::Int64, "wide_b")});
    return "";
  }
  if (!isFloatType(*t))
    return bumpTyped(node, ctx);
  Value *one = w.constant(fromDoubles(*t, {}, {1.0}), "one");
  Value *zero = w.constant(fromDoubles(*t, {}, {0.0}), "zero");
  auto number = [&](Value *v, std::string_view what) {
    return w.op("Or", {w.op("Less", {v, one}, "below_one"), w.op("Greater", {v, zero}, "above_zero")}, what);
  };
  Value *numbers = w.op("And", {number(a, "number_a"), number(b, "number_b")}, "numbers");
  Value *ordered = w.op("Or", {w.op("Less", {a, b}, "less"), w.op("Greater", {a, b}, "greater")}, "ordered");
  w.become("And", {w.op("Not", {ordered}, "unordered"), numbers});
  return "";
}

/// Downgrade below 12 (Pow): 7 takes one float type for base and exponent;
/// 12 added integer bases (int32, int64) and an exponent of any numeric
/// type.
///   float base: both in double, Pow, Cast back to the base's type (the
///     float result within rounding; an integer exponent past 2^53 in
///     magnitude would lose its parity);
///   int32 base: the same in double, then Cast to int32: exact for every
///     result int32 holds (each is a double, and pow is within an ulp);
///   int64 base: a constant exponent that is a small non-negative integer
///     (up to 64) becomes repeated squaring with Mul (exact, int64's own
///     wraparound); otherwise refused: results past 2^53 would round in
///     double.
///   Before (opset 12):                 After (opset 11):
///     z = Pow(x: float, y: int64)        z = Cast<to = float>(Pow(Cast<to = double>(x),
///                                                                Cast<to = double>(y)))
std::string powTyped12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  if (node.numOperands() != 2 || !node.operand(0) || !node.operand(1))
    return bumpTyped(node, ctx);
  Value *x = node.operand(0), *y = node.operand(1);
  std::optional<DataType> tx = knownElemType(x), ty = knownElemType(y);
  if (!tx || !ty)
    return bumpTyped(node, ctx);
  if (isFloatType(*tx) && *tx == *ty)
    return "";
  Writer w{node, ctx};
  if (*tx == DataType::Int64) {
    std::optional<std::vector<int64_t>> e = constantInts(y);
    if (!e) {
      TensorPtr c = constantTensor(y);
      std::optional<std::vector<double>> d = c ? toDoubles(*c) : std::nullopt;
      if (d && d->size() == 1 && (*d)[0] == std::floor((*d)[0]) && (*d)[0] >= 0 && (*d)[0] <= 64)
        e = std::vector<int64_t>{static_cast<int64_t>((*d)[0])};
    }
    if (!e || e->size() != 1 || (*e)[0] < 0 || (*e)[0] > 64)
      return "its base is int64 and its exponent is not a constant integer from 0 to 64 (a float64 power "
             "would round results past 2^53)";
    int64_t n = (*e)[0];
    if (n == 0) {
      // x^0 = 1 for every x, in x's shape broadcast with y's.
      Value *one = w.intScalar(DataType::Int64, 1, "one");
      w.become("Add", {w.op("Mul", {x, w.intScalar(DataType::Int64, 0, "zero")}, "zeros"), one});
      return "";
    }
    Value *result = nullptr, *square = x;
    for (int64_t k = n;; k >>= 1) {
      if (k & 1)
        result = result ? w.op("Mul", {result, square}, "power") : square;
      if (k <= 1)
        break;
      square = w.op("Mul", {square, square}, "square");
    }
    w.become("Identity", {result});
    return "";
  }
  if (*tx != DataType::Int32 && !isFloatType(*tx))
    return bumpTyped(node, ctx);
  if (!isIntegerType(*ty) && !isFloatType(*ty))
    return bumpTyped(node, ctx);
  Value *xd = *tx == DataType::Double ? x : w.cast(x, DataType::Double, "base");
  Value *yd = *ty == DataType::Double ? y : w.cast(y, DataType::Double, "exponent");
  Value *p = w.op("Pow", {xd, yd}, "double");
  if (*tx == DataType::Double)
    w.become("Identity", {p});
  else
    w.become("Cast", {p}, Attribute::makeInt("to", static_cast<int64_t>(*tx)));
  return "";
}

/// Downgrade below 12 (MaxPool): int8 and uint8 came at 12. The pooling
/// runs in float, which holds every 8-bit value, and the maximum is Cast
/// back: exact (the Indices result does not depend on the type).
///   Before (opset 12):              After (opset 11):
///     y = MaxPool(x: uint8)           y = Cast<to = uint8>(MaxPool(Cast<to = float>(x)))
std::string maxPoolInts12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up)
    return "";
  std::optional<DataType> t = node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt;
  if (!t || (*t != DataType::Int8 && *t != DataType::UInt8))
    return bumpTyped(node, ctx);
  Writer w{node, ctx};
  node.setOperand(0, w.cast(node.operand(0), DataType::Float, "float"));
  Node *back = node.graph()->createNode("Cast", {node.result(0)}, {ctx.model.names().fresh(nodeBase(node, "cast"))});
  back->setName(ctx.model.names().fresh(back->result(0)->name() + "_node"));
  back->setAttr(Attribute::makeInt("to", static_cast<int64_t>(*t)));
  std::optional<Type> inner;
  if (node.result(0)->type() && node.result(0)->type()->shape())
    inner = Type::tensor(DataType::Float, node.result(0)->type()->shape());
  else
    inner = Type::tensor(DataType::Float);
  wrapResult(node, 0, back, ctx, inner, "float");
  return "";
}

/// Downgrade below 12 (ArgMax, ArgMin): select_last_index = 1 (the last
/// of equal extremes) came at 12. The older op takes the first one, so it
/// runs on the data reversed along the axis, and the index is counted
/// back from the end: exact.
///   Before (opset 12, x: float[2,3]):        After (opset 11):
///     y = ArgMax<axis = 1,                     r = Gather<axis = 1>(x, Constant<int64[3] {2, 1, 0}>())
///                select_last_index = 1>(x)     i = ArgMax<axis = 1>(r)
///                                              y = Sub(Constant<int64 2>(), i)
/// The reversal is a Gather of constant indices when the axis's dim is
/// known, else a Slice with step -1 and the dim read from Shape(x); the
/// rank must be known.
std::string selectLastIndex12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.attrInt("select_last_index", 0) == 0)
    return "";
  Value *x = node.operand(0);
  std::optional<Shape> s = x ? knownShape(x) : std::nullopt;
  if (!s)
    return "select_last_index = 1 needs opset 12 unless the input's rank is known (to reverse the axis)";
  auto rank = static_cast<int64_t>(s->size());
  int64_t axis = node.attrInt("axis", 0), a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    return "its axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  Writer w{node, ctx};
  Value *reversed, *last;
  const Dim &d = (*s)[static_cast<size_t>(a)];
  if (d.isValue()) {
    std::vector<int64_t> ids(static_cast<size_t>(d.getValue()));
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = d.getValue() - 1 - static_cast<int64_t>(i);
    reversed = w.op("Gather", {x, w.constant(StepContext::int64s(ids), "reversed_ids")}, "reversed",
                    Attribute::makeInt("axis", a));
    last = w.constant(StepContext::int64s({d.getValue() - 1}, /*scalar=*/true), "last");
  } else {
    reversed = w.op("Slice",
                    {x, w.constant(StepContext::int64s({-1}), "rev_start"),
                     w.constant(StepContext::int64s({INT64_MIN}), "rev_end"),
                     w.constant(StepContext::int64s({a}), "rev_axis"), w.constant(StepContext::int64s({-1}), "rev_step")},
                    "reversed");
    Value *n = w.op("Gather", {w.op("Shape", {x}, "shape"), w.constant(StepContext::int64s({a}, true), "axis_id")},
                    "dim");
    last = w.op("Sub", {n, w.intScalar(DataType::Int64, 1, "one")}, "last");
  }
  Value *first = w.op(node.opType().c_str(), {reversed}, "first",
                      Attribute::makeInt("axis", a), Attribute::makeInt("keepdims", node.attrInt("keepdims", 1)));
  w.become("Sub", {last, first});
  return "";
}

/// Downgrade below 11 (Gemm): C became optional at 11; without it, a zero
/// scalar of A's type (unidirectionally broadcast, beta * 0 adds nothing).
std::string gemmBias11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || (node.numOperands() > 2 && node.operand(2)))
    return "";
  std::optional<DataType> t = node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt;
  if (!t || (!isFloatType(*t) && !isIntegerType(*t)))
    return "its C is omitted (required before 11) and A's element type is unknown (for a zero C)";
  std::vector<uint8_t> zero(elementSize(*t), 0);
  node.resizeOperands(3);
  node.setOperand(2, ctx.constantBefore(node, nodeBase(node, "zero_c"), Tensor::fromValues(*t, {}, zero)));
  return "";
}

/// Downgrade below 11: DepthToSpace's mode = "CRD" (column, row, depth:
/// the channel index is c * b * b + i * b + j), for an input of static
/// shape [N, C, H, W] and blocksize b, as its spec's formula:
///   t = Reshape(x, [N, C / (b * b), b, b, H, W])
///   u = Transpose<perm = [0, 1, 4, 2, 5, 3]>(t)
///   y = Identity(Reshape(u, [N, C / (b * b), H * b, W * b]))
/// DCR (the default, what DepthToSpace-1 does) keeps the node.
std::string depthToSpace11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.attrString("mode", "DCR") != "CRD")
    return "";
  std::optional<Shape> s = knownShape(node.operand(0));
  int64_t b = node.attrInt("blocksize", 0);
  if (!s || s->size() != 4 || std::any_of(s->begin(), s->end(), [](const Dim &d) { return !d.isValue(); }))
    return "its mode 'CRD' needs opset 11, and its form from Reshape and Transpose needs a static 4-D input";
  int64_t n = (*s)[0].getValue(), c = (*s)[1].getValue(), h = (*s)[2].getValue(), w = (*s)[3].getValue();
  if (b <= 0 || c % (b * b) != 0)
    return "its channels are not a multiple of blocksize squared";
  Value *shape6 = ctx.constantBefore(node, nodeBase(node, "blocks_shape"), StepContext::int64s({n, c / (b * b), b, b, h, w}));
  Node *t = ctx.nodeBefore(node, "Reshape", {node.operand(0), shape6}, nodeBase(node, "blocks"));
  Node *u = ctx.nodeBefore(node, "Transpose", {t->result(0)}, nodeBase(node, "interleaved"));
  u->setAttr(Attribute::makeInts("perm", {0, 1, 4, 2, 5, 3}));
  Value *shape4 = ctx.constantBefore(node, nodeBase(node, "out_shape"), StepContext::int64s({n, c / (b * b), h * b, w * b}));
  Node *y = ctx.nodeBefore(node, "Reshape", {u->result(0), shape4}, nodeBase(node, "space"));
  // The node lands at version 1 of its new op's history: Identity-1 holds
  // at every opset below 11, Reshape-1 (a shape attribute) would not.
  node.attributes().clear();
  node.setOpType("Identity");
  node.resizeOperands(1);
  node.setOperand(0, y->result(0));
  return "";
}

struct Bumps {
  const char *op;
  std::vector<int> versions;
};

} // namespace

void registerVersionBumps(AdapterRegistry &r) {
  static const Bumps kBoth[] = {
      {"Abs", {13}}, {"Acos", {22}}, {"Acosh", {22}}, {"Add", {13, 14}}, {"ArgMax", {12, 13}},
      {"ArgMin", {12, 13}}, {"Asin", {22}}, {"Asinh", {22}}, {"Atan", {22}}, {"Atanh", {22}},
      {"Attention", {24}}, {"AveragePool", {10, 11, 19, 22}}, {"BatchNormalization", {15}},
      {"Bernoulli", {22}}, {"Cast", {9, 13, 21, 23}}, {"CastLike", {21, 23}}, {"Ceil", {13}},
      {"Clip", {12, 13}}, {"Concat", {13}}, {"Constant", {9, 11, 13, 19, 21, 23, 24}},
      {"ConstantOfShape", {20, 21, 23, 24}}, {"Conv", {11, 22}}, {"ConvTranspose", {11, 22}}, {"Cos", {22}},
      {"Cosh", {22}}, {"CumSum", {14}}, {"DeformConv", {22}}, {"DepthToSpace", {11, 13}},
      {"DequantizeLinear", {19, 21, 24}}, {"Det", {22}}, {"Div", {13, 14}}, {"Dropout", {13, 22}},
      {"Elu", {22}}, {"Equal", {11, 13, 19}}, {"Erf", {13}}, {"Exp", {13}}, {"Expand", {13}}, {"EyeLike", {22}},
      {"Flatten", {9, 13, 21, 23, 24}}, {"Floor", {13}}, {"GRU", {14, 22}}, {"Gather", {13}},
      {"GatherElements", {13}}, {"GatherND", {12, 13}}, {"Gemm", {9, 11, 13}}, {"GlobalAveragePool", {22}},
      {"GlobalLpPool", {22}}, {"GlobalMaxPool", {22}}, {"Greater", {9, 13}}, {"GreaterOrEqual", {16}},
      {"GridSample", {22}}, {"HardSigmoid", {22}}, {"HardSwish", {22}},
      {"Identity", {13, 14, 16, 19, 21, 23, 24}}, {"If", {11, 13, 16, 19, 21, 23, 24}},
      {"InstanceNormalization", {22}}, {"IsInf", {20}}, {"IsNaN", {13, 20}}, {"LRN", {13}}, {"LSTM", {14, 22}},
      {"LeakyRelu", {16}}, {"Less", {9, 13}}, {"LessOrEqual", {16}}, {"Log", {13}},
      {"Loop", {11, 13, 16, 19, 21, 23, 24}}, {"LpNormalization", {22}}, {"LpPool", {11, 18, 22}},
      {"MatMul", {9, 13}}, {"Max", {12, 13}}, {"Min", {12, 13}}, {"Mean", {13}}, {"Sum", {13}},
      {"MaxPool", {8, 10, 11, 12, 22}}, {"MaxRoiPool", {22}}, {"MaxUnpool", {11, 22}},
      {"MeanVarianceNormalization", {13}}, {"Mish", {22}}, {"Mod", {13}}, {"Mul", {13, 14}},
      {"Multinomial", {22}}, {"Neg", {13}}, {"NegativeLogLikelihoodLoss", {13, 22}}, {"NonMaxSuppression", {11}},
      {"NonZero", {13}}, {"OptionalGetElement", {18}}, {"OptionalHasElement", {18}}, {"PRelu", {9, 16}},
      {"Pad", {13, 21, 23, 24}}, {"Pow", {12, 13, 15}}, {"QLinearMatMul", {21}},
      {"QuantizeLinear", {24}}, {"RNN", {14, 22}}, {"RandomNormal", {22}},
      {"RandomNormalLike", {22}}, {"RandomUniform", {22}}, {"RandomUniformLike", {22}}, {"Reciprocal", {13}},
      {"ReduceMax", {12, 20}}, {"ReduceMin", {12, 20}}, {"Relu", {13, 14}},
      {"Reshape", {13, 14, 19, 21, 23, 24}}, {"Round", {22}}, {"Scan", {16, 19, 21, 23, 24}},
      {"ScatterElements", {13, 16}}, {"ScatterND", {13, 16}}, {"Selu", {22}},
      {"Shape", {13, 19, 21, 23, 24}}, {"Sigmoid", {13}}, {"Sign", {13}}, {"Sin", {22}}, {"Sinh", {22}},
      {"Size", {13, 19, 21, 23, 24}}, {"Slice", {13}}, {"Softplus", {22}}, {"Softsign", {22}},
      {"SpaceToDepth", {13}}, {"SplitToSequence", {24}}, {"Sqrt", {13}}, {"Squeeze", {21, 23, 24}},
      {"Sub", {13, 14}}, {"Tan", {22}}, {"Tanh", {13}}, {"Tile", {13}}, {"ThresholdedRelu", {22}},
      {"TopK", {24}}, {"Transpose", {13, 21, 23, 24}}, {"Unsqueeze", {21, 23, 24}}, {"Where", {16}},
      {"SoftmaxCrossEntropyLoss", {13}}, {"RoiAlign", {22}}, {"AveragePool", {7}},
  };
  for (const Bumps &b : kBoth)
    for (int v : b.versions)
      r.addBoth(b.op, v, bump);
  for (const AddedTypes &a : addedTypes())
    r.addBoth(a.op, a.version, bumpTyped);
  // Same-shape operands (6) became broadcasting (8): older models mean the
  // same; a downgrade would need equal shapes, which is not checked here.
  for (const char *op : {"Max", "Min", "Mean", "Sum"})
    r.add(op, 8, Direction::Up, bump);
  // Negative axes became legal at 11.
  for (const char *op : {"ArgMax", "ArgMin", "Compress", "Concat", "Flatten", "Gather", "Hardmax", "LogSoftmax",
                         "Softmax", "OneHot", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Split", "Squeeze",
                         "Unsqueeze", "TopK"})
    r.addBoth(op, 11, nonNegativeAxes);
  for (const char *op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    r.addBoth(op, 13, bump);
  r.addBoth("DepthToSpace", 11, depthToSpace11);
  r.addBoth("QuantizeLinear", 13, scalarScale);
  r.addBoth("DequantizeLinear", 13, scalarScale);
  r.addBoth("ScatterElements", 18, noMinMaxReduction);
  r.addBoth("ScatterND", 18, noMinMaxReduction);
  r.addBoth("Pad", 19, noWrapPad);
  r.addBoth("Reshape", 14, allowzero14);
  r.add("MaxPool", 10, Direction::Down, poolCeilMode10);
  r.add("AveragePool", 10, Direction::Down, poolCeilMode10);
  r.addBoth("Constant", 12, constantValue12);
  for (const char *op : {"Cast", "CastLike"}) {
    r.addBoth(op, 19, saturate19);
    r.addBoth(op, 24, roundMode24);
  }
  r.addBoth("QuantizeLinear", 19, saturate19);
  r.addBoth("QuantizeLinear", 21, outputDtype21);
  r.addBoth("QuantizeLinear", 23, scaleTyped23);
  r.addBoth("DequantizeLinear", 23, scaleTyped23);
  for (const char *op : {"RNN", "GRU", "LSTM"})
    r.addBoth(op, 14, layout14);
  for (const char *op : {"Add", "Sub", "Mul", "Div"})
    r.addBoth(op, 14, smallIntArith14);
  r.addBoth("Min", 12, minMaxInts12);
  r.addBoth("Max", 12, minMaxInts12);
  r.addBoth("Clip", 12, clipInts12);
  r.addBoth("Equal", 11, equalTyped11);
  r.addBoth("Pow", 12, powTyped12);
  r.addBoth("MaxPool", 12, maxPoolInts12);
  r.addBoth("ArgMax", 12, selectLastIndex12);
  r.addBoth("ArgMin", 12, selectLastIndex12);
  r.addBoth("Gemm", 11, gemmBias11);
}

} // namespace opset
} // namespace onnxslim
