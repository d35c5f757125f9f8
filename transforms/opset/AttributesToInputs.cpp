//===- transforms/opset/AttributesToInputs.cpp - Attributes that became inputs ===//
//
// Adapters for the op versions that turned an attribute into an input:
//
//   op                    version  attribute -> input
//   Squeeze, Unsqueeze    13       axes -> input 1
//   ReduceSum             13       axes -> input 1
//   Reduce* (the others)  18       axes -> input 1
//   Split                 13       split -> input 1
//   Pad                   11       pads -> input 1, value -> input 2
//   Slice                 10       starts, ends, axes -> inputs 1, 2, 3
//                         11       (negative axes)
//   TopK                  10       k -> input 1
//   Clip                  11       min, max -> inputs 1, 2
//   Dropout               12       ratio -> input 1 (and training_mode)
//
//   Before (opset 12):                  After (target=13):
//     y = Squeeze<axes = [0]>(x)          axes = Constant<value = int64[1] {0}>()
//                                         y = Squeeze(x, axes)
//
// Upgrading moves the attribute into a Constant (int64 for axes, pads,
// starts..., k; the data's element type for Pad's value and Clip's bounds,
// which must then be known). Downgrading moves the input back and refuses a
// non-constant one: the older version cannot take a computed value. Also:
// the Reduce ops' noop_with_empty_axes (dropped when axes are given; with
// none, 1 makes ReduceSum/Mean/Max/Min/Prod/LogSumExp an Identity and is
// refused for the others), Split-18's num_outputs (only when the dim is
// known: no `split` when the split is even, else a constant `split` of
// chunks of ceil(n / k), the last one smaller, as Split-18 splits), Slice's
// negative axes (below 11, counted from the front with the data's rank: a
// constant rewritten, computed axes through Mod(axes, rank)) and steps
// (only all ones before 10), Pad's and Clip's element types before 11
// (floats only), Dropout's mask type at 10 (bool; only an unused mask
// converts) and its training_mode (only a constant false goes back before
// 12).
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/fusion/FusionUtils.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {
namespace opset {

namespace {

std::string bump(Node &, StepContext &) { return ""; }


/// Squeeze/Unsqueeze-13, ReduceSum-13, Reduce*-18: axes; Split-13: split.
template <const char *Name> std::string movesToInput1(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    attributeToInput(node, ctx, Name, 1);
    return "";
  }
  return inputToAttribute(node, 1, Name);
}
constexpr char kAxes[] = "axes";
constexpr char kSplit[] = "split";

/// ReduceSum-13, Reduce*-18: axes -> input 1, and noop_with_empty_axes,
/// which the older version lacks. Going down, constant axes go back to the
/// attribute (computed ones are refused) and noop_with_empty_axes, which
/// then changes nothing, is dropped. Without axes (none, or an empty
/// constant), noop_with_empty_axes = 0 reduces every axis, as the older
/// version does without its attribute; noop_with_empty_axes = 1 reduces
/// over no axis: where that is the data itself (Sum, Mean, Max, Min, Prod,
/// LogSumExp: the reduction of one element is that element) the node
/// becomes an Identity of its data; the others (L1, L2, LogSum, SumSquare)
/// are refused: the current spec applies their abs, log or square to each
/// element, older readings and runtimes pass the data through.
std::string reduceAxes(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    attributeToInput(node, ctx, kAxes, 1);
    return "";
  }
  std::optional<std::vector<int64_t>> axes = constantIntsOperand(node, 1);
  bool none = !node.operand(1) || (axes && axes->empty());
  if (!none || node.attrInt("noop_with_empty_axes", 0) == 0) {
    node.removeAttr("noop_with_empty_axes");
    if (!none)
      return inputToAttribute(node, 1, kAxes);
    clearOperand(node, 1);
    trimOperands(node);
    return "";
  }
  for (const char *op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceSumSquare"})
    if (node.is(op))
      return "with noop_with_empty_axes = 1 and no axes it works element by element, and readings differ on what "
             "it computes there (the current spec applies its abs, log or square to each element, older ones pass "
             "the data through)";
  clearOperand(node, 1);
  node.resizeOperands(1);
  node.attributes().clear();
  node.setOpType("Identity");
  return "";
}

/// Split-18 (num_outputs) -> Split-13: the sizes Split-18 splits into,
/// when the dim is known: chunks of ceil(n / k), the last one smaller
/// (n - ceil(n / k) * (k - 1)). When k divides n that is Split-13 without
/// `split` (an even split into its outputs); otherwise the sizes become a
/// constant `split` input (an attribute again below 13, by the next step).
std::string split18(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    // Split-13 without `split` splits evenly into its outputs; Split-18
    // needs that count said.
    if (!node.operand(1))
      node.setAttr(Attribute::makeInt("num_outputs", static_cast<int64_t>(node.numResults())));
    return "";
  }
  if (!node.hasAttr("num_outputs"))
    return "";
  int64_t parts = node.attrInt("num_outputs", 0);
  if (node.operand(1)) {
    node.removeAttr("num_outputs");
    return "";
  }
  std::string what = "num_outputs=" + std::to_string(parts);
  if (parts <= 0 || parts != static_cast<int64_t>(node.numResults()))
    return what + " does not match its " + std::to_string(node.numResults()) + " outputs";
  std::optional<Shape> s = knownShape(node.operand(0));
  if (!s)
    return what + " needs opset 18 unless the input's shape is known (Split-13 splits evenly; Split-18's last "
                  "chunk may be smaller)";
  int64_t rank = static_cast<int64_t>(s->size()), axis = node.attrInt("axis", 0);
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return "its axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  const Dim &d = (*s)[static_cast<size_t>(a)];
  if (!d.isValue())
    return what + " needs opset 18 unless dim " + std::to_string(a) +
           " of the input is known (Split-13 splits evenly; Split-18's last chunk may be smaller)";
  int64_t n = d.getValue(), chunk = (n + parts - 1) / parts, last = n - chunk * (parts - 1);
  if (last < 0)
    return what + " cannot split a dim of " + std::to_string(n) + ": its first " + std::to_string(parts - 1) +
           " chunks of " + std::to_string(chunk) + " already exceed it";
  node.removeAttr("num_outputs");
  if (n % parts == 0)
    return "";
  std::vector<int64_t> sizes(static_cast<size_t>(parts), chunk);
  sizes.back() = last;
  node.resizeOperands(2);
  node.setOperand(1, ctx.constantBefore(node, nodeBase(node, "split"), StepContext::int64s(sizes)));
  return "";
}

/// Given a value and a number, Result: a scalar of the value's element type, or null.
TensorPtr scalarLike(const Value *v, double number) {
  std::optional<DataType> t = v ? knownElemType(v) : std::nullopt;
  if (!t || !isFloatLike(*t))
    return nullptr;
  return fromDoubles(*t, {}, {number});
}

bool isFloatType(const Value *v) {
  std::optional<DataType> t = v ? knownElemType(v) : std::nullopt;
  return t && (*t == DataType::Float || *t == DataType::Double || *t == DataType::Float16);
}

/// A constant float scalar operand (or nullopt).
std::optional<double> constantScalar(const Node &node, size_t i) {
  std::optional<std::vector<double>> d = node.operand(i) ? constantDoubles(node.operand(i)) : std::nullopt;
  if (!d || d->size() != 1)
    return std::nullopt;
  return (*d)[0];
}

/// Pad-2 (pads, value attributes) <-> Pad-11 (inputs).
std::string pad11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    float value = node.attrFloat("value", 0.0f);
    if (value != 0.0f) {
      TensorPtr t = scalarLike(node.operand(0), value);
      if (!t)
        return "the element type of its data is unknown (needed for its constant value)";
      attributeToInput(node, ctx, "pads", 1);
      node.resizeOperands(3);
      node.setOperand(2, ctx.constantBefore(node, nodeBase(node, "value"), t));
    } else {
      attributeToInput(node, ctx, "pads", 1);
    }
    node.removeAttr("value");
    return "";
  }
  if (!isFloatType(node.operand(0)))
    return "Pad-2 takes float data only";
  if (node.operand(2)) {
    std::optional<double> v = constantScalar(node, 2);
    if (!v)
      return "its constant_value is not a constant";
    node.setAttr(Attribute::makeFloat("value", static_cast<float>(*v)));
    clearOperand(node, 2);
  }
  if (!node.operand(1) || !constantInts(node.operand(1)))
    return "its pads are not a constant";
  return inputToAttribute(node, 1, "pads");
}

