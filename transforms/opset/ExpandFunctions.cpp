//===- transforms/opset/ExpandFunctions.cpp - Expansions of newer ops into older ones ===//
//
// Ops newer than the target opset written out in the ops of the opset just
// below them (ONNX function bodies where the spec has one, else an equally
// exact form); the driver walks what they write on to the target (see
// Adapter.h). Every expansion is registered as (op, first version, Down):
//
//   op (first version)          written as (at the opset below)
//   NegativeLogLikelihoodLoss   its function body: GatherElements of the
//     (12)                      target class, Neg, weights by Gather,
//                               ignore_index by Where; none/sum/mean
//   SoftmaxCrossEntropyLoss     its body: LogSoftmax over the classes
//     (12)                      (moved last by Reshape/Transpose), then the
//                               NLL body; the log_prob output kept
//   Celu (12)                   alpha * Elu(x / alpha)
//   Einsum (12)                 per operand: diagonals (Gather on the
//                               flattened pair), Transpose and Unsqueeze to
//                               a common letter order; Mul; ReduceSum over
//                               the summed letters (constant equation,
//                               known ranks)
//   GatherElements (11)         Gather on the flattened data at linear
//                               indices (static shapes)
//   CumSum (11)                 Slice/Add chain, Concat (static length)
//   Round (11)                  Floor and comparisons (half to even)
//   Mod (10)                    integer Div (trunc) corrected to floor for
//                               fmod=0; float fmod as a - b*trunc(a/b) in
//                               double
//   IsInf (10)                  Greater/Less than the largest finite value
//   ThresholdedRelu (10)        Where(x > alpha, x, 0)
//   Bernoulli (15)              its body: RandomUniformLike, Greater, Cast
//   HannWindow, HammingWindow,  a constant for a constant size, else Range
//     BlackmanWindow (17)       and Cos arithmetic (their bodies)
//   DFT (17)                    MatMul with constant cos/sin matrices
//                               (static signal length)
//   STFT (17)                   Gather of the frames, window Mul, the DFT
//                               matrix
//   MelWeightMatrix (17)        a constant (constant inputs)
// Declined with their reason: the Sequence ops below 11 ("sequence types
// need opset 11") and the Optional ops below 15 ("optional types need
// opset 15").
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "runtime/Float16.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace onnxslim {
namespace opset {

namespace {

/// Given an element type, dims and values, Result: a tensor of that type
/// holding the values (rounded to it), or null for a type without numbers.
TensorPtr typedTensor(DataType t, std::vector<int64_t> dims, const std::vector<double> &v) {
  auto as = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = static_cast<T>(v[i]);
    return Tensor::fromValues(t, dims, out);
  };
  switch (t) {
  case DataType::Float: return as(float{});
  case DataType::Double: return as(double{});
  case DataType::Int8: return as(int8_t{});
  case DataType::Int16: return as(int16_t{});
  case DataType::Int32: return as(int32_t{});
  case DataType::Int64: return as(int64_t{});
  case DataType::UInt8: return as(uint8_t{});
  case DataType::UInt16: return as(uint16_t{});
  case DataType::UInt32: return as(uint32_t{});
  case DataType::UInt64: return as(uint64_t{});
  case DataType::Bool: {
    std::vector<uint8_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = v[i] != 0;
    return Tensor::fromValues(t, dims, out);
  }
  case DataType::Float16:
  case DataType::BFloat16: {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = t == DataType::Float16 ? rt::doubleToHalfBits(v[i]) : rt::doubleToBFloat16Bits(v[i]);
    return Tensor::fromValues(t, dims, out);
  }
  default: return nullptr;
  }
}

/// A copyable attribute description (Attribute itself is move-only, and
/// brace lists copy).
struct Attr {
  enum Kind { Int, Ints, Float, String, TensorValue } kind;
  std::string name;
  int64_t i = 0;
  std::vector<int64_t> is;
  float f = 0;
  std::string s;
  TensorPtr t;
  Attribute make() const {
    switch (kind) {
    case Int: return Attribute::makeInt(name, i);
    case Ints: return Attribute::makeInts(name, is);
    case Float: return Attribute::makeFloat(name, f);
    case TensorValue: return Attribute::makeTensor(name, t);
    case String: break;
    }
    return Attribute::makeString(name, s);
  }
};
Attr aInt(std::string name, int64_t v) { return Attr{Attr::Int, std::move(name), v, {}, 0, {}, {}}; }
Attr aInts(std::string name, std::vector<int64_t> v) { return Attr{Attr::Ints, std::move(name), 0, std::move(v), 0, {}, {}}; }
Attr aFloat(std::string name, float v) { return Attr{Attr::Float, std::move(name), 0, {}, v, {}, {}}; }
Attr aTensor(std::string name, TensorPtr v) { return Attr{Attr::TensorValue, std::move(name), 0, {}, 0, {}, std::move(v)}; }

/// Whether opset `opset` takes Squeeze/Unsqueeze/ReduceSum (`op`) axes as an
/// input rather than an attribute.
bool axesAreInput(std::string_view op, int64_t opset) {
  if (op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum")
    return opset >= 13;
  return opset >= 18; // the other Reduce* ops
}

/// What an expansion writes: nodes before `node` in their form at ctx.to,
/// and finally `node` itself turned into the last op of the body.
class Body {
public:
  Body(Node &node, StepContext &ctx) : node_(node), ctx_(ctx) {}

  /// A new node `type` over `in` (one result), before the node.
  Value *op(std::string type, const std::vector<Value *> &in, std::string_view what,
            std::vector<Attr> attrs = {}) {
    Node *n = ctx_.nodeBefore(node_, std::move(type), in, nodeBase(node_, what));
    for (const Attr &a : attrs)
      n->setAttr(a.make());
    return n->result(0);
  }
  /// An op taking axes (Squeeze, Unsqueeze, Reduce*) in its form at ctx.to.
  Value *axesOp(std::string type, Value *x, const std::vector<int64_t> &axes, std::string_view what,
                std::vector<Attr> attrs = {}) {
    auto [in, at] = axesForm(type, x, axes, what, std::move(attrs));
    return op(std::move(type), in, what, std::move(at));
  }
  Value *ints(const std::vector<int64_t> &v, std::string_view what, bool scalar = false) {
    return ctx_.constantBefore(node_, nodeBase(node_, what), StepContext::int64s(v, scalar));
  }
  /// A constant of element type `t` (which typedTensor takes).
  Value *constant(DataType t, std::vector<int64_t> dims, const std::vector<double> &v, std::string_view what) {
    return ctx_.constantBefore(node_, nodeBase(node_, what), typedTensor(t, std::move(dims), v));
  }
  Value *scalar(DataType t, double v, std::string_view what) { return constant(t, {}, {v}, what); }

  /// Execute: turns the node into `type` over `in` with `attrs` (its first
  /// result keeps its name and uses); Constants only it read are erased.
  void finish(std::string type, const std::vector<Value *> &in, std::vector<Attr> attrs = {}) {
    std::vector<Value *> old = node_.operands();
    node_.attributes().clear();
    node_.setOpType(std::move(type));
    node_.resizeOperands(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      node_.setOperand(i, in[i]);
    for (const Attr &a : attrs)
      node_.setAttr(a.make());
    for (Value *v : old)
      if (Node *def = v ? v->definingNode() : nullptr; def && def->is("Constant") && def->resultsUnused())
        def->erase();
  }
  void finishAxes(std::string type, Value *x, const std::vector<int64_t> &axes, std::vector<Attr> attrs = {}) {
    auto [in, at] = axesForm(type, x, axes, "axes", std::move(attrs));
    finish(std::move(type), in, std::move(at));
  }

  /// Execute: result i of the node (the model's name, uses, type) becomes
  /// `v`, made before the node; the node's slot is left omitted.
  void moveResult(size_t i, Value *v) {
    Value *r = node_.result(i);
    if (!r)
      return;
    std::string name = r->name();
    r->replaceAllUsesWith(v);
    r->setName(ctx_.model.names().fresh(name + "_moved"));
    if (r->type())
      v->setType(r->type());
    v->valueInfoOrder = r->valueInfoOrder;
    v->info = std::move(r->info);
    r->valueInfoOrder = Value::kNoValueInfo;
    r->info = {};
    v->setName(name);
    node_.dropResult(i);
    node_.trimResults();
  }

  Node &node() { return node_; }
  StepContext &ctx() { return ctx_; }

private:
  std::pair<std::vector<Value *>, std::vector<Attr>> axesForm(std::string_view type, Value *x,
                                                                   const std::vector<int64_t> &axes,
                                                                   std::string_view what,
                                                                   std::vector<Attr> attrs) {
    std::vector<Value *> in{x};
    if (axesAreInput(type, ctx_.to))
      in.push_back(ints(axes, std::string(what) + "_axes"));
    else
      attrs.push_back(aInts("axes", axes));
    return {in, std::move(attrs)};
  }

  Node &node_;
  StepContext &ctx_;
};

std::string typeName(std::optional<DataType> t) { return t ? dataTypeName(*t) : std::string("unknown"); }

/// The rank of v, or -1.
int64_t rankOf(const Value *v) {
  std::optional<Shape> s = v ? knownShape(v) : std::nullopt;
  return s ? static_cast<int64_t>(s->size()) : -1;
}

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

//===----------------------------------------------------------------------===//
// Losses (opset 12)
//===----------------------------------------------------------------------===//

/// The NegativeLogLikelihoodLoss body over log-probabilities `x` [N, C,
/// d1...], `target` [N, d1...] and optional `weight` [C]; the node becomes
/// its last op. (The body's Slice of the gathered [N, 1, d...] channel 0 is
/// the identity and is left out.)
std::string nllBody(Body &b, Value *x, Value *target, Value *weight) {
  Node &node = b.node();
  std::optional<DataType> et = knownElemType(x), tt = knownElemType(target);
  if (!et || !typedTensor(*et, {}, {0}))
    return "the element type of its input is " + typeName(et) + " (its constants need it)";
  if (!tt)
    return "the element type of its target is unknown (the ignore_index constant needs it)";
  std::string reduction = node.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return "its reduction '" + reduction + "' is not none, sum or mean";
  const Attribute *ignoreAttr = node.attr("ignore_index");
  std::optional<int64_t> ignore = ignoreAttr ? std::optional<int64_t>(ignoreAttr->i) : std::nullopt;

  Value *t1 = b.axesOp("Unsqueeze", target, {1}, "target_n1");
  Value *mask = nullptr, *zero = nullptr;
  Value *safe = t1;
  if (ignore) {
    mask = b.op("Equal", {t1, b.scalar(*tt, static_cast<double>(*ignore), "ignore_index")}, "ignored");
    safe = b.op("Where", {mask, b.scalar(*tt, 0, "class0"), t1}, "target_safe");
    zero = b.scalar(*et, 0, "zero");
  }
  Value *picked = b.op("GatherElements", {x, safe}, "picked", {aInt("axis", 1)});
  if (ignore && !weight)
    picked = b.op("Where", {mask, zero, picked}, "picked_masked");
  Value *neg = b.op("Neg", {picked}, "neg");
  Value *wsq = nullptr;
  Value *loss = nullptr;
  if (weight) {
    Value *wg = b.op("Gather", {weight, safe}, "weight_picked");
    if (ignore)
      wg = b.op("Where", {mask, zero, wg}, "weight_masked");
    wsq = b.axesOp("Squeeze", wg, {1}, "weight_nd");
    loss = b.axesOp("Squeeze", neg, {1}, "unweighted");
    if (reduction == "none") {
      b.finish("Mul", {loss, wsq});
      return "";
    }
    loss = b.op("Mul", {loss, wsq}, "weighted");
  } else if (reduction == "none") {
    b.finishAxes("Squeeze", neg, {1});
    return "";
  } else {
    loss = b.axesOp("Squeeze", neg, {1}, "loss_nd");
  }
  std::vector<Attr> flat{aInt("keepdims", 0)};
  if (reduction == "sum") {
    b.finish("ReduceSum", {loss}, flat);
    return "";
  }
  if (!weight && !ignore) {
    b.finish("ReduceMean", {loss}, flat);
    return "";
  }
  if (!wsq) // ignore_index without weights: each kept element weighs 1
    wsq = b.axesOp("Squeeze", b.op("Where", {mask, zero, b.scalar(*et, 1, "one")}, "kept"), {1}, "kept_nd");
  Value *sum = b.op("ReduceSum", {loss}, "loss_sum", flat);
  Value *den = b.op("ReduceSum", {wsq}, "weight_sum", flat);
  b.finish("Div", {sum, den});
  return "";
}

/// NegativeLogLikelihoodLoss-12 -> its function body (before 12).
///   Before: loss = NegativeLogLikelihoodLoss<reduction = "mean">(x, t)
///   After:  t1 = Unsqueeze<axes = [1]>(t)
///           p = GatherElements<axis = 1>(x, t1)
///           n = Neg(p)
///           l = Squeeze<axes = [1]>(n)
///           loss = ReduceMean<keepdims = 0>(l)
/// (weights: Gather(weight, t1) multiplies l, and mean divides the sum by
/// theirs; ignore_index: the ignored targets read class 0 and weigh 0.)
std::string nllExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  return nllBody(b, node.operand(0), node.operand(1), node.operand(2));
}

/// SoftmaxCrossEntropyLoss-12 -> its function body (before 12): the
/// log-softmax over axis 1 (the classes moved last) and the NLL body; the
/// optional log_prob output is the log-softmax.
///   Before: loss = SoftmaxCrossEntropyLoss<reduction = "sum">(s, t)
///   After:  s3 = Reshape(s, [0, 0, -1])
///           sl = Transpose<perm = [0, 2, 1]>(s3)
///           ls = LogSoftmax<axis = 2>(sl)
///           lt = Transpose<perm = [0, 2, 1]>(ls)
///           lp = Reshape(lt, Shape(s))
///           ... the NegativeLogLikelihoodLoss body over lp, t ...
std::string sceExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *scores = node.operand(0);
  Value *s3 = b.op("Reshape", {scores, b.ints({0, 0, -1}, "ncd")}, "ncd");
  Value *last = b.op("Transpose", {s3}, "ndc", {aInts("perm", {0, 2, 1})});
  Value *lsm = b.op("LogSoftmax", {last}, "log_sm", {aInt("axis", 2)});
  Value *back = b.op("Transpose", {lsm}, "log_ncd", {aInts("perm", {0, 2, 1})});
  Value *logProb = b.op("Reshape", {back, b.op("Shape", {scores}, "shape")}, "log_prob");
  if (std::optional<Type> t = scores->type())
    logProb->setType(t);
  if (std::string why = nllBody(b, logProb, node.operand(1), node.operand(2)); !why.empty())
    return why;
  b.moveResult(1, logProb);
  return "";
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

/// Celu-12 -> its body (before 12): alpha * Elu<alpha = 1>(x / alpha).
std::string celuExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::optional<DataType> t = knownElemType(x);
  if (!t || !isFloatingPoint(*t))
    return "its input's element type is " + typeName(t) + " (the alpha constant needs a float type)";
  Value *alpha = b.scalar(*t, node.attrFloat("alpha", 1.0f), "alpha");
  Value *elu = b.op("Elu", {b.op("Div", {x, alpha}, "scaled")}, "elu", {aFloat("alpha", 1.0f)});
  b.finish("Mul", {alpha, elu});
  return "";
}

/// ThresholdedRelu-10 -> Where(x > alpha, x, 0) (before 10).
std::string thresholdedReluExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::optional<DataType> t = knownElemType(x);
  if (!t || !isFloatingPoint(*t))
    return "its input's element type is " + typeName(t) + " (the alpha constant needs a float type)";
  Value *above = b.op("Greater", {x, b.scalar(*t, node.attrFloat("alpha", 1.0f), "alpha")}, "above");
  b.finish("Where", {above, x, b.scalar(*t, 0, "zero")});
  return "";
}

