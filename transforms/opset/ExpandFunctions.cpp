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
//   Einsum (12)                 diagonals by Gather on the flattened
//                               pair; two terms with static dims: Transpose,
//                               Reshape, MatMul; else Transpose/Unsqueeze to
//                               one letter order, Mul, ReduceSum (constant
//                               equation, known ranks)
//   GatherElements (11)         Gather on the flattened data at linear
//                               indices (constant offsets for static
//                               shapes, else from NonZero of the indices'
//                               shape and the data's Shape: a known rank)
//   CumSum (11)                 Slice/Add chain, Concat (static length; a
//                               runtime axis picks among every axis' sum)
//   Round (11)                  Floor and comparisons (half to even)
//   Mod (10)                    integer Div (trunc) corrected to floor for
//                               fmod=0; float fmod as a - b*trunc(a/b) in
//                               double
//   IsInf (10)                  Greater/Less than the largest finite value
//   ThresholdedRelu (10)        Where(x > alpha, x, 0)
//   Bernoulli (15)              RandomUniformLike, Less, Cast (1 with probability p)
//   HannWindow, HammingWindow,  a constant for a constant size, else Range
//     BlackmanWindow (17)       and Cos arithmetic (their bodies)
//   DFT (17)                    MatMul with constant cos/sin matrices
//                               (static signal length)
//   STFT (17)                   Gather of the frames, window Mul, the DFT
//                               matrix (static frame length; a computed
//                               one builds frames and matrix at run time)
//   MelWeightMatrix (17)        its matrix as a constant (constant inputs)
//   DynamicQuantizeLinear (11)  its body (the zero point's Clip and Round
//                               by a QuantizeLinear of scale 1)
//   MatMulInteger (10)          MatMul in int32 of the shifted operands
//   ConvInteger (10)            Conv in float (exact: integer sums below
//                               2^24, the operands split in 16 * hi + lo
//                               when needed), Cast to int32
//   BitShift (11)               Mul/Div by a gathered power of 2 in int64
//                               (uint8/16/32)
//   ReverseSequence (10)        Gather of the rows (time, batch) from
//                               NonZero's grid
//   SequenceMap (17)            a Loop carrying a sequence per output
//                               (SequenceAt, the body, SequenceInsert;
//                               targets 13 and up)
// Declined with their reason: the Sequence ops below 11 ("sequence types
// need opset 11"), the Optional ops below 15 ("optional types need opset
// 15"), StringNormalizer-10 (strings), NonMaxSuppression-10 (greedy,
// data-dependent output), Unique-11 (deduplication), Det-11 (pivoting),
// QLinearMatMul-10 and QLinearConv-10 (requantization not reproduced
// exactly), BitShift on uint64 (no exact int64 form), SequenceMap-17 below
// 13 (Loop carries no sequences there).
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Body.h"