/// Slice-1 (starts, ends, axes attributes) <-> Slice-10 (inputs, steps).
std::string slice10(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (!node.hasAttr("starts") || !node.hasAttr("ends"))
      return "it has no starts or ends";
    attributeToInput(node, ctx, "starts", 1);
    attributeToInput(node, ctx, "ends", 2);
    attributeToInput(node, ctx, "axes", 3);
    return "";
  }
  if (node.operand(4)) {
    std::optional<std::vector<int64_t>> steps = constantInts(node.operand(4));
    if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; }))
      return "its steps are not all 1 (Slice-1 has no steps)";
    clearOperand(node, 4);
  }
  for (size_t i : {1u, 2u, 3u})
    if (node.operand(i) && !constantInts(node.operand(i)))
      return "its input " + std::to_string(i) + " ('" + node.operand(i)->name() + "') is not a constant";
  if (std::string why = inputToAttribute(node, 3, "axes"); !why.empty())
    return why;
  if (std::string why = inputToAttribute(node, 2, "ends"); !why.empty())
    return why;
  return inputToAttribute(node, 1, "starts");
}

/// Slice-10 -> Slice-11 changed nothing but negative axes, which Slice-10
/// does not take. Going down, with the data's rank r known (else refused),
/// negative entries of a constant axes input become a constant of them
/// plus r; computed axes are taken through Mod(axes, r), which is each
/// axis in [-r, r-1] counted from the front (below 10, Slice-1 refuses
/// them anyway).
std::string slice11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up || node.numOperands() < 4 || !node.operand(3))
    return "";
  Value *in = node.operand(3);
  std::optional<std::vector<int64_t>> axes = constantInts(in);
  if (axes && std::none_of(axes->begin(), axes->end(), [](int64_t a) { return a < 0; }))
    return "";
  if (!axes && ctx.target < 10)
    return "";
  std::optional<Shape> s = node.operand(0) ? knownShape(node.operand(0)) : std::nullopt;
  if (!s)
    return "its axes " + std::string(axes ? "are" : "may be") +
           " negative (allowed from opset 11) and the data's rank is unknown";
  auto rank = static_cast<int64_t>(s->size());
  if (axes) {
    for (int64_t &a : *axes)
      if (a < 0)
        a += rank;
    clearOperand(node, 3);
    node.setOperand(3, ctx.constantBefore(node, nodeBase(node, "axes"), StepContext::int64s(*axes)));
    return "";
  }
  std::optional<DataType> t = knownElemType(in);
  if (!t || (*t != DataType::Int64 && *t != DataType::Int32))
    return "its axes input ('" + in->name() + "') may be negative (allowed from opset 11) and its type is unknown";
  TensorPtr r = *t == DataType::Int64 ? StepContext::int64s({rank}, /*scalar=*/true)
                                      : Tensor::fromValues(*t, {}, std::vector<int32_t>{static_cast<int32_t>(rank)});
  Node *mod = ctx.nodeBefore(node, "Mod", {in, ctx.constantBefore(node, nodeBase(node, "rank"), r)},
                             nodeBase(node, "axes"));
  node.setOperand(3, mod->result(0));
  return "";
}