/// The largest finite value of a float type.
double largestFinite(DataType t) {
  switch (t) {
  case DataType::Float: return std::numeric_limits<float>::max();
  case DataType::Double: return std::numeric_limits<double>::max();
  case DataType::Float16: return 65504.0;
  case DataType::BFloat16: return 3.3895313892515355e38;
  default: return 0;
  }
}

/// IsInf-10 -> x > largest finite (detect_positive) or x < -largest
/// (detect_negative), Or of both by default (before 10).
std::string isInfExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::optional<DataType> t = knownElemType(x);
  if (!t || largestFinite(*t) == 0)
    return "its input's element type is " + typeName(t) + " (not a float type)";
  bool pos = node.attrInt("detect_positive", 1) != 0, neg = node.attrInt("detect_negative", 1) != 0;
  double big = largestFinite(*t);
  if (pos && neg) {
    Value *p = b.op("Greater", {x, b.scalar(*t, big, "largest")}, "pos_inf");
    Value *n = b.op("Less", {x, b.scalar(*t, -big, "lowest")}, "neg_inf");
    b.finish("Or", {p, n});
  } else if (pos) {
    b.finish("Greater", {x, b.scalar(*t, big, "largest")});
  } else if (neg) {
    b.finish("Less", {x, b.scalar(*t, -big, "lowest")});
  } else { // neither: all false
    b.finish("Greater", {x, b.scalar(*t, std::numeric_limits<double>::infinity(), "inf")});
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Mod (opset 10), Round and CumSum (opset 11)
//===----------------------------------------------------------------------===//

bool isSignedInt(DataType t) {
  return t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32 || t == DataType::Int64;
}
bool isNarrowInt(DataType t) {
  return t == DataType::Int8 || t == DataType::Int16 || t == DataType::UInt8 || t == DataType::UInt16;
}

/// Mod-10 -> arithmetic (before 10).
///   Integers (int8/16 and uint8/16 computed in int32, exactly): r = a -
///   Div(a, b) * b (Div truncates); fmod = 0 (the sign of the divisor)
///   then adds b where r and b have opposite signs:
///     Before: y = Mod(a, b)
///     After:  q = Div(a, b)
///             r = Sub(a, Mul(q, b))
///             c = Or(And(Less(r, 0), Greater(b, 0)), And(Greater(r, 0), Less(b, 0)))
///             y = Where(c, Add(r, b), r)
///   Floats (fmod = 1): r = a - b * trunc(a / b) in double (float and
///   float16 are cast there and back; the product and difference of two
///   floats are then exact up to a quotient of 2^28), trunc as Floor or
///   Ceil by the sign, and a where b is infinite and a finite.
std::string modExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0), *y = node.operand(1);
  std::optional<DataType> t = knownElemType(x);
  if (!t)
    return "its input's element type is unknown";
  bool fmod = node.attrInt("fmod", 0) != 0;
  if (isFloatingPoint(*t)) {
    if (!fmod)
      return "fmod=0 on " + dataTypeName(*t) + " (the spec requires fmod=1 for floats)";
    if (*t != DataType::Float && *t != DataType::Double && *t != DataType::Float16)
      return "its element type " + dataTypeName(*t) + " has no Mod form at opset " + std::to_string(ctx.target);
    DataType w = DataType::Double;
    auto wide = [&](Value *v, std::string_view what) {
      return *t == w ? v : b.op("Cast", {v}, what, {aInt("to", static_cast<int64_t>(w))});
    };
    Value *a = wide(x, "a"), *d = wide(y, "b");
    Value *zero = b.scalar(w, 0, "zero");
    Value *q = b.op("Div", {a, d}, "quotient");
    Value *tq = b.op("Where", {b.op("Less", {q, zero}, "negative"), b.op("Ceil", {q}, "ceil"), b.op("Floor", {q}, "floor")},
                     "trunc");
    Value *r = b.op("Sub", {a, b.op("Mul", {d, tq}, "product")}, "remainder");
    Value *big = b.scalar(w, largestFinite(w), "largest");
    Value *infB = b.op("Greater", {b.op("Abs", {d}, "abs_b"), big}, "b_inf");
    Value *finA = b.op("Not", {b.op("Greater", {b.op("Abs", {a}, "abs_a"), big}, "a_inf")}, "a_finite");
    Value *keep = b.op("And", {infB, finA}, "keep_a");
    if (*t == w) {
      b.finish("Where", {keep, a, r});
    } else {
      Value *res = b.op("Where", {keep, a, r}, "result");
      b.finish("Cast", {res}, {aInt("to", static_cast<int64_t>(*t))});
    }
    return "";
  }
  bool narrow = isNarrowInt(*t);
  if (!narrow && *t != DataType::Int32 && *t != DataType::Int64 && *t != DataType::UInt32 && *t != DataType::UInt64)
    return "its element type " + dataTypeName(*t) + " has no integer Mod form";
  DataType w = narrow ? DataType::Int32 : *t;
  Value *a = narrow ? b.op("Cast", {x}, "a", {aInt("to", static_cast<int64_t>(w))}) : x;
  Value *d = narrow ? b.op("Cast", {y}, "b", {aInt("to", static_cast<int64_t>(w))}) : y;
  Value *q = b.op("Div", {a, d}, "quotient");
  bool fix = !fmod && isSignedInt(*t);
  bool last = !fix && !narrow;
  if (last) {
    b.finish("Sub", {a, b.op("Mul", {q, d}, "product")});
    return "";
  }
  Value *r = b.op("Sub", {a, b.op("Mul", {q, d}, "product")}, "remainder");
  if (fix) {
    Value *zero = b.scalar(w, 0, "zero");
    Value *c1 = b.op("And", {b.op("Less", {r, zero}, "r_neg"), b.op("Greater", {d, zero}, "b_pos")}, "neg_pos");
    Value *c2 = b.op("And", {b.op("Greater", {r, zero}, "r_pos"), b.op("Less", {d, zero}, "b_neg")}, "pos_neg");
    Value *c = b.op("Or", {c1, c2}, "opposite");
    Value *moved = b.op("Add", {r, d}, "moved");
    if (!narrow) {
      b.finish("Where", {c, moved, r});
      return "";
    }
    r = b.op("Where", {c, moved, r}, "floored");
  }
  b.finish("Cast", {r}, {aInt("to", static_cast<int64_t>(*t))});
  return "";
}