#include "runtime/Float16.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace onnxslim {
namespace opset {

namespace {


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
  roundBody(b, x, *t, true);
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
  DataType axisType = at.value_or(DataType::Int64);
  for (int64_t a = r - 2; a >= 0; --a) {
    std::string n = "is_axis" + std::to_string(a);
    Value *c = b.op("Or", {b.op("Equal", {axisIn, b.scalar(axisType, static_cast<double>(a), n + "_pos")}, n + "_p"),
                           b.op("Equal", {axisIn, b.scalar(axisType, static_cast<double>(a - r), n + "_neg")}, n + "_n")},
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

/// GatherElements-11 with shapes known only at run time (see
/// gatherElementsExpanded): the position of every index element comes from
/// NonZero of an all-true tensor of the indices' shape (its coordinates in
/// row-major order, [r, N]), the data's strides from products of its Shape's
/// dims; in int64:
///   Before: y = GatherElements<axis = 1>(x[?, ?], i[?, ?])
///   After:  d = Shape(x)
///           s = Concat(Gather(d, [1]), [0])           (strides, 0 at the axis)
///           p = NonZero(ConstantOfShape<value = bool {1}>(Shape(i)))
///           o = Reshape(ReduceSum<axes = [0], keepdims = 0>(Mul(p, Reshape(s, [2, 1]))), Shape(i))
///           n = Where(Less(i, 0), Add(i, Gather(d, 1)), i)
///           l = Add(Mul(n, 1), o)                     (the axis' stride)
///           y = Gather<axis = 0>(Reshape(x, [-1]), l)
/// (NonZero is opset 9: older targets decline through the driver.)
std::string gatherElementsRuntime(Body &b, Value *data, Value *idx, DataType it, int64_t r, int64_t axis) {
  Value *i64 = it == DataType::Int64 ? idx : b.op("Cast", {idx}, "index64", {aInt("to", static_cast<int64_t>(DataType::Int64))});
  Value *dshape = b.op("Shape", {data}, "data_shape");
  // stride[k] = prod(d[k+1:]) as [1]-shaped pieces; the axis' piece is 0
  // in the offsets (its coordinate is the index itself).
  std::vector<Value *> stride(static_cast<size_t>(r));
  if (axis != r - 1) // else the last stride is read nowhere
    stride[static_cast<size_t>(r - 1)] = b.ints({1}, "stride" + std::to_string(r - 1));
  for (int64_t k = r - 2; k >= 0; --k) {
    Value *dim = b.op("Gather", {dshape, b.ints({k + 1}, "dim" + std::to_string(k + 1) + "_at")},
                      "dim" + std::to_string(k + 1), {aInt("axis", 0)});
    stride[static_cast<size_t>(k)] = k == r - 2 ? dim : b.op("Mul", {stride[static_cast<size_t>(k + 1)], dim},
                                                             "stride" + std::to_string(k));
  }
  std::vector<Value *> pieces = stride;
  pieces[static_cast<size_t>(axis)] = b.ints({0}, "axis_stride0");
  Value *strides = r == 1 ? pieces[0] : b.op("Concat", pieces, "strides", {aInt("axis", 0)});
  Value *column = b.op("Reshape", {strides, b.ints({r, 1}, "strides_shape")}, "strides_col");
  Value *ishape = b.op("Shape", {idx}, "index_shape");
  Value *all = b.op("ConstantOfShape", {ishape}, "all", {aTensor("value", typedTensor(DataType::Bool, {1}, {1}))});
  Value *coords = b.op("NonZero", {all}, "coords");
  Value *weighted = b.op("Mul", {coords, column}, "weighted");
  Value *flatOff = b.axesOp("ReduceSum", weighted, {0}, "offsets_flat", {aInt("keepdims", 0)});
  Value *offsets = b.op("Reshape", {flatOff, ishape}, "offsets");
  Value *axisDim = b.op("Gather", {dshape, b.ints({axis}, "axis_at", true)}, "axis_dim", {aInt("axis", 0)});
  Value *neg = b.op("Less", {i64, b.ints({0}, "zero", true)}, "negative");
  Value *n = b.op("Where", {neg, b.op("Add", {i64, axisDim}, "wrapped"), i64}, "index");
  if (axis != r - 1)
    n = b.op("Mul", {n, stride[static_cast<size_t>(axis)]}, "scaled");
  Value *lin = b.op("Add", {n, offsets}, "linear");
  Value *flat = b.op("Reshape", {data, b.ints({-1}, "flat_shape")}, "flat");
  b.finish("Gather", {flat, lin}, {aInt("axis", 0)});
  return "";
}

/// GatherElements-11 -> Gather on the flattened data (before 11): the
/// linear index of out[i] is idx[i] * stride(axis) plus the sum of i_k *
/// stride(k) over the other axes; negative indices are moved up by the
/// axis' dim first. With the data's dims (but the first, unless axis is 0)
/// and the indices' shape static (at most 2^16 elements), the offsets are a
/// constant:
///   Before: y = GatherElements<axis = 1>(x[2, 3], i[2, 2])
///   After:  n = Where(Less(i, 0), Add(i, 3), i)
///           l = Add(n, [[0, 0], [3, 3]])
///           f = Reshape(x, [-1])
///           y = Gather<axis = 0>(f, l)
/// else (a known rank suffices) they are computed at run time: see
/// gatherElementsRuntime.
std::string gatherElementsExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *data = node.operand(0), *idx = node.operand(1);
  std::optional<Shape> ds = knownShape(data);
  std::optional<Shape> ishape = knownShape(idx);
  std::optional<DataType> it = knownElemType(idx);
  int64_t r = ds ? static_cast<int64_t>(ds->size()) : ishape ? static_cast<int64_t>(ishape->size()) : -1;
  if (r < 0)
    return "the rank of its data and indices is unknown (the linear indices need it)";
  if (r == 0 || (ds && ishape && ds->size() != ishape->size()))
    return "its data and indices do not have one rank of at least 1";
  if (!it || (*it != DataType::Int32 && *it != DataType::Int64))
    return "its indices' element type is " + typeName(it) + " (int32 or int64 expected)";
  int64_t axis = node.attrInt("axis", 0);
  if (axis < -r || axis >= r)
    return "its axis " + std::to_string(axis) + " is out of range";
  if (axis < 0)
    axis += r;
  std::optional<std::vector<int64_t>> is = staticDims(idx);
  std::vector<int64_t> stride(static_cast<size_t>(r), 1);
  bool known = ds && is && (*ds)[static_cast<size_t>(axis)].isValue();
  for (int64_t k = r - 2; known && k >= 0; --k) {
    const Dim &d = (*ds)[static_cast<size_t>(k + 1)];
    known = d.isValue();
    if (known)
      stride[static_cast<size_t>(k)] = stride[static_cast<size_t>(k + 1)] * d.getValue();
  }
  int64_t count = 1;
  if (known)
    for (int64_t d : *is)
      count *= d;
  if (!known || count > (int64_t{1} << 16))
    return gatherElementsRuntime(b, data, idx, *it, r, axis);
  const Dim &axisDim = (*ds)[static_cast<size_t>(axis)];
  if (*it == DataType::Int32 && (*ds)[0].isValue() && stride[0] * (*ds)[0].getValue() > INT32_MAX)
    return gatherElementsRuntime(b, data, idx, *it, r, axis);
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
// Einsum (opset 12)
//===----------------------------------------------------------------------===//

/// One Einsum operand while it is rewritten: its value and the label of
/// each axis (letters by their code, ellipsis dims 1000 + position among
/// the broadcast dims, right-aligned).
struct EinsumTerm {
  Value *v;
  std::vector<int> labels;
  std::vector<int64_t> dims; // -1: not static
};

/// Given an equation, the operands' ranks, Execute: fills the terms'
/// labels and the output's, Result: "" or why the equation is malformed.
std::string parseEinsum(std::string eq, const std::vector<int64_t> &ranks, std::vector<std::vector<int>> &terms,
                        std::vector<int> &out) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    size_t comma = lhs.find(',', at);
    parts.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  if (parts.size() != ranks.size())
    return "its equation has " + std::to_string(parts.size()) + " terms for " + std::to_string(ranks.size()) +
           " inputs";
  // The number of broadcast (ellipsis) dims of each term, and their max.
  std::vector<int64_t> ell(parts.size(), 0);
  int64_t maxEll = 0;
  auto letters = [](const std::string &t) {
    int64_t n = 0;
    for (char c : t)
      n += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
    return n;
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    size_t e = parts[i].find("...");
    int64_t l = letters(parts[i]);
    if (e == std::string::npos) {
      if (l != ranks[i])
        return "its term '" + parts[i] + "' has " + std::to_string(l) + " letters for an input of rank " +
               std::to_string(ranks[i]);
      continue;
    }
    if (l > ranks[i])
      return "its term '" + parts[i] + "' has more letters than its input's rank " + std::to_string(ranks[i]);
    ell[i] = ranks[i] - l;
    maxEll = std::max(maxEll, ell[i]);
  }
  std::map<int, int> count;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<int> labels;
    for (size_t k = 0; k < parts[i].size(); ++k) {
      char c = parts[i][k];
      if (c == '.') {
        if (parts[i].compare(k, 3, "...") != 0)
          return "its term '" + parts[i] + "' has a stray '.'";
        for (int64_t j = 0; j < ell[i]; ++j)
          labels.push_back(1000 + static_cast<int>(maxEll - ell[i] + j));
        k += 2;
      } else if (std::isalpha(static_cast<unsigned char>(c))) {
        labels.push_back(c);
      } else {
        return std::string("its equation has the character '") + c + "'";
      }
    }
    for (int l : labels)
      ++count[l];
    terms.push_back(std::move(labels));
  }
  if (arrow == std::string::npos) {
    for (int64_t j = 0; j < maxEll; ++j)
      out.push_back(1000 + static_cast<int>(j));
    for (const auto &[l, n] : count) // letters by code: the alphabetical order
      if (l < 1000 && n == 1)
        out.push_back(l);
    return "";
  }
  std::string rhs = eq.substr(arrow + 2);
  for (size_t k = 0; k < rhs.size(); ++k) {
    char c = rhs[k];
    if (c == '.' && rhs.compare(k, 3, "...") == 0) {
      for (int64_t j = 0; j < maxEll; ++j)
        out.push_back(1000 + static_cast<int>(j));
      k += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      if (!count.count(c))
        return std::string("its output letter '") + c + "' is in no input";
      out.push_back(c);
    } else {
      return std::string("its output has the character '") + c + "'";
    }
  }
  return "";
}

/// Einsum-12 -> Transpose, Gather (diagonals), ReduceSum, MatMul or Mul
/// (before 12), for a constant equation and inputs of known ranks:
///   1. a letter repeated in a term takes the diagonal: both axes moved
///      last, merged by Reshape (their dim static) and Gather at i*(n+1);
///   2. a letter in one term only and not in the output is summed there;
///   3. two terms with static dims, equal batch dims and a summed letter:
///      Transpose to [batch, left, sum] and [batch, sum, right], Reshape to
///      3-D, MatMul, Reshape and Transpose to the output;
///   4. otherwise every term is moved to one letter order (the output's,
///      then the summed ones) by Transpose and Unsqueeze, multiplied, and
///      the summed letters reduced.
///     Before: y = Einsum<equation = "bij,bjk->bik">(a[2, 3, 4], c[2, 4, 5])
///     After:  a3 = Reshape(a, [2, 3, 4]), c3 = Reshape(c, [2, 4, 5])
///             m = MatMul(a3, c3)
///             y = Reshape(m, [2, 3, 5])
/// (Reshapes and Transposes that change nothing are left out.)
std::string einsumExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  std::vector<EinsumTerm> terms;
  std::vector<int64_t> ranks;
  std::optional<DataType> et;
  for (Value *v : node.operands()) {
    std::optional<Shape> s = v ? knownShape(v) : std::nullopt;
    if (!s)
      return "the rank of its input '" + (v ? v->name() : std::string()) + "' is unknown";
    EinsumTerm t{v, {}, {}};
    for (const Dim &d : *s)
      t.dims.push_back(d.isValue() ? d.getValue() : -1);
    ranks.push_back(static_cast<int64_t>(s->size()));
    terms.push_back(std::move(t));
    if (!et)
      et = knownElemType(v);
  }
  if (terms.empty())
    return "it has no inputs";
  std::vector<std::vector<int>> labels;
  std::vector<int> out;
  if (std::string why = parseEinsum(node.attrString("equation", ""), ranks, labels, out); !why.empty())
    return why;
  for (size_t i = 0; i < terms.size(); ++i)
    terms[i].labels = labels[i];
  std::string pending; // the last op is written by the node: see `emit`
  int step = 0;
  auto name = [&](std::string_view what) { return std::string(what) + std::to_string(step++); };

  // 1. Diagonals.
  for (EinsumTerm &t : terms) {
    for (bool found = true; found;) {
      found = false;
      for (size_t p = 0; p < t.labels.size() && !found; ++p)
        for (size_t q = p + 1; q < t.labels.size() && !found; ++q) {
          if (t.labels[p] != t.labels[q])
            continue;
          found = true;
          int64_t n = t.dims[p];
          if (n < 0 || t.dims[q] != n)
            return "a repeated letter's dims are not static and equal (its diagonal is taken by Gather)";
          std::vector<int64_t> perm;
          std::vector<int> nl;
          std::vector<int64_t> nd;
          for (size_t k = 0; k < t.labels.size(); ++k)
            if (k != p && k != q) {
              perm.push_back(static_cast<int64_t>(k));
              nl.push_back(t.labels[k]);
              nd.push_back(t.dims[k]);
            }
          perm.push_back(static_cast<int64_t>(p));
          perm.push_back(static_cast<int64_t>(q));
          Value *moved = t.v;
          bool identity = true;
          for (size_t k = 0; k < perm.size(); ++k)
            identity = identity && perm[k] == static_cast<int64_t>(k);
          if (!identity)
            moved = b.op("Transpose", {t.v}, name("diag_moved"), {aInts("perm", perm)});
          std::vector<int64_t> shape(nl.size(), 0);
          shape.push_back(n * n);
          Value *merged = b.op("Reshape", {moved, b.ints(shape, name("diag_shape"))}, name("diag_merged"));
          std::vector<int64_t> at;
          for (int64_t i = 0; i < n; ++i)
            at.push_back(i * (n + 1));
          t.v = b.op("Gather", {merged, b.ints(at, name("diag_at"))}, name("diag"),
                     {aInt("axis", static_cast<int64_t>(nl.size()))});
          nl.push_back(t.labels[p]);
          nd.push_back(n);
          t.labels = nl;
          t.dims = nd;
        }
    }
  }
  // 2. Letters only one term has and the output lacks are summed there.
  std::map<int, int> termsWith;
  for (const EinsumTerm &t : terms)
    for (int l : t.labels)
      ++termsWith[l];
  std::set<int> outSet(out.begin(), out.end());
  for (EinsumTerm &t : terms) {
    std::vector<int64_t> axes;
    std::vector<int> nl;
    std::vector<int64_t> nd;
    for (size_t k = 0; k < t.labels.size(); ++k) {
      if (termsWith[t.labels[k]] == 1 && !outSet.count(t.labels[k]))
        axes.push_back(static_cast<int64_t>(k));
      else {
        nl.push_back(t.labels[k]);
        nd.push_back(t.dims[k]);
      }
    }
    if (axes.empty())
      continue;
    t.v = b.axesOp("ReduceSum", t.v, axes, name("summed"), {aInt("keepdims", 0)});
    t.labels = nl;
    t.dims = nd;
  }
  // The ops after this point may be the last: the node becomes that one.
  struct Op {
    std::string type;
    std::vector<Value *> in;
    std::vector<Attr> attrs;
    std::vector<int64_t> axes; // for ReduceSum
  };
  std::vector<Op> chain; // written lazily so that the last becomes the node
  Value *cur = nullptr;
  auto flush = [&](bool last) {
    // Writes every op of `chain` but (when `last`) the final one.
    for (size_t i = 0; i < chain.size(); ++i) {
      Op &o = chain[i];
      for (Value *&in : o.in)
        if (!in)
          in = cur;
      if (last && i + 1 == chain.size()) {
        if (!o.axes.empty())
          b.finishAxes(o.type, o.in[0], o.axes, o.attrs);
        else
          b.finish(o.type, o.in, o.attrs);
      } else if (!o.axes.empty()) {
        cur = b.axesOp(o.type, o.in[0], o.axes, name("einsum"), o.attrs);
      } else {
        cur = b.op(o.type, o.in, name("einsum"), o.attrs);
      }
    }
    chain.clear();
  };
  auto isIdentity = [](const std::vector<int64_t> &perm) {
    for (size_t k = 0; k < perm.size(); ++k)
      if (perm[k] != static_cast<int64_t>(k))
        return false;
    return true;
  };
  auto product = [](const std::vector<int64_t> &d) {
    int64_t p = 1;
    for (int64_t x : d)
      p *= x;
    return p;
  };