/// TopK-1 (k attribute) <-> TopK-10 (k input, int64[1]).
std::string topk10(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (!node.hasAttr("k"))
      return "it has no k";
    Value *k = ctx.constantBefore(node, nodeBase(node, "k"), StepContext::int64s({node.attrInt("k", 0)}));
    node.removeAttr("k");
    node.resizeOperands(2);
    node.setOperand(1, k);
    return "";
  }
  std::optional<std::vector<int64_t>> k = constantIntsOperand(node, 1);
  if (!k || k->size() != 1)
    return "its k is not a constant";
  node.setAttr(Attribute::makeInt("k", (*k)[0]));
  clearOperand(node, 1);
  trimOperands(node);
  return "";
}

/// Clip-6 (min, max attributes) <-> Clip-11 (inputs).
std::string clip11(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    const char *names[] = {"min", "max"};
    for (size_t i = 0; i < 2; ++i) {
      if (!node.hasAttr(names[i]))
        continue;
      TensorPtr t = scalarLike(node.operand(0), node.attrFloat(names[i], 0.0f));
      if (!t)
        return "the element type of its input is unknown (needed for its bounds)";
      Value *v = ctx.constantBefore(node, nodeBase(node, names[i]), t);
      node.removeAttr(names[i]);
      if (node.numOperands() < i + 2)
        node.resizeOperands(i + 2);
      node.setOperand(i + 1, v);
    }
    return "";
  }
  if (!isFloatType(node.operand(0)))
    return "Clip-6 takes float data only";
  const char *names[] = {"min", "max"};
  for (size_t i = 0; i < 2; ++i) {
    if (!node.operand(i + 1))
      continue;
    std::optional<double> v = constantScalar(node, i + 1);
    if (!v)
      return "its " + std::string(names[i]) + " is not a constant";
    node.setAttr(Attribute::makeFloat(names[i], static_cast<float>(*v)));
  }
  clearOperand(node, 1);
  clearOperand(node, 2);
  node.resizeOperands(1);
  return "";
}