/// Round-11 -> Floor and comparisons (before 11), half to even:
///     Before: y = Round(x)
///     After:  f = Floor(x)
///             d = Sub(x, f)                       (exact)
///             odd = Sub(f, Mul(2, Floor(Mul(f, 0.5))))
///             u = Where(Greater(d, 0.5), 1, Where(Less(d, 0.5), 0, odd))
///             y = Where(Greater(Abs(x), 2^23), x, Add(f, u))
/// (the last Where keeps the values that are whole already, infinities
/// included; 2^52 for double, 2^10 for float16.)
std::string roundExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::optional<DataType> t = knownElemType(x);
  if (!t || (*t != DataType::Float && *t != DataType::Double && *t != DataType::Float16))
    return "its input's element type is " + typeName(t) + " (float, double or float16 expected)";
  double whole = *t == DataType::Double ? 4503599627370496.0 : *t == DataType::Float ? 8388608.0 : 1024.0;
  Value *f = b.op("Floor", {x}, "floor");
  Value *d = b.op("Sub", {x, f}, "fraction");
  Value *half = b.scalar(*t, 0.5, "half");
  Value *two = b.scalar(*t, 2, "two");
  Value *odd = b.op("Sub", {f, b.op("Mul", {two, b.op("Floor", {b.op("Mul", {f, half}, "halved")}, "halved_floor")}, "even")},
                    "odd");
  Value *inner = b.op("Where", {b.op("Less", {d, half}, "below"), b.scalar(*t, 0, "zero"), odd}, "tie");
  Value *up = b.op("Where", {b.op("Greater", {d, half}, "above"), b.scalar(*t, 1, "one"), inner}, "up");
  Value *rounded = b.op("Add", {f, up}, "rounded");
  Value *isWhole = b.op("Greater", {b.op("Abs", {x}, "abs"), b.scalar(*t, whole, "whole")}, "is_whole");
  b.finish("Where", {isWhole, x, rounded});
  return "";
}

