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
// Steps that are not listed (DFT-20's axis input, and those with their own
// files: Scan-9's batch axis, GroupNormalization-21's per-channel scale...)
// have no adapter here.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/ValueUtils.h"

#include <algorithm>

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
  r.addBoth("QuantizeLinear", 13, scalarScale);
  r.addBoth("DequantizeLinear", 13, scalarScale);
  r.addBoth("ScatterElements", 18, noMinMaxReduction);
  r.addBoth("ScatterND", 18, noMinMaxReduction);
  r.addBoth("Pad", 19, noWrapPad);
  r.addBoth("Reshape", 14, allowzero14);
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
}

} // namespace opset
} // namespace onnxslim