  // 3. Two terms, static dims: MatMul.
  if (terms.size() == 2) {
    EinsumTerm &A = terms[0], &B = terms[1];
    std::set<int> inA(A.labels.begin(), A.labels.end()), inB(B.labels.begin(), B.labels.end());
    std::vector<int> batch, left, right, sum;
    std::map<int, int64_t> dimOf;
    bool staticDims = true, equalBatch = true;
    for (size_t k = 0; k < A.labels.size(); ++k)
      dimOf[A.labels[k]] = A.dims[k];
    for (size_t k = 0; k < B.labels.size(); ++k) {
      int l = B.labels[k];
      if (dimOf.count(l) && dimOf[l] != B.dims[k])
        equalBatch = false;
      dimOf[l] = B.dims[k];
    }
    for (const auto &[l, d] : dimOf)
      staticDims = staticDims && d >= 0;
    for (int l : out) {
      if (inA.count(l) && inB.count(l))
        batch.push_back(l);
      else if (inA.count(l))
        left.push_back(l);
      else
        right.push_back(l);
    }
    for (int l : A.labels)
      if (inB.count(l) && !outSet.count(l))
        sum.push_back(l);
    if (staticDims && equalBatch && !sum.empty()) {
      auto permTo = [](const EinsumTerm &t, const std::vector<std::vector<int>> &groups) {
        std::vector<int64_t> perm;
        for (const auto &g : groups)
          for (int l : g)
            perm.push_back(std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin());
        return perm;
      };
      auto dimsOf = [&](const std::vector<int> &g) {
        std::vector<int64_t> d;
        for (int l : g)
          d.push_back(dimOf[l]);
        return d;
      };
      int64_t pb = product(dimsOf(batch)), pl = product(dimsOf(left)), pr = product(dimsOf(right)),
              pk = product(dimsOf(sum));
      auto side = [&](EinsumTerm &t, const std::vector<std::vector<int>> &groups, std::vector<int64_t> shape3) {
        std::vector<int64_t> perm = permTo(t, groups);
        Value *v = t.v;
        if (!isIdentity(perm))
          v = b.op("Transpose", {v}, name("operand"), {aInts("perm", perm)});
        std::vector<int64_t> moved;
        for (int64_t k : perm)
          moved.push_back(t.dims[static_cast<size_t>(k)]);
        if (moved == shape3)
          return v;
        return b.op("Reshape", {v, b.ints(shape3, name("shape3"))}, name("operand3"));
      };
      Value *a3 = side(A, {batch, left, sum}, {pb, pl, pk});
      Value *b3 = side(B, {batch, sum, right}, {pb, pk, pr});
      cur = b.op("MatMul", {a3, b3}, name("matmul"));
      std::vector<int> got = batch;
      got.insert(got.end(), left.begin(), left.end());
      got.insert(got.end(), right.begin(), right.end());
      std::vector<int64_t> full;
      for (int l : got)
        full.push_back(dimOf[l]);
      if (full != std::vector<int64_t>{pb, pl, pr})
        chain.push_back({"Reshape", {nullptr, b.ints(full, name("out_shape"))}, {}, {}});
      std::vector<int64_t> perm;
      for (int l : out)
        perm.push_back(std::find(got.begin(), got.end(), l) - got.begin());
      if (!isIdentity(perm))
        chain.push_back({"Transpose", {nullptr}, {aInts("perm", perm)}, {}});
      if (chain.empty())
        b.finishWith(cur);
      else
        flush(true);
      return "";
    }
  }

  // 4. One letter order; Mul; ReduceSum.
  std::vector<int> order = out;
  for (const EinsumTerm &t : terms)
    for (int l : t.labels)
      if (std::find(order.begin(), order.end(), l) == order.end())
        order.push_back(l);
  for (size_t i = 0; i < terms.size(); ++i) {
    EinsumTerm &t = terms[i];
    std::vector<int64_t> perm, missing;
    for (size_t k = 0; k < order.size(); ++k) {
      auto it = std::find(t.labels.begin(), t.labels.end(), order[k]);
      if (it == t.labels.end())
        missing.push_back(static_cast<int64_t>(k));
      else
        perm.push_back(it - t.labels.begin());
    }
    if (i > 0) { // the product so far is complete: written now
      flush(false);
      chain.push_back({"Mul", {cur, nullptr}, {}, {}});
    }
    Value *v = t.v;
    if (!isIdentity(perm))
      v = b.op("Transpose", {v}, name("ordered"), {aInts("perm", perm)});
    if (!missing.empty())
      v = b.axesOp("Unsqueeze", v, missing, name("aligned"));
    if (i == 0)
      cur = v;
    else
      chain.back().in[1] = v;
  }
  std::vector<int64_t> reduce;
  for (size_t k = out.size(); k < order.size(); ++k)
    reduce.push_back(static_cast<int64_t>(k));
  if (!reduce.empty())
    chain.push_back({"ReduceSum", {nullptr}, {aInt("keepdims", 0)}, reduce});
  if (chain.empty()) {
    b.finishWith(cur);
    return "";
  }
  flush(true);
  (void)et;
  return "";
}

//===----------------------------------------------------------------------===//
// Signal ops (opset 17) and Bernoulli (opset 15)
//===----------------------------------------------------------------------===//

/// The window functions' coefficients: a0 - a1 cos(x) + a2 cos(2x).
struct WindowCoefficients {
  float a0, a1, a2;
};
WindowCoefficients windowOf(std::string_view op) {
  if (op == "HannWindow")
    return {0.5f, 0.5f, 0.0f};
  if (op == "HammingWindow")
    return {25.0f / 46.0f, 1.0f - 25.0f / 46.0f, 0.0f};
  return {0.42f, 0.5f, 0.08f}; // BlackmanWindow
}

/// HannWindow-17, HammingWindow-17, BlackmanWindow-17 -> their bodies (before
/// 17), in float then cast to output_datatype:
///     Before: y = HannWindow<periodic = 1>(size)
///     After:  n = Cast<to = 1>(size)
///             i = Range(0.0, n, 1.0)
///             x = Mul(i, Div(6.2831853, n))        (n - 1: periodic = 0)
///             y = Sub(0.5, Mul(0.5, Cos(x)))       (Blackman: + 0.08 cos(2x))
/// A constant size gives the constant those ops compute (in float).
std::string windowExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *size = node.operand(0);
  WindowCoefficients w = windowOf(node.opType());
  bool periodic = node.attrInt("periodic", 1) != 0;
  DataType outType = static_cast<DataType>(node.attrInt("output_datatype", 1));
  if (!typedTensor(outType, {}, {0}))
    return "its output_datatype " + dataTypeName(outType) + " is not a numeric type";
  const float tau = 6.2831853f;
  if (std::optional<std::vector<int64_t>> n = constantIntsOperand(node, 0); n && n->size() == 1) {
    int64_t count = (*n)[0];
    if (count < 0 || count > (int64_t{1} << 24))
      return "its size " + std::to_string(count) + " is out of range";
    float sizeFp = static_cast<float>(count) - (periodic ? 0.0f : 1.0f);
    float inc = tau / sizeFp;
    std::vector<double> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      float x = static_cast<float>(i) * inc;
      float v = w.a0 - w.a1 * std::cos(x);
      if (w.a2 != 0.0f)
        v = v + w.a2 * std::cos(x * 2.0f);
      values[static_cast<size_t>(i)] = v;
    }
    b.finish("Constant", {}, {aTensor("value", typedTensor(outType, {count}, values))});
    return "";
  }
  DataType f = DataType::Float;
  Value *n = b.op("Cast", {size}, "size_fp", {aInt("to", static_cast<int64_t>(f))});
  Value *span = periodic ? n : b.op("Sub", {n, b.scalar(f, 1, "one")}, "symmetric_size");
  Value *inc = b.op("Div", {b.scalar(f, tau, "tau"), span}, "increment");
  Value *i = b.op("Range", {b.scalar(f, 0, "start"), n, b.scalar(f, 1, "delta")}, "range");
  Value *x = b.op("Mul", {i, inc}, "angle");
  Value *a1cos = b.op("Mul", {b.scalar(f, w.a1, "a1"), b.op("Cos", {x}, "cos")}, "a1_cos");
  bool cast = outType != f;
  auto last = [&](std::string type, const std::vector<Value *> &in, std::string_view what) {
    if (!cast) {
      b.finish(std::move(type), in);
      return;
    }
    Value *v = b.op(std::move(type), in, what);
    b.finish("Cast", {v}, {aInt("to", static_cast<int64_t>(outType))});
  };
  if (w.a2 == 0.0f) {
    last("Sub", {b.scalar(f, w.a0, "a0"), a1cos}, "window");
    return "";
  }
  Value *t0 = b.op("Sub", {b.scalar(f, w.a0, "a0"), a1cos}, "partial");
  Value *x2 = b.op("Mul", {x, b.scalar(f, 2, "two")}, "angle2");
  Value *a2cos = b.op("Mul", {b.scalar(f, w.a2, "a2"), b.op("Cos", {x2}, "cos2")}, "a2_cos");
  last("Add", {t0, a2cos}, "window");
  return "";
}