/// The CumSum of `x` along `axis` (static length len >= 1): the Adds in the
/// reference's order; the Concat is made by the node itself when `finish`.
Value *cumSumAlong(Body &b, Value *x, DataType t, int64_t axis, int64_t len, bool exclusive, bool reverse,
                   bool finish) {
  std::string at = "axis" + std::to_string(axis) + "_";
  Value *axes = b.ints({axis}, at + "axes");
  std::vector<Value *> slices(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i)
    slices[static_cast<size_t>(i)] =
        b.op("Slice", {x, b.ints({i}, at + "start"), b.ints({i + 1}, at + "end"), axes}, at + "slice" + std::to_string(i));
  std::vector<Value *> sums(static_cast<size_t>(len));
  Value *acc = nullptr;
  if (exclusive) {
    Value *shapeOf = b.op("Shape", {slices[0]}, at + "slice_shape");
    acc = b.op("ConstantOfShape", {shapeOf}, at + "zeros", {aTensor("value", typedTensor(t, {1}, {0}))});
  }
  for (int64_t k = 0; k < len; ++k) {
    int64_t i = reverse ? len - 1 - k : k;
    Value *si = slices[static_cast<size_t>(i)];
    if (exclusive) {
      sums[static_cast<size_t>(i)] = acc;
      if (k + 1 < len)
        acc = b.op("Add", {acc, si}, at + "sum" + std::to_string(i));
    } else {
      acc = acc ? b.op("Add", {acc, si}, at + "sum" + std::to_string(i)) : si;
      sums[static_cast<size_t>(i)] = acc;
    }
  }
  if (finish) {
    b.finish("Concat", sums, {aInt("axis", axis)});
    return nullptr;
  }
  return b.op("Concat", sums, at + "cumsum", {aInt("axis", axis)});
}

