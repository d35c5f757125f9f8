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
// which must then be known). Downgrading moves a constant input back; a
// computed one is written in other ops where an exact form exists:
//   Squeeze/Unsqueeze-13, ReduceSum-13, Reduce*-18 (those that compose axis
//     by axis): an If per axis that may be listed (targets from 11, where
//     If's branches may differ in shape; the rank known)
//   Split-13: a Slice per output between the running sums of the sizes
//   Clip-11 (floats): Max(x, min), Min(_, max) (targets from 8)
//   Dropout-12: a computed ratio in inference is dropped (the output is the
//     data), a read mask written all true; a training_mode that is not a
//     constant false: the spec's draw (RandomUniformLike), mask and scale,
//     chosen by Where on it (targets from 9)
// and refused otherwise. Also:
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


std::string splitComputed(Node &node, StepContext &ctx);
std::string clipComputedBounds(Node &node, StepContext &ctx);
std::string dropoutTraining(Node &node, StepContext &ctx);
std::string squeezeComputedAxes(Node &node, StepContext &ctx);
std::string reduceComputedAxes(Node &node, StepContext &ctx);

/// Squeeze/Unsqueeze-13, ReduceSum-13, Reduce*-18: axes; Split-13: split
/// (computed ones: see squeezeComputedAxes, splitComputed).
template <const char *Name> std::string movesToInput1(Node &node, StepContext &ctx) {
  if (ctx.direction == Direction::Up) {
    attributeToInput(node, ctx, Name, 1);
    return "";
  }
  if (node.numOperands() > 1 && node.operand(1) && !constantInts(node.operand(1))) {
    if (node.is("Split"))
      return splitComputed(node, ctx);
    return squeezeComputedAxes(node, ctx);
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
  if (node.operand(1) && !axes)
    return reduceComputedAxes(node, ctx);
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


//===----------------------------------------------------------------------===//
// Computed inputs going down: forms the older versions can write
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
  Value *constant(TensorPtr t, std::string_view what) { return ctx.constantBefore(node, nodeBase(node, what), std::move(t)); }
  Value *int64(int64_t v, std::string_view what) { return constant(StepContext::int64s({v}, /*scalar=*/true), what); }
  Value *ints(const std::vector<int64_t> &v, std::string_view what) { return constant(StepContext::int64s(v), what); }
  template <typename... A> void become(const char *type, const std::vector<Value *> &in, A... attrs) {
    node.attributes().clear();
    node.setOpType(type);
    node.resizeOperands(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      node.setOperand(i, in[i]);
    (node.setAttr(std::move(attrs)), ...);
  }
  /// Given result i of `node` and a value written before it, Execute: moves
  /// the result's uses, name, type and value_info to `v` and drops the
  /// result from `node`.
  void moveResult(size_t i, Value *v) {
    Value *r = node.result(i);
    std::string name = r->name();
    r->setName(ctx.model.names().fresh(name + "_moved"));
    r->replaceAllUsesWith(v);
    v->setType(r->type());
    v->valueInfoOrder = r->valueInfoOrder;
    v->info = std::move(r->info);
    r->valueInfoOrder = Value::kNoValueInfo;
    v->setName(name);
    node.dropResult(i);
  }
};

/// Given a writer, a value `axes` (int64 1-D, computed) and an axis p of a
/// rank-r count, Result: a bool scalar, whether p is among the axes
/// (written p or p - r): ReduceSum of Cast(Or(Equal(axes, p), Equal(axes,
/// p - r))) > 0.
Value *axisListed(Writer &w, Value *axes, int64_t p, int64_t r) {
  Value *hit = w.op("Or", {w.op("Equal", {axes, w.int64(p, "axis")}, "is_axis"),
                           w.op("Equal", {axes, w.int64(p - r, "neg_axis")}, "is_neg_axis")},
                    "listed");
  Value *count = w.op("ReduceSum", {w.op("Cast", {hit}, "listed_count", Attribute::makeInt("to", static_cast<int64_t>(DataType::Int64)))},
                      "times_listed", Attribute::makeInt("keepdims", 0));
  return w.op("Greater", {count, w.int64(0, "none")}, "axis_listed");
}

/// Given a writer, a bool scalar, a value x of element type t, an op and
/// its attributes, Execute: writes y = If(cond) then {op(x)} else
/// {Identity(x)} (the branches in their form at the target, which for these
/// adapters is below 13: axes attributes), Result: y; `last`: `node`
/// itself becomes that If.
template <typename... A>
Value *applyIf(Writer &w, Value *cond, Value *x, DataType t, const char *op, bool last, A... attrs) {
  Model &model = w.ctx.model;
  auto branch = [&](const char *type, std::string_view what, auto... as) {
    auto g = std::make_unique<Graph>();
    g->name = model.names().fresh(nodeBase(w.node, what));
    std::string name = model.names().fresh(nodeBase(w.node, std::string(what) + "_out"));
    Node *n = g->createNode(type, {x}, {name});
    n->setName(model.names().fresh(name + "_node"));
    (n->setAttr(std::move(as)), ...);
    g->append(n);
    g->addOutput(n->result(0), Type::tensor(t));
    return g;
  };
  auto thenG = branch(op, "applied", std::move(attrs)...);
  auto elseG = branch("Identity", "kept");
  Node *n;
  if (last) {
    w.become("If", {cond});
    n = &w.node;
  } else {
    n = w.ctx.nodeBefore(w.node, "If", {cond}, nodeBase(w.node, "step"));
  }
  n->setAttr(Attribute::makeGraph("then_branch", std::move(thenG)));
  n->setAttr(Attribute::makeGraph("else_branch", std::move(elseG)));
  if (!last)
    n->result(0)->setType(Type::tensor(t));
  return n->result(0);
}

/// Given a node whose input 1 (axes) is computed, Result: "" when the
/// If chains below can replace it (target 11 or 12: If takes branches of
/// different shapes from 11), else why not.
std::string computedAxesOk(const Node &node, const StepContext &ctx, std::optional<int64_t> rank,
                           std::optional<DataType> t) {
  if (ctx.target < 11)
    return "its axes input ('" + node.operand(1)->name() + "') is not a constant, and the form that applies the op " +
           "per listed axis needs If with branches of different shapes (opset 11)";
  if (!rank)
    return "its axes input ('" + node.operand(1)->name() + "') is not a constant and the rank is unknown (for the " +
           "axes it may list)";
  if (!t)
    return "its axes input is not a constant and its data's element type is unknown";
  return "";
}

/// ReduceSum-13 with computed axes -> ReduceSum-11 (targets 11, 12), and
/// the other Reduce*-18 that compose axis by axis (Mean, Max, Min, Prod,
/// L1, L2, LogSumExp: reducing over {a, b} is reducing over b, then over a)
/// -> 13 (targets 11 to 17): one If per axis d of the data (rank r known),
/// from the last one down (a reduction with keepdims = 0 then leaves the
/// lower axes in place):
///   Before (opset 13, x: float[2,3]):     After (opset 11):
///     y = ReduceSum<keepdims = 0>(x, a)     c1 = Or(1 listed in a (1 or -1), Equal(Size(a), 0))
///                                           s = If(c1) {ReduceSum<axes = [1], keepdims = 0>(x)}
///                                                  else {Identity(x)}
///                                           c0 = Or(0 listed in a, Equal(Size(a), 0))
///                                           y = If(c0) {ReduceSum<axes = [0], keepdims = 0>(s)}
///                                                  else {Identity(s)}
/// An empty `a` reduces every axis (the Or with Size(a) == 0), or none with
/// noop_with_empty_axes = 1 (no Or; refused for L1 and L2, see reduceAxes).
/// Exact: the same reductions, in the same shapes (floats within rounding).
/// LogSum and SumSquare do not compose (log of logs, squares of squares):
/// refused.
std::string reduceComputedAxes(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *axes = node.operand(1);
  if (node.is("ReduceLogSum") || node.is("ReduceSumSquare"))
    return "its axes input ('" + axes->name() + "') is not a constant, and " + node.opType() +
           " over several axes is not the reduction over each in turn";
  if ((node.is("ReduceL1") || node.is("ReduceL2")) && node.attrInt("noop_with_empty_axes", 0) != 0)
    return "its axes input ('" + axes->name() + "') is not a constant and noop_with_empty_axes = 1: when empty, "
           "readings differ on what it computes (see the constant case)";
  std::optional<Shape> s = x ? knownShape(x) : std::nullopt;
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  std::optional<int64_t> rank = s ? std::optional<int64_t>(static_cast<int64_t>(s->size())) : std::nullopt;
  if (std::string why = computedAxesOk(node, ctx, rank, t); !why.empty())
    return why;
  Writer w{node, ctx};
  int64_t keepdims = node.attrInt("keepdims", 1);
  bool noop = node.attrInt("noop_with_empty_axes", 0) != 0;
  Value *empty = noop ? nullptr : w.op("Equal", {w.op("Size", {axes}, "axes_count"), w.int64(0, "zero")}, "no_axes");
  Value *y = x;
  if (*rank == 0) {
    w.become("Identity", {x});
    return "";
  }
  for (int64_t d = *rank - 1; d >= 0; --d) {
    Value *cond = axisListed(w, axes, d, *rank);
    if (empty)
      cond = w.op("Or", {cond, empty}, "reduced");
    y = applyIf(w, cond, y, *t, node.opType().c_str(), d == 0, Attribute::makeInts("axes", {d}), Attribute::makeInt("keepdims", keepdims));
  }
  return "";
}

/// Unsqueeze-13 / Squeeze-13 with computed axes -> 11 (targets 11, 12): one
/// If per axis, inserting a 1 at each listed output axis in ascending order
/// (Unsqueeze: the output rank, the data's plus the axes' length, known),
/// or removing each listed input axis in descending order (Squeeze: the
/// data's rank known):
///   Before (opset 13, x: float[3]):       After (opset 11):
///     y = Unsqueeze(x, a)   (a: int64[1])   c0 = 0 listed in a (0 or -2)
///                                           u = If(c0) {Unsqueeze<axes = [0]>(x)} else {Identity(x)}
///                                           c1 = 1 listed in a (1 or -1)
///                                           y = If(c1) {Unsqueeze<axes = [1]>(u)} else {Identity(u)}
/// Exact: each step is the op on one axis, in the order the spec's result
/// is built (Squeeze skips the axes whose dim is known not to be 1, which
/// the axes cannot list).
std::string squeezeComputedAxes(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *axes = node.operand(1);
  bool unsqueeze = node.is("Unsqueeze");
  std::optional<Shape> s = x ? knownShape(x) : std::nullopt;
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  std::optional<int64_t> rank = s ? std::optional<int64_t>(static_cast<int64_t>(s->size())) : std::nullopt;
  if (unsqueeze && rank) {
    std::optional<Shape> as = knownShape(axes);
    std::optional<Shape> ys = node.result(0) ? knownShape(node.result(0)) : std::nullopt;
    if (as && as->size() == 1 && (*as)[0].isValue())
      *rank += (*as)[0].getValue();
    else if (ys)
      rank = static_cast<int64_t>(ys->size());
    else
      rank.reset();
  }
  if (std::string why = computedAxesOk(node, ctx, rank, t); !why.empty())
    return why;
  Writer w{node, ctx};
  Value *y = x;
  if (*rank == 0) {
    w.become("Identity", {x});
    return "";
  }
  // Squeeze: an axis whose dim is known not to be 1 cannot be listed (the
  // spec makes that an error), and its branch would not be valid.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < *rank; ++i) {
    int64_t p = unsqueeze ? i : *rank - 1 - i;
    if (unsqueeze || !(*s)[static_cast<size_t>(p)].isValue() || (*s)[static_cast<size_t>(p)].getValue() == 1)
      order.push_back(p);
  }
  if (order.empty()) {
    w.become("Identity", {x});
    return "";
  }
  for (int64_t p : order)
    y = applyIf(w, axisListed(w, axes, p, *rank), y, *t, node.opType().c_str(), p == order.back(),
                Attribute::makeInts("axes", {p}));
  return "";
}

/// Split-13 with a computed `split` -> Split-11: one Slice per output
/// between the running sums of the sizes (CumSum), along the axis:
///   Before (opset 13):                  After (opset 11):
///     a, b = Split<axis = 0>(x, sp)       e = CumSum(sp, 0);  s = Sub(e, sp)
///                                         a = Slice(x, s[0:1], e[0:1], [0])
///                                         b = Slice(x, s[1:2], e[1:2], [0])
/// Exact: the spec's parts, in order.
std::string splitComputed(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *split = node.operand(1);
  Writer w{node, ctx};
  Value *axis = w.ints({node.attrInt("axis", 0)}, "axis");
  Value *ends = w.op("CumSum", {split, w.int64(0, "sum_axis")}, "ends");
  Value *starts = w.op("Sub", {ends, split}, "starts");
  auto part = [&](Value *v, int64_t i, std::string_view what) {
    return w.op("Slice", {v, w.ints({i}, "at"), w.ints({i + 1}, "next"), w.ints({0}, "first")}, what);
  };
  std::vector<Value *> slices;
  for (size_t i = 0; i < node.numResults(); ++i) {
    auto k = static_cast<int64_t>(i);
    slices.push_back(i == 0 || !node.result(i) ? nullptr
                                                : w.op("Slice", {x, part(starts, k, "start"), part(ends, k, "end"), axis}, "part"));
  }
  for (size_t i = node.numResults(); i-- > 1;) {
    if (!node.result(i))
      continue;
    w.moveResult(i, slices[i]);
  }
  w.become("Slice", {x, part(starts, 0, "start"), part(ends, 0, "end"), axis});
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
  // Integers of up to 32 bits are padded in double, exactly, and cast back
  // (Pad-2 takes float types only); its value attribute is a float.
  DataType t = node.operand(0) ? knownElemType(node.operand(0)).value_or(DataType::Undefined) : DataType::Undefined;
  bool viaDouble = t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32 || t == DataType::UInt8 ||
                   t == DataType::UInt16 || t == DataType::UInt32;
  viaDouble = viaDouble && ctx.target >= 6; // Cast's `to` is an int from 6
  if (!isFloatType(node.operand(0)) && !viaDouble)
    return "Pad-2 takes float data only (" +
           (t != DataType::Undefined ? dataTypeName(t) : std::string("an unknown type")) +
           " has no exact form in a float type)";
  if (node.operand(2)) {
    std::optional<double> v = constantScalar(node, 2);
    if (std::optional<std::vector<int64_t>> iv = constantIntsOperand(node, 2); !v && viaDouble && iv && iv->size() == 1)
      v = static_cast<double>((*iv)[0]);
    if (!v)
      return "its constant_value is not a constant";
    if (static_cast<double>(static_cast<float>(*v)) != *v)
      return "its constant_value " + std::to_string(*v) + " is not exact in Pad-2's float value attribute";
    node.setAttr(Attribute::makeFloat("value", static_cast<float>(*v)));
    clearOperand(node, 2);
  }
  if (!node.operand(1) || !constantInts(node.operand(1)))
    return "its pads are not a constant";
  if (std::string why = inputToAttribute(node, 1, "pads"); !why.empty())
    return why;
  if (!viaDouble)
    return "";
  Writer w{node, ctx};
  node.setOperand(0, w.op("Cast", {node.operand(0)}, "double", Attribute::makeInt("to", static_cast<int64_t>(DataType::Double))));
  Node *back = node.graph()->createNode("Cast", {node.result(0)}, {ctx.model.names().fresh(nodeBase(node, "cast"))});
  back->setName(ctx.model.names().fresh(back->result(0)->name() + "_node"));
  back->setAttr(Attribute::makeInt("to", static_cast<int64_t>(t)));
  std::optional<Type> inner = Type::tensor(DataType::Double);
  if (node.result(0)->type() && node.result(0)->type()->shape())
    inner = Type::tensor(DataType::Double, node.result(0)->type()->shape());
  wrapResult(node, 0, back, ctx, inner, "double");
  return "";
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

/// Clip-11 with a computed bound -> Clip-6 (floats; targets from 8, where
/// Max and Min broadcast): Max(x, min), then Min(_, max), which is the
/// spec's clamp (max wins when min > max):
///   Before (opset 11):          After (opset 9):
///     y = Clip(x, lo, hi)         m = Max(x, lo)
///                                 y = Min(m, hi)
std::string clipComputedBounds(Node &node, StepContext &ctx) {
  if (ctx.target < 8)
    return "its bounds are not constants, and Max and Min broadcast a bound only from opset 8";
  Writer w{node, ctx};
  Value *y = node.operand(0);
  Value *lo = node.operand(1), *hi = node.numOperands() > 2 ? node.operand(2) : nullptr;
  if (lo && hi)
    y = w.op("Max", {y, lo}, "raised");
  if (hi)
    w.become("Min", {y, hi});
  else
    w.become("Max", {y, lo});
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
  if ((node.operand(1) && !constantScalar(node, 1)) || (node.operand(2) && !constantScalar(node, 2)))
    return clipComputedBounds(node, ctx);
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

/// Dropout-12 with a training_mode that is not a constant false -> what
/// Dropout-12 computes, in ops (opset 10 has no training mode):
///   Before (opset 12):                  After (opset 10):
///     y, m = Dropout(x, r, t)             u = RandomUniformLike<dtype = T>(x)
///                                         k = Not(Less(u, r))          (kept: P = 1 - r)
///                                         s = Div(1, Sub(1, r))
///                                         d = Mul(Mul(x, Cast<to = T>(k)), s)
///                                         y = Where(t, d, x)
///                                         m = Or(Not(t), k)          (Where(t, k, true))
/// (a constant true t: y = d, m = k; r defaults to 0.5). Exact in
/// distribution: the random draws are not ONNX Runtime's (only ratio 0
/// compares equal).
std::string dropoutTraining(Node &node, StepContext &ctx) {
  Value *x = node.operand(0);
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  if (!t || !isFloatType(x))
    return "its training_mode is not a constant false and its data's element type is not known to be a float";
  if (ctx.target < 9)
    return "its training_mode is not a constant false, and the form that draws the mask needs Where (opset 9)";
  Writer w{node, ctx};
  Value *train = node.operand(2);
  TensorPtr tt = constantTensor(train);
  bool always = tt && tt->dtype() == DataType::Bool && tt->numElements() == 1 && tt->at<uint8_t>(0) != 0;
  Value *ratio = node.numOperands() > 1 && node.operand(1) ? node.operand(1) : w.constant(fromDoubles(*t, {}, {0.5}), "ratio");
  if (std::optional<DataType> rt = knownElemType(ratio); rt && *rt != *t)
    ratio = w.op("Cast", {ratio}, "ratio_t", Attribute::makeInt("to", static_cast<int64_t>(*t)));
  Node *draw = ctx.nodeBefore(node, "RandomUniformLike", {x}, nodeBase(node, "uniform"));
  draw->setAttr(Attribute::makeInt("dtype", static_cast<int64_t>(*t)));
  if (node.hasAttr("seed"))
    draw->setAttr(Attribute::makeFloat("seed", static_cast<float>(node.attrInt("seed", 0))));
  Value *kept = w.op("Not", {w.op("Less", {draw->result(0), ratio}, "dropped")}, "kept");
  Value *one = w.constant(fromDoubles(*t, {}, {1.0}), "one");
  Value *scale = w.op("Div", {one, w.op("Sub", {one, ratio}, "keep_ratio")}, "scale");
  Value *masked = w.op("Mul", {x, w.op("Cast", {kept}, "kept_t", Attribute::makeInt("to", static_cast<int64_t>(*t)))},
                       "masked");
  if (node.numResults() > 1 && node.result(1)) {
    Value *mask = kept;
    if (!always) // Or(Not(t), k): Where(t, k, true) in ops ONNX Runtime runs on bool
      mask = w.op("Or", {w.op("Not", {train}, "inference"), kept}, "mask");
    if (node.result(1)->hasUses() || node.result(1)->isGraphOutput())
      w.moveResult(1, w.op("Identity", {mask}, "mask_out"));
    else
      node.dropResult(1);
  }
  if (always) {
    w.become("Mul", {masked, scale});
  } else {
    Value *dropped = w.op("Mul", {masked, scale}, "scaled");
    w.become("Where", {train, dropped, x});
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
  if (node.numOperands() > 2 && node.operand(2)) {
    TensorPtr t = constantTensor(node.operand(2));
    if (!t || t->dtype() != DataType::Bool || t->numElements() != 1 || t->at<uint8_t>(0) != 0)
      return dropoutTraining(node, ctx);
    clearOperand(node, 2);
  }
  // Inference: the output is the data and the mask all true, whatever the
  // ratio (a computed one is dropped). A mask that is read is written as
  // that: ONNX Runtime's Dropout-10 returns it all false.
  if (node.numResults() > 1 && node.result(1) && (node.result(1)->hasUses() || node.result(1)->isGraphOutput())) {
    if (ctx.target < 9)
      return "its mask is read, and the all-true mask of inference needs ConstantOfShape (opset 9)";
    Writer w{node, ctx};
    Node *ones = ctx.nodeBefore(node, "ConstantOfShape", {w.op("Shape", {node.operand(0)}, "shape")}, nodeBase(node, "mask"));
    ones->setAttr(Attribute::makeTensor("value", Tensor::fromValues(DataType::Bool, {1}, std::vector<uint8_t>{1})));
    w.moveResult(1, ones->result(0));
  }
  if (node.numOperands() > 1 && node.operand(1)) {
    if (std::optional<double> v = constantScalar(node, 1))
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