/// Writes the DFT of `x` (rank r, its last dim the c = 1 or 2 components)
/// along `axis` (static length len) with n points and turns the node into
/// its last op: the components and the axis are moved last, merged,
/// multiplied by the constant [c * len, 2K] matrix of cos/sin (rows past n
/// zero: truncation; n past len: zero padding; 1/n for the inverse), split
/// into [2, K] and moved back.
std::string dftBody(Body &b, Value *x, DataType et, int64_t r, int64_t axis, int64_t c, int64_t len, int64_t n,
                    bool inverse, bool onesided) {
  if (et != DataType::Float && et != DataType::Double && et != DataType::Float16)
    return "its input's element type is " + dataTypeName(et) + " (float, double or float16 expected)";
  if (n <= 0 || len <= 0)
    return "its signal or DFT length is 0";
  if (len * n > (int64_t{1} << 24))
    return "its DFT matrix would have " + std::to_string(len * n) + " entries (too many for a constant)";
  int64_t bins = onesided ? n / 2 + 1 : n;
  std::vector<double> m(static_cast<size_t>(c * len * 2 * bins), 0.0);
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  const double pi = 3.14159265358979323846;
  for (int64_t t = 0; t < std::min(len, n); ++t)
    for (int64_t k = 0; k < bins; ++k) {
      double theta = 2.0 * pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      double cs = std::cos(theta) * scale, sn = std::sin(theta) * scale;
      auto at = [&](int64_t row, int64_t col) -> double & {
        return m[static_cast<size_t>(row * 2 * bins + col)];
      };
      at(t, k) = cs;                // Re += xr cos
      at(t, bins + k) = sign * sn;  // Im += s xr sin
      if (c == 2) {
        at(len + t, k) = -sign * sn; // Re -= s xi sin
        at(len + t, bins + k) = cs;  // Im += xi cos
      }
    }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && d != r - 1)
      perm.push_back(d);
  perm.push_back(r - 1);
  perm.push_back(axis);
  std::vector<int64_t> back(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j)
    back[static_cast<size_t>(perm[static_cast<size_t>(j)])] = j;
  Value *moved = b.op("Transpose", {x}, "signal_last", {aInts("perm", perm)});
  std::vector<int64_t> flat(static_cast<size_t>(r - 2), 0);
  flat.push_back(c * len);
  Value *merged = b.op("Reshape", {moved, b.ints(flat, "merged_shape")}, "merged");
  Value *mat = b.constant(et, {c * len, 2 * bins}, m, "dft_matrix");
  Value *prod = b.op("MatMul", {merged, mat}, "spectrum");
  std::vector<int64_t> split(static_cast<size_t>(r - 2), 0);
  split.push_back(2);
  split.push_back(bins);
  Value *parts = b.op("Reshape", {prod, b.ints(split, "split_shape")}, "parts");
  b.finish("Transpose", {parts}, {aInts("perm", back)});
  return "";
}

/// DFT-17 -> MatMul with a constant cos/sin matrix (before 17; see
/// dftBody), for a known rank, a static signal length on the axis and
/// component dim, and a constant dft_length:
///     Before: y = DFT<axis = 1>(x[1, 10, 10, 1])
///     After:  t = Transpose<perm = [0, 2, 3, 1]>(x)
///             f = Reshape(t, [0, 0, 10])
///             s = MatMul(f, M[10, 20])
///             p = Reshape(s, [0, 0, 2, 10])
///             y = Transpose<perm = [0, 3, 1, 2]>(p)
std::string dftExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::optional<Shape> s = knownShape(x);
  std::optional<DataType> et = knownElemType(x);
  if (!s || !et || s->size() < 3)
    return "its input's rank (at least 3) or element type is unknown";
  int64_t r = static_cast<int64_t>(s->size());
  int64_t axis = node.attrInt("axis", 1);
  if (axis < 0)
    axis += r;
  if (axis < 1 || axis > r - 2)
    return "its axis " + std::to_string(node.attrInt("axis", 1)) + " is not a signal axis";
  const Dim &cd = s->back(), &ld = (*s)[static_cast<size_t>(axis)];
  if (!cd.isValue() || (cd.getValue() != 1 && cd.getValue() != 2))
    return "its input's last dim is not known to be 1 or 2";
  if (!ld.isValue())
    return "its signal length on axis " + std::to_string(axis) + " is not static (the DFT matrix needs it)";
  int64_t n = ld.getValue();
  if (node.operand(1)) {
    std::optional<std::vector<int64_t>> dl = constantIntsOperand(node, 1);
    if (!dl || dl->size() != 1)
      return "its dft_length is not a constant (the DFT matrix needs it)";
    n = (*dl)[0];
  }
  bool inverse = node.attrInt("inverse", 0) != 0, onesided = node.attrInt("onesided", 0) != 0;
  if (onesided && (inverse || cd.getValue() == 2))
    return "onesided is set with an inverse or complex input";
  return dftBody(b, x, *et, r, axis, cd.getValue(), ld.getValue(), n, inverse, onesided);
}

/// STFT-17 with a computed frame_length r and no window (before 17): the
/// frames and the DFT matrix are built at run time, the matrix's angles
/// 2 pi ((k t) mod r) / r in double as the constant matrix is (dftBody):
///     Before: y = STFT(x[B, len, c], step, , r)
///     After:  f = 1 + (len - r) / step                 (int64)
///             i = Add(Unsqueeze(Mul(Range(0, f, 1), step), [1]), Range(0, r, 1))
///             g = Gather<axis = 1>(x, i)               [B, f, r, c]
///             a = Mod(Mul(Unsqueeze(Range(0, r, 1), [1]), Range(0, K, 1)), r)
///             q = Div(Mul(Cast<double>(a), 2 pi), Cast<double>(r))
///             M = Cast(Concat(Cos(q), Neg(Sin(q)))) (real; complex: the
///                 rows for the imaginary parts are Concat(Sin(q), Cos(q)))
///             y = Transpose(Reshape(MatMul(Reshape(Transpose(g), [0, 0, -1]), M), [0, 0, 2, -1]))
/// with K = r / 2 + 1 bins when onesided, else r.
std::string stftComputedLength(Body &b, Value *x, DataType et, int64_t len, int64_t c) {
  Node &node = b.node();
  if (et != DataType::Float && et != DataType::Double && et != DataType::Float16)
    return "its signal's element type is " + dataTypeName(et) + " (float, double or float16 expected)";
  bool onesided = node.attrInt("onesided", 1) != 0;
  if (onesided && c == 2)
    return "onesided is set with a complex signal";
  Value *step = node.operand(1), *length = node.operand(3);
  if (!step || rankOf(step) != 0 || rankOf(length) != 0)
    return "its frame_step or frame_length is not a known scalar";
  auto i64 = [&](Value *v, const char *what) {
    return b.op("Cast", {v}, what, {aInt("to", static_cast<int64_t>(DataType::Int64))});
  };
  auto f64 = [&](Value *v, const char *what) {
    return b.op("Cast", {v}, what, {aInt("to", static_cast<int64_t>(DataType::Double))});
  };
  Value *r = i64(length, "frame_length");
  Value *st = i64(step, "step");
  Value *zero = b.ints({0}, "zero", true), *one = b.ints({1}, "one", true);
  Value *count = b.op("Add", {b.op("Div", {b.op("Sub", {b.ints({len}, "signal_length", true), r}, "span"), st}, "steps"), one},
                      "frames");
  Value *starts = b.op("Mul", {b.op("Range", {zero, count, one}, "frame"), st}, "starts");
  Value *t = b.op("Range", {zero, r, one}, "offsets");
  Value *idx = b.op("Add", {b.axesOp("Unsqueeze", starts, {1}, "starts_col"), t}, "frame_index");
  Value *frames = b.op("Gather", {x, idx}, "frames_gathered", {aInt("axis", 1)});
  Value *bins = onesided ? b.op("Add", {b.op("Div", {r, b.ints({2}, "two", true)}, "half"), one}, "bins") : r;
  Value *k = b.op("Range", {zero, bins, one}, "bin");
  Value *kt = b.op("Mod", {b.op("Mul", {b.axesOp("Unsqueeze", t, {1}, "offsets_col"), k}, "bin_times_offset"), r},
                   "angle_index");
  Value *theta = b.op("Div", {b.op("Mul", {f64(kt, "angle_index_d"), b.scalar(DataType::Double, 2.0 * M_PI, "two_pi")}, "angle_num"),
                              f64(r, "frame_length_d")},
                      "angle");
  Value *cs = b.op("Cos", {theta}, "cos"), *sn = b.op("Sin", {theta}, "sin");
  Value *m = b.op("Concat", {cs, b.op("Neg", {sn}, "neg_sin")}, "dft_real_rows", {aInt("axis", 1)});
  if (c == 2)
    m = b.op("Concat", {m, b.op("Concat", {sn, cs}, "dft_imag_rows", {aInt("axis", 1)})}, "dft_rows", {aInt("axis", 0)});
  if (et != DataType::Double)
    m = b.op("Cast", {m}, "dft_matrix", {aInt("to", static_cast<int64_t>(et))});
  Value *moved = b.op("Transpose", {frames}, "components_first", {aInts("perm", {0, 1, 3, 2})});
  Value *merged = b.op("Reshape", {moved, b.ints({0, 0, -1}, "merged_shape")}, "merged");
  Value *prod = b.op("MatMul", {merged, m}, "spectrum");
  Value *parts = b.op("Reshape", {prod, b.ints({0, 0, 2, -1}, "split_shape")}, "parts");
  b.finish("Transpose", {parts}, {aInts("perm", {0, 1, 3, 2})});
  return "";
}