/// CumSum-11 -> a chain of Adds over the slices along the axis, then Concat
/// (before 11), summed in the order of the reference (exact for integers,
/// the same rounding for floats); needs the rank and a static length
/// L <= 512 along the axis.
///     Before: y = CumSum(x[2, 3], axis = 1)
///     After:  s0 = Slice(x, [0], [1], [1]), s1 = ..., s2 = ...
///             c1 = Add(s0, s1)
///             c2 = Add(c1, s2)
///             y = Concat<axis = 1>(s0, c1, c2)
/// exclusive starts from zeros (ConstantOfShape of a slice's shape) and
/// drops the last sum; reverse walks from the end. An axis that is not a
/// constant (a rank-1 input has one axis only) is matched at run time:
/// the sum along every axis (all dims static), chosen by Where(Equal(axis,
/// a) or Equal(axis, a - rank)).
std::string cumSumExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0), *axisIn = node.operand(1);
  std::optional<Shape> s = knownShape(x);
  std::optional<DataType> t = knownElemType(x);
  if (!s || !t || s->empty())
    return "its input's rank or element type is unknown";
  int64_t r = static_cast<int64_t>(s->size());
  std::optional<std::vector<int64_t>> axisValue = constantIntsOperand(node, 1);
  std::vector<int64_t> candidates;
  if (axisValue && axisValue->size() == 1) {
    int64_t axis = (*axisValue)[0];
    if (axis < -r || axis >= r)
      return "its axis " + std::to_string(axis) + " is out of range";
    candidates.push_back(axis < 0 ? axis + r : axis);
  } else {
    for (int64_t a = 0; a < r; ++a)
      candidates.push_back(a);
  }
  std::optional<DataType> at = axisIn ? knownElemType(axisIn) : std::nullopt;
  if (candidates.size() > 1 && !at)
    return "its axis is not a constant and its element type is unknown";
  for (int64_t a : candidates) {
    const Dim &d = (*s)[static_cast<size_t>(a)];
    if (!d.isValue())
      return "its length along axis " + std::to_string(a) + " is not static" +
             (candidates.size() > 1 ? " (its axis is not a constant: every axis is summed)" : "");
    if (d.getValue() > 512)
      return "its length along axis " + std::to_string(a) + " is " + std::to_string(d.getValue()) +
             " (an unrolled sum is written up to 512)";
  }
  bool exclusive = node.attrInt("exclusive", 0) != 0, reverse = node.attrInt("reverse", 0) != 0;
  if (std::any_of(candidates.begin(), candidates.end(), [&](int64_t a) { return (*s)[static_cast<size_t>(a)].getValue() == 0; })) {
    b.finish("Identity", {x}); // empty: nothing to sum
    return "";
  }
  if (candidates.size() == 1) {
    cumSumAlong(b, x, *t, candidates[0], (*s)[static_cast<size_t>(candidates[0])].getValue(), exclusive, reverse, true);
    return "";
  }
  std::vector<Value *> sums;
  for (int64_t a : candidates)
    sums.push_back(cumSumAlong(b, x, *t, a, (*s)[static_cast<size_t>(a)].getValue(), exclusive, reverse, false));
  // Where(axis is 0, sum0, Where(axis is 1, sum1, ... sum(r-1))).
  Value *chosen = sums.back();
  for (int64_t a = r - 2; a >= 0; --a) {
    std::string n = "is_axis" + std::to_string(a);
    Value *c = b.op("Or", {b.op("Equal", {axisIn, b.scalar(*at, static_cast<double>(a), n + "_pos")}, n + "_p"),
                           b.op("Equal", {axisIn, b.scalar(*at, static_cast<double>(a - r), n + "_neg")}, n + "_n")},
                    n);
    if (a == 0) {
      b.finish("Where", {c, sums[0], chosen});
      return "";
    }
    chosen = b.op("Where", {c, sums[static_cast<size_t>(a)], chosen}, "along" + std::to_string(a));
  }
  return "";
}