/// Dropout-7 (mask: T) <-> Dropout-10 (mask: bool): only an unused mask.
std::string dropout10(Node &node, StepContext &) {
  if (Value *mask = node.result(1)) {
    if (mask->hasUses())
      return "its mask is used, and its element type changes at 10 (bool)";
    node.dropResult(1);
  }
  return "";
}

/// Dropout-10 (ratio attribute) <-> Dropout-12 (ratio, training_mode inputs).
std::string dropout12(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    if (node.hasAttr("ratio")) {
      Value *r = ctx.constantBefore(node, nodeBase(node, "ratio"),
                                    fromDoubles(DataType::Float, {}, {node.attrFloat("ratio", 0.5f)}));
      node.removeAttr("ratio");
      node.resizeOperands(2);
      node.setOperand(1, r);
    }
    return "";
  }
  if (node.operand(2)) {
    TensorPtr t = constantTensor(node.operand(2));
    if (!t || t->dtype() != DataType::Bool || t->numElements() != 1 || t->at<uint8_t>(0) != 0)
      return "its training_mode is not a constant false";
    clearOperand(node, 2);
  }
  if (node.operand(1)) {
    std::optional<double> v = constantScalar(node, 1);
    if (!v)
      return "its ratio is not a constant";
    node.setAttr(Attribute::makeFloat("ratio", static_cast<float>(*v)));
    clearOperand(node, 1);
  }
  node.removeAttr("seed"); // randomness of training mode only
  trimOperands(node);
  return "";
}

} // namespace

void registerAttributesToInputs(AdapterRegistry &r) {
  r.addBoth("Squeeze", 13, movesToInput1<kAxes>);
  r.addBoth("Unsqueeze", 13, movesToInput1<kAxes>);
  r.addBoth("ReduceSum", 13, reduceAxes);
  for (const char *op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    r.addBoth(op, 18, reduceAxes);
  r.addBoth("Split", 13, movesToInput1<kSplit>);
  r.addBoth("Split", 18, split18);
  r.addBoth("Pad", 11, pad11);
  r.addBoth("Pad", 18, bump); // axes input: the arity check refuses it going down
  r.addBoth("Slice", 10, slice10);
  r.addBoth("Slice", 11, slice11);
  r.addBoth("TopK", 10, topk10);
  r.addBoth("Clip", 11, clip11);
  r.addBoth("Dropout", 10, dropout10);
  r.addBoth("Dropout", 12, dropout12);
}

} // namespace opset
} // namespace onnxslim