/// STFT-17 -> Gather of the frames, the window, and the DFT matrix (before
/// 17), for a static signal length, a static frame length (a constant
/// frame_length or the window's dim) and a scalar frame_step (the frame
/// starts are a constant when it is one, else Range(0, frames) * step):
///     Before: y = STFT(x[1, 128, 1], step, window[16])
///     After:  f = 1 + (128 - 16) / step
///             i = Add(Unsqueeze(Mul(Range(0, f, 1), step), [1]), [0, ..., 15])
///             g = Gather<axis = 1>(x, i)
///             w = Mul(g, Reshape(window, [16, 1]))
///             ... the DFT body of w on axis 2 ...
std::string stftExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0), *step = node.operand(1), *window = node.operand(2);
  std::optional<Shape> s = knownShape(x);
  std::optional<DataType> et = knownElemType(x);
  if (!s || !et || s->size() != 3)
    return "its signal's rank (3) or element type is unknown";
  const Dim &ld = (*s)[1], &cd = (*s)[2];
  if (!ld.isValue() || !cd.isValue() || (cd.getValue() != 1 && cd.getValue() != 2))
    return "its signal's length or component dim is not static";
  int64_t len = ld.getValue(), c = cd.getValue();
  int64_t frameLen = -1;
  if (node.operand(3)) {
    std::optional<std::vector<int64_t>> fl = constantIntsOperand(node, 3);
    if ((!fl || fl->size() != 1) && !window)
      return stftComputedLength(b, x, *et, len, c);
    if (!fl || fl->size() != 1)
      return "its frame_length is not a constant";
    frameLen = (*fl)[0];
  }
  if (window) {
    std::optional<std::vector<int64_t>> wd = staticDims(window);
    if (!wd || wd->size() != 1)
      return "its window's length is not static";
    if (frameLen >= 0 && frameLen != (*wd)[0])
      return "its frame_length and window length differ";
    frameLen = (*wd)[0];
  }
  if (frameLen < 0)
    return "it has neither frame_length nor window";
  if (frameLen <= 0 || frameLen > len)
    return "its frame length " + std::to_string(frameLen) + " does not fit the signal";
  bool onesided = node.attrInt("onesided", 1) != 0;
  if (onesided && c == 2)
    return "onesided is set with a complex signal";
  std::vector<int64_t> offsets(static_cast<size_t>(frameLen));
  std::iota(offsets.begin(), offsets.end(), 0);
  Value *idx = nullptr;
  if (std::optional<std::vector<int64_t>> st = constantIntsOperand(node, 1); st && st->size() == 1) {
    int64_t fs = (*st)[0];
    if (fs <= 0)
      return "its frame_step " + std::to_string(fs) + " is not positive";
    int64_t frames = 1 + (len - frameLen) / fs;
    std::vector<int64_t> at;
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t t = 0; t < frameLen; ++t)
        at.push_back(f * fs + t);
    idx = ctx.constantBefore(node, nodeBase(node, "frame_index"), Tensor::fromValues(DataType::Int64, {frames, frameLen}, at));
  } else {
    if (!step || rankOf(step) != 0)
      return "its frame_step is not a known scalar";
    Value *st64 = b.op("Cast", {step}, "step", {aInt("to", static_cast<int64_t>(DataType::Int64))});
    Value *frames = b.op("Add", {b.op("Div", {b.ints({len - frameLen}, "span", true), st64}, "steps"), b.ints({1}, "one", true)},
                         "frames");
    Value *starts = b.op("Mul", {b.op("Range", {b.ints({0}, "zero", true), frames, b.ints({1}, "delta", true)}, "frame"), st64},
                         "starts");
    Value *col = b.axesOp("Unsqueeze", starts, {1}, "starts_col");
    idx = b.op("Add", {col, b.ints(offsets, "offsets")}, "frame_index");
  }
  Value *frames = b.op("Gather", {x, idx}, "frames_gathered", {aInt("axis", 1)});
  if (window)
    frames = b.op("Mul", {frames, b.op("Reshape", {window, b.ints({frameLen, 1}, "window_shape")}, "window_col")}, "windowed");
  return dftBody(b, frames, *et, 4, 2, c, frameLen, frameLen, false, onesided);
}

/// Bernoulli-15 -> a draw per element (before 15); random, so only the
/// shape, type and 0/1 values can be compared:
///     Before: y = Bernoulli<dtype = 11>(p)
///     After:  u = RandomUniformLike<low = 0.0, high = 1.0, dtype = p's type>(p)
///             l = Less(u, p)
///             y = Cast<to = 11>(l)
/// 1 with probability p, as the op defines (and ONNX Runtime draws): the
/// function body in onnx's schema compares Greater(u, p), which gives 1
/// with probability 1 - p.
std::string bernoulliExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *p = node.operand(0);
  std::optional<DataType> t = knownElemType(p);
  if (!t)
    return "its input's element type is unknown";
  std::vector<Attr> attrs{aFloat("low", 0.0f), aFloat("high", 1.0f), aInt("dtype", static_cast<int64_t>(*t))};
  if (const Attribute *seed = node.attr("seed"))
    attrs.push_back(aFloat("seed", seed->f));
  int64_t to = node.attrInt("dtype", static_cast<int64_t>(*t));
  Value *u = b.op("RandomUniformLike", {p}, "uniform", attrs);
  Value *l = b.op("Less", {u, p}, "drawn");
  b.finish("Cast", {l}, {aInt("to", to)});
  return "";
}

/// The scalar of a constant float/double/float16 operand, or nullopt.
std::optional<double> constantScalar(const Value *v, DataType &type) {
  TensorPtr t = v ? constantTensor(v) : nullptr;
  if (!t || t->numElements() != 1)
    return std::nullopt;
  type = t->dtype();
  switch (t->dtype()) {
  case DataType::Float: return t->at<float>(0);
  case DataType::Double: return t->at<double>(0);
  case DataType::Float16: return rt::halfBitsToFloat(t->at<uint16_t>(0));
  default: return std::nullopt;
  }
}