//===----------------------------------------------------------------------===//
// GatherElements (opset 11)
//===----------------------------------------------------------------------===//

/// GatherElements-11 -> Gather on the flattened data (before 11), with the
/// data's dims (but the first, unless axis is 0) and the indices' shape
/// known: the linear index of out[i] is idx[i] * stride(axis) plus the
/// constant sum of i_k * stride(k) over the other axes; negative indices
/// are moved up by the axis' dim first.
///   Before: y = GatherElements<axis = 1>(x[2, 3], i[2, 2])
///   After:  n = Where(Less(i, 0), Add(i, 3), i)
///           l = Add(n, [[0, 0], [3, 3]])
///           f = Reshape(x, [-1])
///           y = Gather<axis = 0>(f, l)
std::string gatherElementsExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *data = node.operand(0), *idx = node.operand(1);
  std::optional<Shape> ds = knownShape(data);
  std::optional<std::vector<int64_t>> is = staticDims(idx);
  std::optional<DataType> it = knownElemType(idx);
  if (!ds || !is || ds->size() != is->size() || ds->empty())
    return "its data's rank or its indices' shape is unknown (the linear indices need them)";
  if (!it)
    return "its indices' element type is unknown";
  int64_t r = static_cast<int64_t>(ds->size());
  int64_t axis = node.attrInt("axis", 0);
  if (axis < -r || axis >= r)
    return "its axis " + std::to_string(axis) + " is out of range";
  if (axis < 0)
    axis += r;
  std::vector<int64_t> stride(static_cast<size_t>(r), 1);
  for (int64_t k = r - 2; k >= 0; --k) {
    const Dim &d = (*ds)[static_cast<size_t>(k + 1)];
    if (!d.isValue())
      return "its data's dim " + std::to_string(k + 1) + " is not static (the linear indices need it)";
    stride[static_cast<size_t>(k)] = stride[static_cast<size_t>(k + 1)] * d.getValue();
  }
  const Dim &axisDim = (*ds)[static_cast<size_t>(axis)];
  if (!axisDim.isValue())
    return "its data's dim " + std::to_string(axis) + " (the axis) is not static (negative indices need it)";
  int64_t count = 1;
  for (int64_t d : *is)
    count *= d;
  if (count > (int64_t{1} << 24))
    return "its indices have " + std::to_string(count) + " elements (too many for the constant offsets)";
  if (*it == DataType::Int32 && stride[0] * (*ds)[0].getValue() > INT32_MAX)
    return "its data is too large for int32 linear indices";
  std::vector<double> offsets(static_cast<size_t>(count), 0);
  std::vector<int64_t> pos(static_cast<size_t>(r), 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k)
      if (k != axis)
        off += pos[static_cast<size_t>(k)] * stride[static_cast<size_t>(k)];
    offsets[static_cast<size_t>(e)] = static_cast<double>(off);
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++pos[static_cast<size_t>(k)] < (*is)[static_cast<size_t>(k)])
        break;
      pos[static_cast<size_t>(k)] = 0;
    }
  }
  Value *neg = b.op("Less", {idx, b.scalar(*it, 0, "zero")}, "negative");
  Value *up = b.op("Add", {idx, b.scalar(*it, static_cast<double>(axisDim.getValue()), "axis_dim")}, "wrapped");
  Value *n = b.op("Where", {neg, up, idx}, "index");
  if (stride[static_cast<size_t>(axis)] != 1)
    n = b.op("Mul", {n, b.scalar(*it, static_cast<double>(stride[static_cast<size_t>(axis)]), "stride")}, "scaled");
  Value *lin = b.op("Add", {n, b.constant(*it, *is, offsets, "offsets")}, "linear");
  Value *flat = b.op("Reshape", {data, b.ints({-1}, "flat_shape")}, "flat");
  b.finish("Gather", {flat, lin}, {aInt("axis", 0)});
  return "";
}