/// MelWeightMatrix-17 with constant inputs -> the matrix as a Constant
/// (before 17), computed as the spec's reference does: the mel edges
/// 2595 log10(1 + f / 700) in the edges' type (float: float32), num_mel_bins
/// + 2 points mel_step apart mapped back to hertz and to DFT bins
/// floor((dft_length + 1) * hz / sample_rate) in double, and triangles
/// rising from each bin to the next and falling to the one after:
///     Before: m = MelWeightMatrix(8, 16, 8192, 0.0, 4096.0)
///     After:  m = Constant<value = float[9, 8] {...}>()
std::string melExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  std::vector<int64_t> ints;
  for (size_t i = 0; i < 3; ++i) {
    std::optional<std::vector<int64_t>> v = constantIntsOperand(node, i);
    if (!v || v->size() != 1)
      return "its input " + std::to_string(i) +
             " is not a constant (the matrix is written as a constant: its bins are floors of float32 "
             "logarithms that older ops would not reproduce bit for bit)";
    ints.push_back((*v)[0]);
  }
  DataType lt = DataType::Undefined, ut = DataType::Undefined;
  std::optional<double> lower = constantScalar(node.operand(3), lt), upper = constantScalar(node.operand(4), ut);
  if (!lower || !upper)
    return "its edge frequencies are not float constants (the matrix is written as a constant: its bins are "
           "floors of float32 logarithms that older ops would not reproduce bit for bit)";
  int64_t mels = ints[0], dft = ints[1], rate = ints[2];
  DataType outType = static_cast<DataType>(node.attrInt("output_datatype", 1));
  if (!typedTensor(outType, {}, {0}))
    return "its output_datatype " + dataTypeName(outType) + " is not a numeric type";
  if (mels <= 0 || dft <= 0 || rate <= 0 || mels > 4096 || dft > (int64_t{1} << 20))
    return "its sizes (" + std::to_string(mels) + " bins, DFT length " + std::to_string(dft) + ", rate " +
           std::to_string(rate) + ") are out of range";
  int64_t spectrum = dft / 2 + 1;
  if (spectrum * mels > (int64_t{1} << 24))
    return "its matrix would have " + std::to_string(spectrum * mels) + " entries (too many for a constant)";
  double lowMel, step;
  if (lt == DataType::Double && ut == DataType::Double) {
    lowMel = 2595.0 * std::log10(1.0 + *lower / 700.0);
    double highMel = 2595.0 * std::log10(1.0 + *upper / 700.0);
    step = (highMel - lowMel) / static_cast<double>(mels + 2);
  } else {
    float lo = 2595.0f * std::log10(1.0f + static_cast<float>(*lower) / 700.0f);
    float hi = 2595.0f * std::log10(1.0f + static_cast<float>(*upper) / 700.0f);
    lowMel = lo;
    step = static_cast<float>((hi - lo) / static_cast<float>(mels + 2));
  }
  std::vector<int64_t> bins(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    double mel = static_cast<double>(i) * step + lowMel;
    double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    bins[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> m(static_cast<size_t>(spectrum * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double * {
    return j >= 0 && j < spectrum ? &m[static_cast<size_t>(j * mels + i)] : nullptr;
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = bins[static_cast<size_t>(i)], center = bins[static_cast<size_t>(i + 1)],
            right = bins[static_cast<size_t>(i + 2)];
    int64_t up = center - left, down = right - center;
    for (int64_t j = up == 0 ? center : left; j <= center; ++j) {
      double *e = at(j, i);
      if (!e)
        return "its bin " + std::to_string(j) + " falls outside the " + std::to_string(spectrum) +
               " spectrogram bins (the reference fails there)";
      *e = up == 0 ? 1.0 : static_cast<double>(j - left) / static_cast<double>(up);
    }
    for (int64_t j = center; down > 0 && j < right; ++j) {
      double *e = at(j, i);
      if (!e)
        return "its bin " + std::to_string(j) + " falls outside the " + std::to_string(spectrum) +
               " spectrogram bins (the reference fails there)";
      *e = static_cast<double>(right - j) / static_cast<double>(down);
    }
  }
  (void)ctx;
  b.finish("Constant", {}, {aTensor("value", typedTensor(outType, {spectrum, mels}, m))});
  return "";
}

//===----------------------------------------------------------------------===//
// Quantization (opsets 10 and 11)
//===----------------------------------------------------------------------===//

/// The copyable form of the int, ints and string attributes of `node`
/// (Conv's), for the node an expansion writes.
std::vector<Attr> copyAttrs(const Node &node) {
  std::vector<Attr> out;
  for (const Attribute &a : node.attributes()) {
    if (a.kind == AttrKind::Int)
      out.push_back(aInt(a.name, a.i));
    else if (a.kind == AttrKind::Ints)
      out.push_back(aInts(a.name, a.ints));
    else if (a.kind == AttrKind::String)
      out.push_back(Attr{Attr::String, a.name, 0, {}, 0, a.s, {}});
  }
  return out;
}

/// DynamicQuantizeLinear-11 -> its function body (before 11), with the
/// zero point's Clip and Round done by a QuantizeLinear of scale 1 (which
/// saturates to [0, 255] and rounds half to even, as Clip and Round do),
/// and the scale of an all-zero input 1 (ONNX Runtime's choice; the body
/// divides 0 by 0 there):
///     Before: y, s, z = DynamicQuantizeLinear(x)
///     After:  lo = Min(ReduceMin<keepdims = 0>(x), 0.0)
///             hi = Max(ReduceMax<keepdims = 0>(x), 0.0)
///             r = Sub(hi, lo)
///             s = Where(Not(Greater(r, 0.0)), 1.0, Div(r, 255.0))
///             z = QuantizeLinear(Sub(0.0, Div(lo, s)), 1.0, uint8 0)
///             y = QuantizeLinear(x, s, z)
std::string dynamicQuantizeExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0);
  std::optional<DataType> t = knownElemType(x);
  if (t != DataType::Float)
    return "its input's element type is " + typeName(t) + " (float expected)";
  DataType f = DataType::Float;
  Value *zero = b.scalar(f, 0, "zero");
  Value *lo = b.op("Min", {b.op("ReduceMin", {x}, "x_min", {aInt("keepdims", 0)}), zero}, "min_adjusted");
  Value *hi = b.op("Max", {b.op("ReduceMax", {x}, "x_max", {aInt("keepdims", 0)}), zero}, "max_adjusted");
  Value *range = b.op("Sub", {hi, lo}, "range");
  Value *flat = b.op("Not", {b.op("Greater", {range, zero}, "nonzero_range")}, "zero_range");
  Value *one = b.scalar(f, 1, "one");
  Value *scale = b.op("Where", {flat, one, b.op("Div", {range, b.scalar(f, 255, "qmax")}, "range_scaled")}, "scale");
  Value *initial = b.op("Sub", {zero, b.op("Div", {lo, scale}, "min_scaled")}, "zero_point_fp");
  Value *zp = b.op("QuantizeLinear", {initial, one, b.constant(DataType::UInt8, {}, {0}, "u8_zero")}, "zero_point");
  b.moveResult(2, zp);
  b.moveResult(1, scale);
  b.finish("QuantizeLinear", {x, scale, zp});
  return "";
}

/// MatMulInteger-10 -> MatMul in int32 (before 10): the int32 sums
/// MatMulInteger defines (its output is int32):
///     Before: y = MatMulInteger(a, b, az, bz)
///     After:  a32 = Sub(Cast<to = 6>(a), Cast<to = 6>(az))
///             b32 = Sub(Cast<to = 6>(b), Cast<to = 6>(bz))
///             y = MatMul(a32, b32)
/// A 1-D per-row a_zero_point [M] is made [M, 1] first (the other forms
/// broadcast as they are).
std::string matMulIntegerExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  auto side = [&](size_t i, size_t z, std::string_view what, bool perRow, std::string &why) -> Value * {
    Value *v = b.op("Cast", {node.operand(i)}, std::string(what) + "_i32", {aInt("to", static_cast<int64_t>(DataType::Int32))});
    Value *zp = node.numOperands() > z ? node.operand(z) : nullptr;
    if (!zp)
      return v;
    int64_t zr = rankOf(zp);
    if (zr < 0) {
      why = "the rank of its " + std::string(what) + "_zero_point is unknown";
      return nullptr;
    }
    Value *zv = b.op("Cast", {zp}, std::string(what) + "_zero_point_i32", {aInt("to", static_cast<int64_t>(DataType::Int32))});
    if (perRow && zr == 1 && rankOf(node.operand(i)) != 1)
      zv = b.axesOp("Unsqueeze", zv, {1}, std::string(what) + "_zero_point_col");
    return b.op("Sub", {v, zv}, std::string(what) + "_centered");
  };
  std::string why;
  Value *a = side(0, 2, "a", true, why);
  Value *c = why.empty() ? side(1, 3, "b", false, why) : nullptr;
  if (!why.empty())
    return why;
  b.finish("MatMul", {a, c});
  return "";
}

/// ConvInteger-10 -> Conv in float (before 10; ONNX Runtime's Conv takes
/// float only), exact because every partial sum is an integer below 2^24:
/// the K = C/group * prod(kernel) products of the zero-point-shifted
/// values are at most 255 * 255 each; when K * 255^2 reaches 2^24 the
/// input is split into 16 * hi + lo (lo in [0, 15]) and, further, the
/// weights too, each Conv summed in int32 after a Cast:
///     Before: y = ConvInteger<pads = [1, 1, 1, 1]>(x, w, xz)
///     After:  xf = Sub(Cast<to = 1>(x), Cast<to = 1>(xz))
///             wf = Cast<to = 1>(w)
///             c = Conv<pads = [1, 1, 1, 1]>(xf, wf)     (padding: 0 = the zero point)
///             y = Cast<to = 6>(c)
/// A 1-D w_zero_point [M] is reshaped to [M, 1, ...]; the weights' dims
/// but the first must be static (K bounds the sums).
std::string convIntegerExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0), *w = node.operand(1);
  Value *xz = node.numOperands() > 2 ? node.operand(2) : nullptr, *wz = node.numOperands() > 3 ? node.operand(3) : nullptr;
  std::optional<Shape> ws = knownShape(w);
  if (!ws || ws->size() < 3)
    return "its weights' rank is unknown";
  int64_t k = 1;
  for (size_t d = 1; d < ws->size(); ++d) {
    if (!(*ws)[d].isValue())
      return "its weights' dim " + std::to_string(d) + " is not static (the exactness bound needs it)";
    k *= (*ws)[d].getValue();
  }
  int64_t split = k * 255 * 255 < (int64_t{1} << 24) ? 0 : k * 16 * 255 < (int64_t{1} << 24) ? 1
                  : k * 16 * 16 < (int64_t{1} << 24) ? 2 : 3;
  if (split == 3)
    return "its sums run over " + std::to_string(k) + " products (float sums are exact up to 65535)";
  DataType f = DataType::Float;
  auto fp = [&](Value *v, std::string_view what) { return b.op("Cast", {v}, what, {aInt("to", static_cast<int64_t>(f))}); };
  Value *xf = fp(x, "x_fp");
  if (xz)
    xf = b.op("Sub", {xf, fp(xz, "x_zero_point_fp")}, "x_centered");
  Value *wf = fp(w, "w_fp");
  if (wz) {
    int64_t zr = rankOf(wz);
    if (zr < 0)
      return "the rank of its w_zero_point is unknown";
    Value *zv = fp(wz, "w_zero_point_fp");
    if (zr == 1) {
      std::vector<int64_t> shape(ws->size(), 1);
      shape[0] = -1;
      zv = b.op("Reshape", {zv, b.ints(shape, "w_zero_point_shape")}, "w_zero_point_col");
    }
    wf = b.op("Sub", {wf, zv}, "w_centered");
  }
  std::vector<Attr> convAttrs = copyAttrs(node);
  Value *sixteen = b.scalar(f, 16, "sixteen");
  auto parts = [&](Value *v, bool doSplit, std::string_view what) -> std::vector<Value *> {
    if (!doSplit)
      return {v};
    Value *hi = b.op("Floor", {b.op("Div", {v, sixteen}, std::string(what) + "_div16")}, std::string(what) + "_hi");
    Value *lo = b.op("Sub", {v, b.op("Mul", {hi, sixteen}, std::string(what) + "_hi16")}, std::string(what) + "_lo");
    return {hi, lo};
  };
  std::vector<Value *> xs = parts(xf, split >= 1, "x"), wsplit = parts(wf, split >= 2, "w");
  if (split == 0) {
    Value *c = b.op("Conv", {xf, wf}, "conv", convAttrs);
    b.finish("Cast", {c}, {aInt("to", static_cast<int64_t>(DataType::Int32))});
    return "";
  }
  // sum over the parts: x_hi scales by 16, w_hi by 16, in int32.
  Value *acc = nullptr;
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t j = 0; j < wsplit.size(); ++j) {
      std::string tag = std::to_string(i) + std::to_string(j);
      Value *c = b.op("Conv", {xs[i], wsplit[j]}, "conv" + tag, convAttrs);
      Value *ci = b.op("Cast", {c}, "conv" + tag + "_i32", {aInt("to", static_cast<int64_t>(DataType::Int32))});
      int64_t scale = (xs.size() == 2 && i == 0 ? 16 : 1) * (wsplit.size() == 2 && j == 0 ? 16 : 1);
      if (scale != 1)
        ci = b.op("Mul", {ci, b.constant(DataType::Int32, {}, {static_cast<double>(scale)}, "scale" + tag)}, "conv" + tag + "_scaled");
      acc = acc ? b.op("Add", {acc, ci}, "sum" + tag) : ci;
    }
  b.finishWith(acc);
  return "";
}

//===----------------------------------------------------------------------===//
// BitShift (opset 11), ReverseSequence (opset 10)
//===----------------------------------------------------------------------===//

/// BitShift-11 -> integer arithmetic in int64 (before 11; ONNX Runtime's
/// Mul and Div below 13 take no unsigned types), for uint8, uint16 and
/// uint32 (uint64 has no exact form in int64): the power 2^y is a Gather
/// from the constant [1, 2, 4, ...] (y must be below the bit width, which
/// the spec leaves undefined past it), LEFT wraps to the width:
///     Before: z = BitShift<direction = "LEFT">(x, y)          (uint8)
///     After:  p = Gather([1, 2, ..., 128], Cast<to = 7>(y))
///             m = Mul(Cast<to = 7>(x), p)
///             z = Cast<to = 2>(Sub(m, Mul(Div(m, 256), 256)))
///     RIGHT:  z = Cast<to = 2>(Div(Cast<to = 7>(x), p))
std::string bitShiftExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0), *y = node.operand(1);
  std::optional<DataType> t = knownElemType(x);
  int bits = t == DataType::UInt8 ? 8 : t == DataType::UInt16 ? 16 : t == DataType::UInt32 ? 32 : 0;
  if (!bits)
    return "its element type is " + typeName(t) + " (uint8, uint16 and uint32 are written in int64; " +
           "uint64 has no exact form before opset 11)";
  std::string dir = node.attrString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return "its direction '" + dir + "' is not LEFT or RIGHT";
  DataType i64 = DataType::Int64;
  std::vector<int64_t> powers;
  for (int k = 0; k < bits; ++k)
    powers.push_back(int64_t{1} << k);
  Value *x64 = b.op("Cast", {x}, "x_i64", {aInt("to", static_cast<int64_t>(i64))});
  Value *y64 = b.op("Cast", {y}, "y_i64", {aInt("to", static_cast<int64_t>(i64))});
  Value *pow = b.op("Gather", {b.ints(powers, "powers"), y64}, "power", {aInt("axis", 0)});
  Value *res = nullptr;
  if (dir == "RIGHT") {
    res = b.op("Div", {x64, pow}, "shifted");
  } else {
    Value *m = b.op("Mul", {x64, pow}, "shifted");
    Value *wrap = b.ints({int64_t{1} << bits}, "modulus", true);
    res = b.op("Sub", {m, b.op("Mul", {b.op("Div", {m, wrap}, "carry"), wrap}, "carried")}, "wrapped");
  }
  b.finish("Cast", {res}, {aInt("to", static_cast<int64_t>(*t))});
  return "";
}