//===----------------------------------------------------------------------===//
// Declines with a reason
//===----------------------------------------------------------------------===//

std::string needsSequenceTypes(Node &, StepContext &) { return "sequence types need opset 11"; }
std::string needsOptionalTypes(Node &, StepContext &) { return "optional types need opset 15"; }

} // namespace

void registerFunctionExpansions(AdapterRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 12, Direction::Down, nllExpanded);
  r.add("SoftmaxCrossEntropyLoss", 12, Direction::Down, sceExpanded);
  r.add("Celu", 12, Direction::Down, celuExpanded);
  r.add("GatherElements", 11, Direction::Down, gatherElementsExpanded);
  r.add("ThresholdedRelu", 10, Direction::Down, thresholdedReluExpanded);
  r.add("IsInf", 10, Direction::Down, isInfExpanded);
  r.add("Mod", 10, Direction::Down, modExpanded);
  r.add("Round", 11, Direction::Down, roundExpanded);
  r.add("CumSum", 11, Direction::Down, cumSumExpanded);
  for (const char *op : {"SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceInsert", "SequenceErase",
                         "SequenceLength", "SplitToSequence", "ConcatFromSequence"})
    r.add(op, 11, Direction::Down, needsSequenceTypes);
  for (const char *op : {"Optional", "OptionalHasElement", "OptionalGetElement"})
    r.add(op, 15, Direction::Down, needsOptionalTypes);
}

} // namespace opset
} // namespace onnxslim