/// ReverseSequence-10 -> a Gather of rows (before 10): x's first two dims
/// (time and batch, in the order of time_axis) are merged by Flatten; the
/// row of each (i, j), in row-major order from NonZero of an all-true
/// [d0, d1], reads time t' = len - 1 - t where t < len (len =
/// sequence_lens[batch]), else t:
///     Before: y = ReverseSequence<time_axis = 0, batch_axis = 1>(x, lens)
///     After:  s = Shape(x)
///             g = NonZero(ConstantOfShape<value = bool {1}>(Gather(s, [0, 1])))
///             t = Gather(g, 0), n = Gather(g, 1), l = Gather(lens, n)
///             u = Where(Less(t, l), Sub(Sub(l, 1), t), t)
///             r = Add(Mul(u, Gather(s, 1)), n)
///             y = Reshape(Gather(Flatten<axis = 2>(x), r), s)
std::string reverseSequenceExpanded(Node &node, StepContext &ctx) {
  Body b(node, ctx);
  Value *x = node.operand(0), *lens = node.operand(1);
  int64_t timeAxis = node.attrInt("time_axis", 0), batchAxis = node.attrInt("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return "its time_axis and batch_axis are not 0 and 1";
  if (knownElemType(lens) != DataType::Int64)
    return "its sequence_lens' element type is " + typeName(knownElemType(lens)) + " (int64 expected)";
  Value *shape = b.op("Shape", {x}, "shape");
  Value *lead = b.op("Gather", {shape, b.ints({0, 1}, "lead_at")}, "lead", {aInt("axis", 0)});
  Value *all = b.op("ConstantOfShape", {lead}, "all", {aTensor("value", typedTensor(DataType::Bool, {1}, {1}))});
  Value *grid = b.op("NonZero", {all}, "grid");
  Value *c0 = b.op("Gather", {grid, b.ints({0}, "row0", true)}, "coord0", {aInt("axis", 0)});
  Value *c1 = b.op("Gather", {grid, b.ints({1}, "row1", true)}, "coord1", {aInt("axis", 0)});
  Value *t = timeAxis == 0 ? c0 : c1, *n = timeAxis == 0 ? c1 : c0;
  Value *len = b.op("Gather", {lens, n}, "length", {aInt("axis", 0)});
  Value *one = b.ints({1}, "one", true);
  Value *mirrored = b.op("Sub", {b.op("Sub", {len, one}, "last"), t}, "mirrored");
  Value *u = b.op("Where", {b.op("Less", {t, len}, "inside"), mirrored, t}, "source");
  Value *first = timeAxis == 0 ? u : n, *second = timeAxis == 0 ? n : u;
  Value *d1 = b.op("Gather", {shape, b.ints({1}, "dim1_at", true)}, "dim1", {aInt("axis", 0)});
  Value *row = b.op("Add", {b.op("Mul", {first, d1}, "row_base"), second}, "row");
  Value *flat = b.op("Flatten", {x}, "rows", {aInt("axis", 2)});
  Value *g = b.op("Gather", {flat, row}, "gathered", {aInt("axis", 0)});
  b.finish("Reshape", {g, shape});
  return "";
}

//===----------------------------------------------------------------------===//
// Declines with a reason
//===----------------------------------------------------------------------===//

std::string needsSequenceTypes(Node &, StepContext &) { return "sequence types need opset 11"; }
std::string needsOptionalTypes(Node &, StepContext &) { return "optional types need opset 15"; }
std::string stringOpDeclined(Node &, StepContext &) {
  return "it normalizes strings (case change, stopwords), which no older operator does";
}
std::string nmsDeclined(Node &, StepContext &) {
  return "its greedy suppression (each kept box removes the later ones it overlaps, a data-dependent number of "
         "outputs) has no exact form in older operators";
}
std::string uniqueDeclined(Node &, StepContext &) {
  return "it deduplicates (its outputs' length is the number of distinct values or slices, known only at run "
         "time), which no older operator does";
}
std::string detDeclined(Node &, StepContext &) {
  return "a determinant needs a pivoted elimination (a data-dependent choice of rows at each step); no exact form "
         "in older operators";
}

//===----------------------------------------------------------------------===//
// SequenceMap-17
//===----------------------------------------------------------------------===//

/// SequenceMap-17 -> opset 16: its definition, a Loop over the first
/// sequence's positions that carries one sequence per output and appends
/// the body's results to them (Loop carries sequences from opset 13):
///   Before:                          After:
///     o1, o2 = SequenceMap(s, t, u)    n = SequenceLength(s)
///       body (x, y, z) -> (a, b)       e1 = SequenceEmpty<dtype = a's>()
///                                      e2 = SequenceEmpty<dtype = b's>()
///                                      o1, o2 = Loop(n, , e1, e2)
///                                        body (i, c, p1, p2) -> (c', q1, q2):
///                                          x = SequenceAt(s, i)
///                                          y = SequenceAt(t, i)   (t a sequence)
///                                          ...body, z read as u   (u a tensor)
///                                          q1 = SequenceInsert(p1, a)
///                                          q2 = SequenceInsert(p2, b)
///                                          c' = Identity(c)
std::string expandSequenceMap(Node &node, StepContext &ctx) {
  if (ctx.target < 13)
    return "its Loop form carries sequences, which Loop takes from opset 13";
  Attribute *attr = node.attr("body");
  Graph *body = attr ? attr->g.get() : nullptr;
  if (!body || body->inputs().size() != node.numOperands() || body->numOutputs() != node.numResults())
    return "its body does not match its inputs and outputs";
  std::vector<bool> isSeq;
  for (Value *v : node.operands()) {
    if (!v || !v->type())
      return "the type of its input '" + (v ? v->name() : std::string()) + "' is not known";
    isSeq.push_back(v->type()->kind() == Type::Kind::Sequence);
  }
  if (!isSeq[0])
    return "its first input is not a sequence";
  std::vector<DataType> outTypes;
  for (size_t k = 0; k < body->numOutputs(); ++k) {
    const GraphOutput &slot = body->outputSlot(k);
    const std::optional<Type> &t = slot.type ? slot.type : body->output(k)->type();
    if (!t || !t->isTensor() || t->elemType() == DataType::Undefined)
      return "the element type of its body's output " + std::to_string(k) + " is not known";
    outTypes.push_back(t->elemType());
  }
  Model &model = ctx.model;
  Body b(node, ctx);
  std::vector<Value *> outer = node.operands();
  Value *count = b.op("SequenceLength", {outer[0]}, "count");
  std::vector<Value *> loopIn{count, nullptr};
  for (DataType t : outTypes)
    loopIn.push_back(b.op("SequenceEmpty", {}, "empty", {aInt("dtype", static_cast<int64_t>(t))}));

  // The body: its inputs become reads of the outer values at position i.
  auto fresh = [&](const char *what) { return model.names().fresh(nodeBase(node, what)); };
  Value *iter = nullptr, *condIn = nullptr;
  std::vector<Value *> oldInputs = body->inputs();
  iter = body->addInput(fresh("map_i"), Type::tensor(DataType::Int64, Shape{}));
  condIn = body->addInput(fresh("map_cond_in"), Type::tensor(DataType::Bool, Shape{}));
  std::vector<Value *> carried;
  for (size_t k = 0; k < outTypes.size(); ++k)
    carried.push_back(body->addInput(fresh("map_acc"), Type::sequence(Type::tensor(outTypes[k]))));
  Node *front = body->firstNode();
  for (size_t j = 0; j < oldInputs.size(); ++j) {
    Value *in = oldInputs[j];
    Value *with = outer[j];
    if (isSeq[j]) {
      std::string name = fresh("map_element");
      Node *at = body->createNode("SequenceAt", {outer[j], iter}, {name});
      at->setName(model.names().fresh(name + "_node"));
      if (front)
        body->insertBefore(front, at);
      else
        body->append(at);
      with = at->result(0);
      if (const Type *inner = outer[j]->type()->inner())
        with->setType(*inner);
    }
    in->replaceAllUsesWith(with);
    body->eraseInput(in);
  }
  auto bodyNode = [&](const char *op, std::vector<Value *> in, const char *what) {
    std::string name = fresh(what);
    Node *n = body->createNode(op, in, {name});
    n->setName(model.names().fresh(name + "_node"));
    body->append(n);
    return n->result(0);
  };
  std::vector<Value *> results = body->outputs();
  while (body->numOutputs() > 0)
    body->eraseOutput(body->numOutputs() - 1);
  Value *condOut = bodyNode("Identity", {condIn}, "map_cond_out");
  condOut->setType(Type::tensor(DataType::Bool, Shape{}));
  body->addOutput(condOut, Type::tensor(DataType::Bool, Shape{}));
  for (size_t k = 0; k < results.size(); ++k) {
    Value *next = bodyNode("SequenceInsert", {carried[k], results[k]}, "map_acc_next");
    Type seq = Type::sequence(Type::tensor(outTypes[k]));
    next->setType(seq);
    body->addOutput(next, seq);
  }
  std::unique_ptr<Graph> owned = std::move(attr->g);
  b.finish("Loop", loopIn);
  node.setAttr(Attribute::makeGraph("body", std::move(owned)));
  return "";
}
std::string qlinearDeclined(Node &, StepContext &) {
  return "its requantization (an int32 accumulator scaled by a float multiplier, rounded and saturated) is not "
         "reproduced exactly in older operators";
}

} // namespace

void registerFunctionExpansions(AdapterRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 12, Direction::Down, nllExpanded);
  r.add("SoftmaxCrossEntropyLoss", 12, Direction::Down, sceExpanded);
  r.add("Celu", 12, Direction::Down, celuExpanded);
  r.add("Einsum", 12, Direction::Down, einsumExpanded);
  r.add("GatherElements", 11, Direction::Down, gatherElementsExpanded);
  r.add("ThresholdedRelu", 10, Direction::Down, thresholdedReluExpanded);
  r.add("IsInf", 10, Direction::Down, isInfExpanded);
  r.add("Mod", 10, Direction::Down, modExpanded);
  r.add("Round", 11, Direction::Down, roundExpanded);
  r.add("CumSum", 11, Direction::Down, cumSumExpanded);
  for (const char *op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r.add(op, 17, Direction::Down, windowExpanded);
  r.add("DFT", 17, Direction::Down, dftExpanded);
  r.add("STFT", 17, Direction::Down, stftExpanded);
  r.add("MelWeightMatrix", 17, Direction::Down, melExpanded);
  r.add("Bernoulli", 15, Direction::Down, bernoulliExpanded);
  r.add("DynamicQuantizeLinear", 11, Direction::Down, dynamicQuantizeExpanded);
  r.add("MatMulInteger", 10, Direction::Down, matMulIntegerExpanded);
  r.add("ConvInteger", 10, Direction::Down, convIntegerExpanded);
  r.add("BitShift", 11, Direction::Down, bitShiftExpanded);
  r.add("ReverseSequence", 10, Direction::Down, reverseSequenceExpanded);
  r.add("StringNormalizer", 10, Direction::Down, stringOpDeclined);
  r.add("NonMaxSuppression", 10, Direction::Down, nmsDeclined);
  r.add("Unique", 11, Direction::Down, uniqueDeclined);
  r.add("Det", 11, Direction::Down, detDeclined);
  r.add("SequenceMap", 17, Direction::Down, expandSequenceMap);
  r.add("QLinearMatMul", 10, Direction::Down, qlinearDeclined);
  r.add("QLinearConv", 10, Direction::Down, qlinearDeclined);
  for (const char *op : {"SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceInsert", "SequenceErase",
                         "SequenceLength", "SplitToSequence", "ConcatFromSequence"})
    r.add(op, 11, Direction::Down, needsSequenceTypes);
  for (const char *op : {"Optional", "OptionalHasElement", "OptionalGetElement"})
    r.add(op, 15, Direction::Down, needsOptionalTypes);
}

} // namespace opset
} // namespace onnxslim
