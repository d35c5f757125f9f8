//===- transforms/opset/ExpandTransformer.cpp - Expansions of the transformer ops for older opsets ===//
//
// The transformer ops our fusions write (standard ops of opset 17 to 23)
// written out as their ONNX definitions for targets that lack them, and
// what those definitions and the exports need further down:
//
//   op                     first  written in (opset)          as
//   LayerNormalization     17     16   ReduceMean over [axis, r), E[x^2] - E[x]^2,
//                                      in stash_type (Mean, InvStdDev outputs too)
//   Gelu                   20     19   0.5 x (1 + Erf(x / sqrt 2)) or its tanh form
//   RMSNormalization       23     22   x / Sqrt(ReduceMean(x^2) + eps) * scale
//   RotaryEmbedding        23     22   Gather of the caches, Slices, the rotation
//                                      (halves or interleaved pairs), Concat
//   Attention              23     22   head split, past Concat, GQA Expand,
//                                      MatMul, softcap, mask/causal bias, Softmax
//                                      (softmax_precision), the fully-masked-row
//                                      guard, MatMul, head merge
//   LessOrEqual,           12     11   Or(Less, Equal); below 11 (Equal lacks
//   GreaterOrEqual                     floats) Not(Or(Greater, IsNaN a or b))
//   Range                  11     10   Loop (scan output of start + delta + ...)
//   Slice (runtime         11     10   for targets below 10: Gather of the indices
//     starts/ends, steps)              the spec selects (constant, or a Range/Loop
//                                      of the clamped bounds)
//   GatherND               11     10   Gather of the linearized indices on the
//                                      data flattened at the indexed dims
//   Min, Max (integers,    13     12   for targets below 12 (floats only there):
//     below 12)                        Where(Less(a, b), a, b) chains
//
// Each is registered for the step below the op's first version (Adapter.h):
// it writes its body with StepContext::nodeBefore in the ops of that opset
// and turns the node into the body's last op; the driver walks what it
// wrote on to the target. Element types are kept (constants are built in
// the operand's type); a form the spec allows but the body cannot write
// exactly with what is known (an unknown rank, unknown head counts) is
// declined with the node and what is missing.
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "transforms/fusion/FusionUtils.h"
#include "transforms/ValueUtils.h"

#include <cmath>
#include <limits>

namespace onnxslim {
namespace opset {

namespace {

//===----------------------------------------------------------------------===//
// Writing a body
//===----------------------------------------------------------------------===//

/// A scalar (or 1-D when `dims` is given) constant of element type `t`
/// holding `x`, or null for a type it cannot hold.
TensorPtr numberTensor(DataType t, double x, std::vector<int64_t> dims = {}) {
  size_t n = 1;
  for (int64_t d : dims)
    n *= static_cast<size_t>(d);
  switch (t) {
  case DataType::Float:
  case DataType::Double:
  case DataType::Float16:
  case DataType::BFloat16: return fromDoubles(t, dims, std::vector<double>(n, x));
  case DataType::Int64: return Tensor::fromValues(t, dims, std::vector<int64_t>(n, static_cast<int64_t>(x)));
  case DataType::Int32: return Tensor::fromValues(t, dims, std::vector<int32_t>(n, static_cast<int32_t>(x)));
  case DataType::Int16: return Tensor::fromValues(t, dims, std::vector<int16_t>(n, static_cast<int16_t>(x)));
  case DataType::Int8: return Tensor::fromValues(t, dims, std::vector<int8_t>(n, static_cast<int8_t>(x)));
  case DataType::UInt8:
  case DataType::Bool: return Tensor::fromValues(t, dims, std::vector<uint8_t>(n, static_cast<uint8_t>(x)));
  default: return nullptr;
  }
}

bool isFloating(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16;
}

/// The lowest finite value of a floating type (what -inf is strictly below).
double lowestFinite(DataType t) {
  switch (t) {
  case DataType::Float16: return -65504.0;
  case DataType::BFloat16: return -3.3895313892515355e38;
  case DataType::Double: return std::numeric_limits<double>::lowest();
  default: return std::numeric_limits<float>::lowest();
  }
}

/// Writes the nodes of one expansion before `node`, in their forms at
/// opset ctx.to (axes attributes or inputs as that opset has them).
class Writer {
public:
  Writer(Node &node, StepContext &ctx) : node_(node), ctx_(ctx) {}

  Node *make(std::string op, const std::vector<Value *> &in, std::string_view what) {
    return ctx_.nodeBefore(node_, std::move(op), in, nodeBase(node_, what));
  }
  Value *v(std::string op, const std::vector<Value *> &in, std::string_view what) {
    return make(std::move(op), in, what)->result(0);
  }
  /// A node with one int attribute.
  Value *vi(std::string op, const std::vector<Value *> &in, std::string_view what, const char *attr, int64_t value) {
    Node *n = make(std::move(op), in, what);
    n->setAttr(Attribute::makeInt(attr, value));
    return n->result(0);
  }
  Value *constant(TensorPtr t, std::string_view what) { return ctx_.constantBefore(node_, nodeBase(node_, what), std::move(t)); }
  Value *ints(const std::vector<int64_t> &values, std::string_view what) {
    return constant(StepContext::int64s(values), what);
  }
  Value *int64Scalar(int64_t value, std::string_view what) {
    return constant(StepContext::int64s({value}, /*scalar=*/true), what);
  }
  Value *scalar(DataType t, double x, std::string_view what) { return constant(numberTensor(t, x), what); }
  Value *cast(Value *x, DataType to, std::string_view what) {
    return vi("Cast", {x}, what, "to", static_cast<int64_t>(to));
  }
  Value *transpose(Value *x, const std::vector<int64_t> &perm, std::string_view what) {
    Node *n = make("Transpose", {x}, what);
    n->setAttr(Attribute::makeInts("perm", perm));
    return n->result(0);
  }
  Value *reshape(Value *x, const std::vector<int64_t> &shape, std::string_view what) {
    return v("Reshape", {x, ints(shape, std::string(what) + "_shape")}, what);
  }
  /// Unsqueeze/Squeeze (axes an input from 13).
  Value *axesOp(const char *op, Value *x, const std::vector<int64_t> &axes, std::string_view what) {
    if (ctx_.to >= 13)
      return v(op, {x, ints(axes, std::string(what) + "_axes")}, what);
    Node *n = make(op, {x}, what);
    n->setAttr(Attribute::makeInts("axes", axes));
    return n->result(0);
  }
  /// Reduce* (axes an input from 18, ReduceSum from 13).
  Value *reduce(const char *op, Value *x, const std::vector<int64_t> &axes, int64_t keepdims, std::string_view what) {
    bool input = ctx_.to >= (std::string_view(op) == "ReduceSum" ? 13 : 18);
    Node *n = input ? make(op, {x, ints(axes, std::string(what) + "_axes")}, what) : make(op, {x}, what);
    if (!input)
      n->setAttr(Attribute::makeInts("axes", axes));
    n->setAttr(Attribute::makeInt("keepdims", keepdims));
    return n->result(0);
  }
  /// Slice with constant bounds (attributes before 10).
  Value *slice(Value *x, int64_t start, int64_t end, int64_t axis, int64_t step, std::string_view what) {
    if (ctx_.to >= 10) {
      std::vector<Value *> in{x, ints({start}, std::string(what) + "_starts"), ints({end}, std::string(what) + "_ends"),
                              ints({axis}, std::string(what) + "_axes")};
      if (step != 1)
        in.push_back(ints({step}, std::string(what) + "_steps"));
      return v("Slice", in, what);
    }
    Node *n = make("Slice", {x}, what);
    n->setAttr(Attribute::makeInts("starts", {start}));
    n->setAttr(Attribute::makeInts("ends", {end}));
    n->setAttr(Attribute::makeInts("axes", {axis}));
    return n->result(0);
  }
  /// Int64 scalar dim `axis` of `x` at run time.
  Value *dim(Value *x, int64_t axis, std::string_view what) {
    Value *shape = v("Shape", {x}, std::string(what) + "_shape");
    return vi("Gather", {shape, int64Scalar(axis, std::string(what) + "_index")}, what, "axis", 0);
  }

  /// Given a result i > 0 of the node and a value written before it,
  /// Execute: the value takes the result's uses, name, type and value_info,
  /// and the node's slot is emptied. An unused result is just dropped.
  void moveResult(size_t i, Value *value) {
    Value *r = node_.result(i);
    if (!r)
      return;
    if (r->hasUses() || r->isGraphOutput()) {
      // A value the expansion did not write (an input) keeps its name.
      if (std::find(ctx_.created.begin(), ctx_.created.end(), value->definingNode()) == ctx_.created.end() ||
          value->definingNode()->opType() == "Constant")
        value = v("Identity", {value}, "output");
      std::string name = r->name();
      r->replaceAllUsesWith(value);
      r->setName(ctx_.model.names().fresh(name + "_moved"));
      value->setType(r->type());
      value->valueInfoOrder = r->valueInfoOrder;
      value->info = std::move(r->info);
      r->valueInfoOrder = Value::kNoValueInfo;
      r->info = {};
      value->setName(name);
    }
    node_.dropResult(i);
  }
  /// Whether result i is read (used or a graph output).
  bool wanted(size_t i) const {
    Value *r = node_.result(i);
    return r && (r->hasUses() || r->isGraphOutput());
  }

  /// Execute: the node becomes `op` over `operands` (attributes cleared,
  /// results past the first dropped; they must have been moved).
  Node &become(std::string op, const std::vector<Value *> &operands) {
    for (size_t i = node_.numResults(); i-- > 1;)
      if (node_.result(i))
        node_.dropResult(i);
    node_.trimResults();
    node_.attributes().clear();
    node_.setOpType(std::move(op));
    node_.resizeOperands(operands.size());
    for (size_t i = 0; i < operands.size(); ++i)
      node_.setOperand(i, operands[i]);
    return node_;
  }

  StepContext &ctx() { return ctx_; }
  Node &node() { return node_; }

private:
  Node &node_;
  StepContext &ctx_;
};

/// The axes [axis, r) of a normalization over a value of rank r (known),
/// or the negative axes [axis, -1] when the rank is unknown and the target
/// takes negative axes (11); "" or why not.
std::string normalizedAxes(const Node &node, const Value *x, int64_t axis, const StepContext &ctx,
                           std::vector<int64_t> &axes) {
  if (std::optional<Shape> s = knownShape(x)) {
    auto r = static_cast<int64_t>(s->size());
    int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r)
      return "its axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r);
    for (int64_t i = a; i < r; ++i)
      axes.push_back(i);
    return "";
  }
  if (axis < 0 && ctx.target >= 11) {
    for (int64_t i = axis; i < 0; ++i)
      axes.push_back(i);
    return "";
  }
  (void)node;
  return "the rank of its input '" + x->name() + "' is unknown (needed for the axes it normalizes over" +
         (axis < 0 ? std::string(" below opset 11") : std::string()) + ")";
}

/// The stash type of a normalization: a floating DataType, or nullopt.
std::optional<DataType> stashType(const Node &node) {
  auto u = static_cast<DataType>(node.attrInt("stash_type", 1));
  return isFloating(u) ? std::optional<DataType>(u) : std::nullopt;
}

//===----------------------------------------------------------------------===//
// LayerNormalization-17, RMSNormalization-23, Gelu-20
//===----------------------------------------------------------------------===//

/// LayerNormalization-17 -> opset 16 (its function body, with the mean
/// over the axes [axis, r) by ReduceMean instead of Flatten/Reshape):
///   Before:                               After (x float16, stash_type 1, axis -1, rank 3):
///     y = LayerNormalization(x, s, b)       xu = Cast<to = 1>(x)
///                                           m = ReduceMean<axes = [2]>(xu)
///                                           var = Sub(ReduceMean(Mul(xu, xu)), Mul(m, m))
///                                           sd = Sqrt(Add(var, eps))
///                                           n = Cast<to = 10>(Div(Sub(xu, m), sd))
///                                           y = Add(Mul(n, s), b)
/// The Mean output is m, InvStdDev Reciprocal(sd) (both in stash_type).
std::string layerNorm17(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *scale = node.operand(1), *bias = node.operand(2);
  if (!x || !scale)
    return "it has no X or Scale";
  std::optional<DataType> t = knownElemType(x);
  if (!t || !isFloating(*t))
    return "the element type of its input '" + x->name() + "' is unknown";
  std::optional<DataType> u = stashType(node);
  if (!u)
    return "its stash_type " + std::to_string(node.attrInt("stash_type", 1)) + " is not a floating type";
  std::vector<int64_t> axes;
  if (std::string why = normalizedAxes(node, x, node.attrInt("axis", -1), ctx, axes); !why.empty())
    return why;
  float eps = node.attrFloat("epsilon", 1e-5f);
  Writer w(node, ctx);
  Value *xu = *u == *t ? x : w.cast(x, *u, "stashed");
  Value *mean = w.reduce("ReduceMean", xu, axes, 1, "mean");
  Value *meanOfSquare = w.reduce("ReduceMean", w.v("Mul", {xu, xu}, "square"), axes, 1, "mean_of_square");
  Value *var = w.v("Sub", {meanOfSquare, w.v("Mul", {mean, mean}, "square_of_mean")}, "var");
  Value *sd = w.v("Sqrt", {w.v("Add", {var, w.scalar(*u, eps, "epsilon")}, "var_eps")}, "stddev");
  Value *normalized = w.v("Div", {w.v("Sub", {xu, mean}, "deviation"), sd}, "normalized");
  if (*u != *t)
    normalized = w.cast(normalized, *t, "normalized_t");
  w.moveResult(1, mean);
  if (w.wanted(2))
    w.moveResult(2, w.v("Reciprocal", {sd}, "inv_stddev"));
  if (!bias) {
    w.become("Mul", {normalized, scale});
    return "";
  }
  w.become("Add", {w.v("Mul", {normalized, scale}, "scaled"), bias});
  return "";
}

/// RMSNormalization-23 -> opset 22 (its function body):
///   Before:                               After (x float, axis 2, rank 3):
///     y = RMSNormalization(x, s)            ms = ReduceMean(Mul(x, x), axes = [2])
///                                           rms = Sqrt(Add(ms, eps))
///                                           y = Mul(Div(x, rms), s)
/// (x cast to stash_type first and the quotient back when they differ.)
std::string rmsNorm23(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *scale = node.operand(1);
  if (!x || !scale)
    return "it has no X or scale";
  std::optional<DataType> t = knownElemType(x);
  std::optional<DataType> v = knownElemType(scale);
  if (!t || !isFloating(*t) || !v)
    return "the element types of its inputs are unknown";
  std::optional<DataType> u = stashType(node);
  if (!u)
    return "its stash_type " + std::to_string(node.attrInt("stash_type", 1)) + " is not a floating type";
  std::vector<int64_t> axes;
  if (std::string why = normalizedAxes(node, x, node.attrInt("axis", -1), ctx, axes); !why.empty())
    return why;
  float eps = node.attrFloat("epsilon", 1e-5f);
  Writer w(node, ctx);
  Value *xu = *u == *t ? x : w.cast(x, *u, "stashed");
  Value *ms = w.reduce("ReduceMean", w.v("Mul", {xu, xu}, "square"), axes, 1, "mean_square");
  Value *rms = w.v("Sqrt", {w.v("Add", {ms, w.scalar(*u, eps, "epsilon")}, "mean_square_eps")}, "rms");
  Value *normalized = w.v("Div", {xu, rms}, "normalized");
  if (*u != *v)
    normalized = w.cast(normalized, *v, "normalized_t");
  w.become("Mul", {normalized, scale});
  return "";
}

/// Gelu-20 -> opset 19 (its function body; constants are the body's float
/// constants in x's type):
///   approximate = "none":  y = Mul(Mul(0.5, x), Add(1, Erf(Div(x, sqrt 2))))
///   approximate = "tanh":  y = Mul(Mul(0.5, x), Add(1, Tanh(Mul(sqrt(2/pi),
///                                 Add(x, Mul(0.044715, Pow(x, 3)))))))
std::string gelu20(Node &node, StepContext &ctx) {
  Value *x = node.operand(0);
  std::optional<DataType> t = x ? knownElemType(x) : std::nullopt;
  if (!t || !isFloating(*t))
    return "the element type of its input is unknown";
  std::string approximate = node.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return "its approximate '" + approximate + "' is neither none nor tanh";
  Writer w(node, ctx);
  Value *phiInner;
  if (approximate == "none") {
    phiInner = w.v("Erf", {w.v("Div", {x, w.scalar(*t, std::sqrt(2.0), "sqrt2")}, "scaled")}, "erf");
  } else {
    double twoOverPi = static_cast<float>(0.63661977236);
    Value *cube = w.v("Pow", {x, w.scalar(*t, 3.0, "three")}, "cube");
    Value *inner =
        w.v("Add", {x, w.v("Mul", {w.scalar(*t, static_cast<float>(0.044715), "c0"), cube}, "cube_c0")}, "inner");
    phiInner = w.v("Tanh", {w.v("Mul", {w.scalar(*t, std::sqrt(twoOverPi), "sqrt_2_pi"), inner}, "tanh_in")}, "tanh");
  }
  Value *phi = w.v("Add", {w.scalar(*t, 1.0, "one"), phiInner}, "phi");
  Value *halfX = w.v("Mul", {w.scalar(*t, 0.5, "half"), x}, "half_x");
  w.become("Mul", {halfX, phi});
  return "";
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding-23
//===----------------------------------------------------------------------===//

/// RotaryEmbedding-23 -> opset 22 (the spec's algorithm, in x's own layout:
/// a 4-D x [B, H, S, D] is not transposed, the caches are unsqueezed to
/// [B, 1, S, R/2]; a 3-D x is viewed as [B, S, H, D] and the caches as
/// [B, S, 1, R/2]):
///   Before:                                  After (4-D, not interleaved, R = D = 8):
///     y = RotaryEmbedding(x, cos, sin, pos)    c = Unsqueeze(Gather(cos, pos), [1])   (s likewise)
///                                              x1 = Slice(x, 0, 4, axis 3)   x2 = Slice(x, 4, 8, axis 3)
///                                              re = Sub(Mul(c, x1), Mul(s, x2))
///                                              im = Add(Mul(s, x1), Mul(c, x2))
///                                              y = Concat<axis = 3>(re, im)
/// Interleaved: x viewed as [..., R/2, 2], x1/x2 its two columns, and the
/// pairs (re, im) concatenated and viewed back. A partial rotation
/// (rotary_embedding_dim R < D) concatenates the rest x[..., R:] after.
std::string rotary23(Node &node, StepContext &ctx) {
  Value *x = node.operand(0), *cosCache = node.operand(1), *sinCache = node.operand(2), *pos = node.operand(3);
  if (!x || !cosCache || !sinCache)
    return "it has no input, cos_cache or sin_cache";
  std::optional<DataType> t = knownElemType(x);
  std::optional<Shape> xs = knownShape(x);
  if (!t || !xs || (xs->size() != 3 && xs->size() != 4))
    return "its input's rank (3 or 4) or element type is unknown";
  bool is3d = xs->size() == 3;
  int64_t heads = node.attrInt("num_heads", 0);
  int64_t interleaved = node.attrInt("interleaved", 0);
  int64_t rotary = node.attrInt("rotary_embedding_dim", 0);
  if (is3d && heads <= 0)
    return "its input is 3-D and num_heads is not given";
  // The head size D.
  int64_t headSize = -1;
  const Dim &last = xs->back();
  if (last.isValue())
    headSize = is3d ? (last.getValue() % heads == 0 ? last.getValue() / heads : -1) : last.getValue();
  if (is3d && last.isValue() && headSize < 0)
    return "its hidden size " + std::to_string(last.getValue()) + " is not a multiple of num_heads";
  // The caches after Gather: [B, S, R/2] (or [S, R/2]).
  std::optional<Shape> cs = knownShape(cosCache);
  if (!cs || cs->size() < 2 || cs->size() > 3)
    return "the rank of its cos_cache is unknown";
  size_t gatheredRank = pos ? cs->size() - 1 + 2 : cs->size();
  if (pos) {
    std::optional<Shape> ps = knownShape(pos);
    if (!ps)
      return "the rank of its position_ids is unknown";
    gatheredRank = cs->size() - 1 + ps->size();
  }
  if (gatheredRank != 2 && gatheredRank != 3)
    return "its gathered caches are not [batch, sequence, R/2] or [sequence, R/2]";
  int64_t cacheHalf = cs->back().isValue() ? cs->back().getValue() : -1;
  int64_t r = rotary > 0 ? rotary : headSize;
  if (r <= 0 && rotary <= 0)
    return "its head size is unknown (needed for the halves it rotates)";
  if (r % 2 != 0)
    return "its rotary dimension " + std::to_string(r) + " is odd";
  if (headSize > 0 && r > headSize)
    return "its rotary_embedding_dim " + std::to_string(r) + " exceeds the head size " + std::to_string(headSize);
  if (cacheHalf >= 0 && cacheHalf < r / 2)
    return "its caches' last dim " + std::to_string(cacheHalf) + " is below rotary_embedding_dim / 2";

  Writer w(node, ctx);
  // The caches, aligned with the working layout: 4-D x [B, H, S, *],
  // 3-D x viewed as [B, S, H, *].
  auto prepare = [&](Value *cache, const char *what) {
    Value *c = pos ? w.vi("Gather", {cache, pos}, std::string(what) + "_gathered", "axis", 0) : cache;
    int64_t rank = static_cast<int64_t>(gatheredRank);
    if (cacheHalf != r / 2)
      c = w.slice(c, 0, r / 2, rank - 1, 1, std::string(what) + "_sliced");
    std::vector<int64_t> axes;
    if (is3d)
      axes.push_back(rank - 1); // [.., S, 1, R/2]
    else if (rank == 3)
      axes.push_back(1); // [B, 1, S, R/2]
    if (interleaved)
      axes.push_back(static_cast<int64_t>(rank + axes.size())); // a trailing pair axis
    return axes.empty() ? c : w.axesOp("Unsqueeze", c, axes, std::string(what) + "_aligned");
  };
  Value *cosA = prepare(cosCache, "cos");
  Value *sinA = prepare(sinCache, "sin");

  Value *xin = is3d ? w.reshape(x, {0, 0, heads, -1}, "heads") : x;
  bool partial = headSize < 0 || r < headSize;
  Value *rot = partial ? w.slice(xin, 0, r, 3, 1, "rotated_part") : xin;
  Value *x1, *x2;
  if (interleaved) {
    Value *pairs = w.reshape(rot, {0, 0, 0, r / 2, 2}, "pairs");
    x1 = w.slice(pairs, 0, 1, 4, 1, "x1");
    x2 = w.slice(pairs, 1, 2, 4, 1, "x2");
  } else {
    x1 = w.slice(rot, 0, r / 2, 3, 1, "x1");
    x2 = w.slice(rot, r / 2, r, 3, 1, "x2");
  }
  Value *re = w.v("Sub", {w.v("Mul", {cosA, x1}, "cos_x1"), w.v("Mul", {sinA, x2}, "sin_x2")}, "real");
  Value *im = w.v("Add", {w.v("Mul", {sinA, x1}, "sin_x1"), w.v("Mul", {cosA, x2}, "cos_x2")}, "imag");
  std::vector<Value *> parts{re, im};
  if (interleaved) {
    Value *joined = w.vi("Concat", {re, im}, "pairs_rotated", "axis", 4);
    if (!partial) {
      w.become("Reshape", {joined, w.ints(is3d ? std::vector<int64_t>{0, 0, -1} : std::vector<int64_t>{0, 0, 0, r},
                                          "merged_shape")});
      return "";
    }
    parts = {w.reshape(joined, {0, 0, 0, r}, "rotated")};
  }
  if (partial)
    parts.push_back(w.slice(xin, r, std::numeric_limits<int64_t>::max(), 3, 1, "kept_part"));
  if (!is3d) {
    w.become("Concat", parts).setAttr(Attribute::makeInt("axis", 3));
    return "";
  }
  Value *y4 = w.vi("Concat", parts, "rotated_4d", "axis", 3);
  w.become("Reshape", {y4, w.ints({0, 0, -1}, "merged_shape")});
  return "";
}

//===----------------------------------------------------------------------===//
// Attention-23
//===----------------------------------------------------------------------===//

/// Attention-23 -> opset 22 (its function body):
///   Before:                                     After (3-D, Hq = 4, Hkv = 2, float mask):
///     y = Attention<q_num_heads = 4,              q4 = Transpose<perm = [0,2,1,3]>(Reshape(q, [0,0,4,-1]))
///                   kv_num_heads = 2,             k4, v4 likewise with 2 heads
///                   scale = c>(q, k, v, m)        k4 = Reshape(Expand(Unsqueeze(k4, [2]), [1,1,2,1,1]), [0,4,T,D])
///                                                 (v4 likewise: grouped-query heads repeated)
///                                                 s = MatMul(Mul(q4, sqrt c), Mul(Transpose(k4), sqrt c))
///                                                 p = Softmax<axis = -1>(Add(s, m))
///                                                 p = Where(Less(ReduceMax(m, [-1]), lowest), 0, p)
///                                                 y = Reshape(Transpose(MatMul(p, v4)), [0, 0, -1])
/// A boolean mask is Where(m, 0, -inf); is_causal adds -inf where key j >
/// query i + past length; softcap c is c * Tanh(s / c) before the bias;
/// softmax_precision casts around the Softmax; past_key/past_value are
/// concatenated on the sequence axis (present_key/present_value); the
/// qk_matmul_output is taken at its mode's point. The row guard (a row
/// whose bias is -inf everywhere gives zeros) is written only with a mask:
/// without one every row attends key 0.
std::string attention23(Node &node, StepContext &ctx) {
  Value *q = node.operand(0), *k = node.operand(1), *v = node.operand(2);
  Value *mask = node.operand(3), *pastK = node.operand(4), *pastV = node.operand(5);
  if (!q || !k || !v)
    return "it has no Q, K or V";
  if (node.numOperands() > 6)
    return "it has inputs past the six of Attention-23";
  if (!pastK != !pastV)
    return "it has only one of past_key and past_value";
  std::optional<DataType> t = knownElemType(q);
  std::optional<Shape> qs = knownShape(q), ks = knownShape(k), vs = knownShape(v);
  if (!t || !isFloating(*t) || !qs || !ks || !vs)
    return "the element type or ranks of its Q, K, V are unknown";
  if (qs->size() != ks->size() || qs->size() != vs->size() || (qs->size() != 3 && qs->size() != 4))
    return "its Q, K and V are not all 3-D or all 4-D";
  bool is3d = qs->size() == 3;
  int64_t hq = node.attrInt("q_num_heads", 0), hkv = node.attrInt("kv_num_heads", 0);
  int64_t causal = node.attrInt("is_causal", 0);
  float softcap = node.attrFloat("softcap", 0.0f);
  int64_t mode = node.attrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return "its qk_matmul_output_mode " + std::to_string(mode) + " is not 0 to 3";
  std::optional<DataType> precision;
  if (node.hasAttr("softmax_precision")) {
    auto p = static_cast<DataType>(node.attrInt("softmax_precision", 1));
    if (!isFloating(p))
      return "its softmax_precision is not a floating type";
    if (p != *t)
      precision = p;
  }
  // Head counts and head size.
  int64_t headSize = -1;
  if (is3d) {
    if (hq <= 0 || hkv <= 0)
      return "its inputs are 3-D and q_num_heads or kv_num_heads is not given";
    if (qs->back().isValue() && qs->back().getValue() % hq == 0)
      headSize = qs->back().getValue() / hq;
  } else {
    hq = (*qs)[1].isValue() ? (*qs)[1].getValue() : -1;
    hkv = (*ks)[1].isValue() ? (*ks)[1].getValue() : -1;
    if (qs->back().isValue())
      headSize = qs->back().getValue();
  }
  if (hq <= 0 || hkv <= 0) {
    if (!sameDim(q, 1, k, 1))
      return "the head counts of its Q and K are unknown (needed to repeat the key/value heads)";
    hq = hkv = 0; // known equal
  } else if (hq % hkv != 0) {
    return "its q heads (" + std::to_string(hq) + ") are not a multiple of its key/value heads (" +
           std::to_string(hkv) + ")";
  }
  DataType maskType = mask ? knownElemType(mask).value_or(DataType::Undefined) : DataType::Undefined;
  if (mask && maskType == DataType::Undefined)
    return "the element type of its attn_mask is unknown";

  Writer w(node, ctx);
  // [B, H, S, D] views.
  Value *q4 = q, *k4 = k, *v4 = v;
  if (is3d) {
    q4 = w.transpose(w.reshape(q, {0, 0, hq, -1}, "q_heads"), {0, 2, 1, 3}, "q_bhsd");
    k4 = w.transpose(w.reshape(k, {0, 0, hkv, -1}, "k_heads"), {0, 2, 1, 3}, "k_bhsd");
    v4 = w.transpose(w.reshape(v, {0, 0, hkv, -1}, "v_heads"), {0, 2, 1, 3}, "v_bhsd");
  }
  if (pastK) {
    k4 = w.vi("Concat", {pastK, k4}, "present_key", "axis", 2);
    v4 = w.vi("Concat", {pastV, v4}, "present_value", "axis", 2);
  }
  w.moveResult(1, k4);
  w.moveResult(2, v4);
  // Grouped-query attention: each key/value head repeated for its q heads.
  if (hq > 0 && hq != hkv) {
    auto repeat = [&](Value *x, const char *what) {
      Value *u = w.axesOp("Unsqueeze", x, {2}, std::string(what) + "_unsqueezed");
      Value *e = w.v("Expand", {u, w.ints({1, 1, hq / hkv, 1, 1}, std::string(what) + "_repeats")},
                     std::string(what) + "_repeated");
      Value *tail = w.vi("Gather", {w.v("Shape", {x}, std::string(what) + "_shape"),
                                    w.ints({2, 3}, std::string(what) + "_tail_index")},
                         std::string(what) + "_tail", "axis", 0);
      Value *shape = w.vi("Concat", {w.ints({0, hq}, std::string(what) + "_head"), tail},
                          std::string(what) + "_grouped_shape", "axis", 0);
      return w.v("Reshape", {e, shape}, std::string(what) + "_grouped");
    };
    k4 = repeat(k4, "k");
    v4 = repeat(v4, "v");
  }
  // The scale, applied as sqrt(scale) to q and to k^T.
  Value *kt = w.transpose(k4, {0, 1, 3, 2}, "k_t");
  Value *qs4 = q4;
  Value *sqrtScale = nullptr;
  if (node.hasAttr("scale")) {
    float scale = node.attrFloat("scale", 1.0f);
    if (scale != 1.0f)
      sqrtScale = w.scalar(*t, static_cast<float>(std::sqrt(static_cast<float>(scale))), "sqrt_scale");
  } else if (headSize > 0) {
    float scale = 1.0f / std::sqrt(static_cast<float>(headSize));
    sqrtScale = w.scalar(*t, static_cast<float>(std::sqrt(scale)), "sqrt_scale");
  } else {
    Value *d = w.cast(w.dim(q4, 3, "head_size"), DataType::Float, "head_size_f");
    Value *scale = w.v("Div", {w.scalar(DataType::Float, 1.0, "one_f"), w.v("Sqrt", {d}, "sqrt_head_size")}, "scale");
    sqrtScale = w.v("Sqrt", {scale}, "sqrt_scale_f");
    if (*t != DataType::Float)
      sqrtScale = w.cast(sqrtScale, *t, "sqrt_scale");
  }
  if (sqrtScale) {
    qs4 = w.v("Mul", {q4, sqrtScale}, "q_scaled");
    kt = w.v("Mul", {kt, sqrtScale}, "k_t_scaled");
  }
  Value *scores = w.v("MatMul", {qs4, kt}, "qk");
  Value *qkOut = scores;
  if (softcap != 0.0f) {
    Value *c = w.scalar(*t, softcap, "softcap");
    scores = w.v("Mul", {w.v("Tanh", {w.v("Div", {scores, c}, "qk_div_cap")}, "qk_tanh"), c}, "qk_capped");
  }
  if (mode == 1)
    qkOut = scores;
  // The bias: the mask (boolean: 0 / -inf) plus the causal frontier.
  Value *bias = nullptr;
  if (mask) {
    if (maskType == DataType::Bool)
      bias = w.v("Where", {mask, w.scalar(*t, 0.0, "zero"), w.scalar(*t, -INFINITY, "neg_inf")}, "mask_bias");
    else
      bias = maskType == *t ? mask : w.cast(mask, *t, "mask_bias");
  }
  if (causal) {
    // Query i sees key j iff j <= i + past length.
    std::optional<int64_t> sq, skv, past = pastK ? std::nullopt : std::optional<int64_t>(0);
    size_t seqAxis = is3d ? 1 : 2;
    if ((*qs)[seqAxis].isValue())
      sq = (*qs)[seqAxis].getValue();
    if ((*ks)[seqAxis].isValue())
      skv = (*ks)[seqAxis].getValue();
    if (pastK)
      if (std::optional<Shape> ps = knownShape(pastK); ps && ps->size() == 4 && (*ps)[2].isValue())
        past = (*ps)[2].getValue();
    Value *causalBias;
    if (sq && skv && past) {
      int64_t total = *skv + *past;
      std::vector<double> values(static_cast<size_t>(*sq * total));
      for (int64_t i = 0; i < *sq; ++i)
        for (int64_t j = 0; j < total; ++j)
          values[static_cast<size_t>(i * total + j)] = j > i + *past ? -INFINITY : 0.0;
      TensorPtr tensor;
      if (isFloatLike(*t))
        tensor = fromDoubles(*t, {*sq, total}, values);
      causalBias = w.constant(tensor, "causal_bias");
    } else {
      Value *zero = w.int64Scalar(0, "zero_i"), *one = w.int64Scalar(1, "one_i");
      Value *rows = w.v("Range", {zero, w.dim(q4, 2, "q_len"), one}, "rows");
      Value *cols = w.v("Range", {zero, w.dim(k4, 2, "total_len"), one}, "cols");
      Value *rows2 = w.axesOp("Unsqueeze", rows, {1}, "rows_2d");
      if (pastK)
        rows2 = w.v("Add", {rows2, w.dim(pastK, 2, "past_len")}, "rows_past");
      Value *hidden = w.v("Less", {rows2, w.axesOp("Unsqueeze", cols, {0}, "cols_2d")}, "causal_hidden");
      causalBias = w.v("Where", {hidden, w.scalar(*t, -INFINITY, "causal_neg_inf"), w.scalar(*t, 0.0, "causal_zero")},
                       "causal_bias");
    }
    bias = bias ? w.v("Add", {bias, causalBias}, "bias") : causalBias;
  }
  if (bias)
    scores = w.v("Add", {scores, bias}, "qk_biased");
  if (mode == 2)
    qkOut = scores;
  Value *probs = precision ? w.cast(scores, *precision, "qk_precise") : scores;
  probs = w.vi("Softmax", {probs}, "probs", "axis", -1);
  if (precision)
    probs = w.cast(probs, *t, "probs_t");
  if (mask) {
    // A row whose bias is -inf everywhere: zeros, not NaN.
    Value *rowMax = w.reduce("ReduceMax", bias, {-1}, 1, "bias_row_max");
    Value *hiddenRow = w.v("Less", {rowMax, w.scalar(*t, lowestFinite(*t), "lowest")}, "row_hidden");
    probs = w.v("Where", {hiddenRow, w.scalar(*t, 0.0, "zero_prob"), probs}, "probs_safe");
  }
  if (mode == 3)
    qkOut = probs;
  if (w.wanted(3))
    w.moveResult(3, w.v("Identity", {qkOut}, "qk_output"));
  if (!is3d) {
    w.become("MatMul", {probs, v4});
    return "";
  }
  Value *y4 = w.v("MatMul", {probs, v4}, "y_bhsd");
  Value *yt = w.transpose(y4, {0, 2, 1, 3}, "y_bshd");
  w.become("Reshape", {yt, w.ints({0, 0, -1}, "y_shape")});
  return "";
}

//===----------------------------------------------------------------------===//
// LessOrEqual-12, GreaterOrEqual-12
//===----------------------------------------------------------------------===//

/// Whether `v` is a constant holding no NaN (or of an integer type).
bool knownNotNaN(const Value *v) {
  std::optional<DataType> t = knownElemType(v);
  if (t && !isFloating(*t))
    return true;
  std::optional<std::vector<double>> d = constantDoubles(v);
  return d && std::none_of(d->begin(), d->end(), [](double x) { return std::isnan(x); });
}

/// LessOrEqual-12 / GreaterOrEqual-12 -> opset 11 (their function bodies):
///   a <= b:  Or(Less(a, b), Equal(a, b))
/// and, for a target below 11 (Equal-7 takes no floats), the same truth
/// without Equal, NaN included (every comparison with NaN is false):
///   a <= b:  Not(Or(Greater(a, b), Or(IsNaN(a), IsNaN(b))))   (floats)
///            Not(Greater(a, b))                                (integers)
/// (GreaterOrEqual with Greater and Less exchanged.)
std::string orEqual12(Node &node, StepContext &ctx) {
  Value *a = node.operand(0), *b = node.operand(1);
  if (!a || !b)
    return "it has no two inputs";
  bool le = node.opType() == "LessOrEqual";
  Writer w(node, ctx);
  if (ctx.target >= 11) {
    Value *strict = w.v(le ? "Less" : "Greater", {a, b}, "strict");
    w.become("Or", {strict, w.v("Equal", {a, b}, "equal")});
    return "";
  }
  std::optional<DataType> t = knownElemType(a);
  if (!t)
    return "the element type of its inputs is unknown (floats need a NaN test below opset 11)";
  Value *opposite = w.v(le ? "Greater" : "Less", {a, b}, "opposite");
  if (isFloating(*t)) {
    if (ctx.target < 9)
      return "a float comparison needs IsNaN (opset 9) below opset 11";
    std::vector<Value *> nans;
    for (Value *x : {a, b})
      if (!knownNotNaN(x))
        nans.push_back(w.v("IsNaN", {x}, "nan"));
    if (nans.size() == 2)
      nans = {w.v("Or", nans, "any_nan")};
    if (!nans.empty())
      opposite = w.v("Or", {opposite, nans[0]}, "unordered_or_opposite");
  }
  w.become("Not", {opposite});
  return "";
}

//===----------------------------------------------------------------------===//
// Range-11
//===----------------------------------------------------------------------===//

/// Given a writer, scalar start, limit and delta of element type `t`,
/// Execute: writes Range(start, limit, delta) as its function body: a Loop
/// of max(ceil((limit - start) / delta), 0) iterations whose scan output is
/// the carried value before each `+ delta` (start, start + delta, ...);
/// the count in double (ONNX Runtime's reading), or exactly in integers
/// when delta is a known integer constant. Result: the scan output, or
/// null when `t` is not a Range type Add-7 takes (int16).
Value *writeRange(Writer &w, Value *start, Value *limit, Value *delta, DataType t,
                  std::optional<int64_t> constDelta) {
  if (t != DataType::Float && t != DataType::Double && t != DataType::Int32 && t != DataType::Int64)
    return nullptr;
  Value *count;
  if (!isFloating(t) && constDelta && *constDelta != 0) {
    int64_t step = std::abs(*constDelta);
    Value *span = *constDelta > 0 ? w.v("Sub", {limit, start}, "range_span") : w.v("Sub", {start, limit}, "range_span");
    Value *q = w.v("Div", {w.v("Add", {span, w.scalar(t, static_cast<double>(step - 1), "range_round")}, "range_up"),
                          w.scalar(t, static_cast<double>(step), "range_step")},
                   "range_quotient");
    Value *zero = w.scalar(t, 0.0, "range_zero");
    count = w.v("Where", {w.v("Less", {q, zero}, "range_empty"), zero, q}, "range_count_t");
    if (t != DataType::Int64)
      count = w.cast(count, DataType::Int64, "range_count");
  } else {
    auto d = [&](Value *x, const char *what) { return t == DataType::Double ? x : w.cast(x, DataType::Double, what); };
    Value *span = w.v("Sub", {d(limit, "range_limit_d"), d(start, "range_start_d")}, "range_span");
    Value *q = w.v("Div", {span, d(delta, "range_delta_d")}, "range_quotient");
    count = w.cast(w.v("Relu", {w.v("Ceil", {q}, "range_ceil")}, "range_nonneg"), DataType::Int64, "range_count");
  }
  // The body: (i, cond, prev) -> (cond, prev + delta, prev).
  Model &model = w.ctx().model;
  auto body = std::make_unique<Graph>();
  body->name = model.names().fresh(nodeBase(w.node(), "range_body"));
  Type scalar = Type::tensor(t, Shape{});
  Value *iter = body->addInput(model.names().fresh(nodeBase(w.node(), "range_i")),
                               Type::tensor(DataType::Int64, Shape{}));
  (void)iter;
  Value *condIn = body->addInput(model.names().fresh(nodeBase(w.node(), "range_cond_in")),
                                 Type::tensor(DataType::Bool, Shape{}));
  Value *prev = body->addInput(model.names().fresh(nodeBase(w.node(), "range_prev")), scalar);
  auto bodyNode = [&](const char *op, std::vector<Value *> in, const char *what) {
    std::string name = model.names().fresh(nodeBase(w.node(), what));
    Node *n = body->createNode(op, in, {name});
    n->setName(model.names().fresh(name + "_node"));
    body->append(n);
    return n->result(0);
  };
  Value *condOut = bodyNode("Identity", {condIn}, "range_cond_out");
  Value *next = bodyNode("Add", {prev, delta}, "range_next");
  Value *out = bodyNode("Identity", {prev}, "range_value");
  body->addOutput(condOut, Type::tensor(DataType::Bool, Shape{}));
  body->addOutput(next, scalar);
  body->addOutput(out, scalar);
  Value *cond = w.constant(numberTensor(DataType::Bool, 1.0), "range_cond");
  Node *loop = w.make("Loop", {count, cond, start}, "range_last");
  Value *scan = loop->addResult(model.names().fresh(nodeBase(w.node(), "range")));
  loop->setAttr(Attribute::makeGraph("body", std::move(body)));
  loop->result(0)->setType(scalar);
  scan->setType(Type::tensor(t, Shape{Dim::unknown()}));
  return scan;
}

/// Range-11 -> opset 10: its function body, a Loop (see writeRange);
///   Before:                        After:
///     y = Range(s, l, d)             n = Cast<to = 7>(Relu(Ceil(Div(Sub(l, s), d))))
///                                    last, r = Loop(n, true, s) body (i, c, p) -> (c, Add(p, d), p)
///                                    y = Identity(r)
/// A Range of three constants becomes its constant.
std::string range11(Node &node, StepContext &ctx) {
  Value *start = node.operand(0), *limit = node.operand(1), *delta = node.operand(2);
  if (!start || !limit || !delta)
    return "it has no start, limit or delta";
  std::optional<DataType> t = knownElemType(start);
  if (!t)
    return "the element type of its start is unknown";
  Writer w(node, ctx);
  std::optional<std::vector<int64_t>> cd = constantInts(delta);
  std::optional<int64_t> constDelta = cd && cd->size() == 1 ? std::optional<int64_t>((*cd)[0]) : std::nullopt;
  Value *r = writeRange(w, start, limit, delta, *t, isFloating(*t) ? std::nullopt : constDelta);
  if (!r)
    return "its element type " + dataTypeName(*t) + " has no Add below opset 14 (the body's step)";
  w.become("Identity", {r});
  return "";
}

//===----------------------------------------------------------------------===//
// Slice-10 (runtime bounds, steps)
//===----------------------------------------------------------------------===//

/// The Slice-11 -> Slice-10 adapter of AttributesToInputs.cpp (negative
/// axes), which this file's takes over for the Slices Slice-1 cannot say.
AdapterFn gSliceNegativeAxes = nullptr;

/// The indices Slice takes along a dim of size d (the spec's clamping).
std::vector<int64_t> sliceIndices(int64_t s, int64_t e, int64_t step, int64_t d) {
  if (s < 0)
    s += d;
  if (e < 0)
    e += d;
  std::vector<int64_t> out;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    for (int64_t i = s; i < e; i += step)
      out.push_back(i);
  } else {
    s = std::clamp<int64_t>(s, 0, d - 1);
    e = std::clamp<int64_t>(e, -1, d - 1);
    for (int64_t i = s; i > e; i += step)
      out.push_back(i);
  }
  return out;
}

/// Slice-11 -> Slice-10 for a target below 10, where Slice-1 takes only
/// constant starts, ends and axes as attributes and has no steps: a Slice
/// with computed bounds or steps other than 1 is written, per sliced axis
/// a (constant axes and steps), as a Gather of the indices the spec
/// selects (written at the step to 10, whose ops reach every older target;
/// the step from 10 to 1 would write them at opset 1):
///   constant starts/ends, known dim:   Gather<axis = a>(x, [s, s + t, ...])
///   otherwise (runtime bounds):        s' = clamp(s < 0 ? s + d : s), e' likewise
///                                      (to [0, d] for t > 0, [0, d-1] / [-1, d-1] for t < 0)
///                                      Gather<axis = a>(x, Range(s', e', t))   (Range: a Loop)
/// Every other Slice takes AttributesToInputs.cpp's step (negative axes).
std::string slice11(Node &node, StepContext &ctx) {
  auto delegate = [&] { return gSliceNegativeAxes ? gSliceNegativeAxes(node, ctx) : std::string(); };
  if (ctx.target >= 10)
    return delegate();
  std::optional<std::vector<int64_t>> cs = constantIntsOperand(node, 1), ce = constantIntsOperand(node, 2);
  std::optional<std::vector<int64_t>> ca = constantIntsOperand(node, 3), ct = constantIntsOperand(node, 4);
  bool unitSteps = !node.operand(4) || (ct && std::all_of(ct->begin(), ct->end(), [](int64_t s) { return s == 1; }));
  if (cs && ce && (!node.operand(3) || ca) && unitSteps)
    return delegate();
  Value *data = node.operand(0), *starts = node.operand(1), *ends = node.operand(2);
  if (!data || !starts || !ends)
    return "it has no data, starts or ends";
  if (node.operand(3) && !ca)
    return "its axes input is not a constant";
  if (node.operand(4) && !ct)
    return "its steps input is not a constant";
  size_t n = cs ? cs->size() : 0;
  if (!cs) {
    std::optional<Shape> ss = knownShape(starts);
    if (!ss || ss->size() != 1 || !(*ss)[0].isValue())
      return "the length of its starts is unknown";
    n = static_cast<size_t>((*ss)[0].getValue());
  }
  std::vector<int64_t> axes = ca ? *ca : std::vector<int64_t>();
  if (!ca)
    for (size_t i = 0; i < n; ++i)
      axes.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> steps = ct ? *ct : std::vector<int64_t>(n, 1);
  if (axes.size() != n || steps.size() != n || (ce && ce->size() != n))
    return "its starts, ends, axes and steps differ in length";
  std::optional<Shape> ds = knownShape(data);
  for (int64_t &a : axes)
    if (a < 0) {
      if (!ds)
        return "its axes are negative and the data's rank is unknown";
      a += static_cast<int64_t>(ds->size());
    }
  if (std::find(steps.begin(), steps.end(), 0) != steps.end())
    return "a step is 0";
  Writer w(node, ctx);
  Value *x = data;
  // The last Gather becomes the node.
  Value *lastIndices = nullptr;
  int64_t lastAxis = 0;
  auto flush = [&] {
    if (lastIndices)
      x = w.vi("Gather", {x, lastIndices}, "sliced", "axis", lastAxis);
    lastIndices = nullptr;
  };
  auto element = [&](Value *v, const std::optional<std::vector<int64_t>> &c, size_t i, const char *what) -> Value * {
    if (c)
      return w.int64Scalar((*c)[i], what);
    Value *e = w.vi("Gather", {v, w.int64Scalar(static_cast<int64_t>(i), std::string(what) + "_index")}, what, "axis", 0);
    std::optional<DataType> et = knownElemType(v);
    return et == DataType::Int64 ? e : w.cast(e, DataType::Int64, std::string(what) + "_i64");
  };
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i], step = steps[i];
    std::optional<int64_t> d;
    if (ds && static_cast<size_t>(a) < ds->size() && (*ds)[static_cast<size_t>(a)].isValue())
      d = (*ds)[static_cast<size_t>(a)].getValue();
    if (cs && ce && d) {
      std::vector<int64_t> idx = sliceIndices((*cs)[i], (*ce)[i], step, *d);
      bool whole = static_cast<int64_t>(idx.size()) == *d;
      for (size_t j = 0; whole && j < idx.size(); ++j)
        whole = idx[j] == static_cast<int64_t>(j);
      if (whole)
        continue;
      flush();
      lastIndices = w.ints(idx, "indices");
      lastAxis = a;
      continue;
    }
    flush();
    Value *dim = d ? w.int64Scalar(*d, "dim") : w.dim(x, a, "dim");
    Value *zero = w.int64Scalar(0, "zero");
    auto wrap = [&](Value *v, const char *what) {
      return w.v("Where", {w.v("Less", {v, zero}, std::string(what) + "_negative"),
                           w.v("Add", {v, dim}, std::string(what) + "_from_end"), v},
                 what);
    };
    auto clamp = [&](Value *v, Value *lo, Value *hi, const char *what) {
      Value *up = w.v("Where", {w.v("Less", {v, lo}, std::string(what) + "_low"), lo, v}, std::string(what) + "_up");
      return w.v("Where", {w.v("Greater", {up, hi}, std::string(what) + "_high"), hi, up}, what);
    };
    Value *s = wrap(element(starts, cs, i, "start"), "start_wrapped");
    Value *e = wrap(element(ends, ce, i, "end"), "end_wrapped");
    if (step > 0) {
      s = clamp(s, zero, dim, "start_clamped");
      e = clamp(e, zero, dim, "end_clamped");
    } else {
      Value *dimLess = w.v("Sub", {dim, w.int64Scalar(1, "one")}, "dim_last");
      s = clamp(s, zero, dimLess, "start_clamped");
      e = clamp(e, w.int64Scalar(-1, "minus_one"), dimLess, "end_clamped");
    }
    lastIndices = writeRange(w, s, e, w.int64Scalar(step, "step"), DataType::Int64, step);
    lastAxis = a;
  }
  if (!lastIndices) {
    w.become("Identity", {x});
    return "";
  }
  w.become("Gather", {x, lastIndices}).setAttr(Attribute::makeInt("axis", lastAxis));
  return "";
}

//===----------------------------------------------------------------------===//
// GatherND-11
//===----------------------------------------------------------------------===//

/// GatherND-11 -> opset 10 (batch_dims 0): with indices [..., k] into data
/// whose first k dims d0..d(k-1) are known, the linear index
/// sum_j idx_j * stride_j (negative indices counted from the end) into
/// the data flattened at axis k:
///   Before:                          After (data [2, 3, 4], indices [5, 2]):
///     y = GatherND(data, idx)          n = Where(Less(idx, 0), Add(idx, [2, 3]), idx)
///                                      lin = ReduceSum<axes = [1], keepdims = 0>(Mul(n, [3, 1]))
///                                      y = Gather<axis = 0>(Flatten<axis = 2>(data), lin)
/// followed by a Reshape to indices.shape[:-1] + data.shape[k:] unless
/// k = rank(data) - 1 (the Gather's shape already).
std::string gatherND11(Node &node, StepContext &ctx) {
  Value *data = node.operand(0), *indices = node.operand(1);
  if (!data || !indices)
    return "it has no data or indices";
  if (node.attrInt("batch_dims", 0) != 0)
    return "its batch_dims is not 0";
  std::optional<Shape> ds = knownShape(data), is = knownShape(indices);
  if (!ds || !is || is->empty() || !is->back().isValue())
    return "the shapes of its data and indices (the length of an index) are unknown";
  auto r = static_cast<int64_t>(ds->size()), q = static_cast<int64_t>(is->size());
  int64_t k = is->back().getValue();
  if (k < 1 || k > r)
    return "its index length " + std::to_string(k) + " is not within the data's rank " + std::to_string(r);
  std::vector<int64_t> dims, strides(static_cast<size_t>(k), 1);
  for (int64_t j = 0; j < k; ++j) {
    if (!(*ds)[static_cast<size_t>(j)].isValue())
      return "dim " + std::to_string(j) + " of its data is unknown (needed for the strides of the indices)";
    dims.push_back((*ds)[static_cast<size_t>(j)].getValue());
  }
  for (int64_t j = k - 1; j-- > 0;)
    strides[static_cast<size_t>(j)] = strides[static_cast<size_t>(j + 1)] * dims[static_cast<size_t>(j + 1)];
  Writer w(node, ctx);
  Value *idx = indices;
  std::optional<std::vector<int64_t>> ci = constantInts(indices);
  if (!ci || std::any_of(ci->begin(), ci->end(), [](int64_t v) { return v < 0; })) {
    Value *zero = w.int64Scalar(0, "zero");
    idx = w.v("Where", {w.v("Less", {indices, zero}, "negative"), w.v("Add", {indices, w.ints(dims, "dims")}, "from_end"),
                        indices},
              "indices_wrapped");
  }
  Value *lin = w.reduce("ReduceSum", k == 1 ? idx : w.v("Mul", {idx, w.ints(strides, "strides")}, "strided"), {q - 1}, 0,
                        "linear");
  Value *flat = w.vi("Flatten", {data}, "flat", "axis", k);
  if (k == r - 1) {
    w.become("Gather", {flat, lin}).setAttr(Attribute::makeInt("axis", 0));
    return "";
  }
  Value *g = w.vi("Gather", {flat, lin}, "gathered", "axis", 0);
  // indices.shape[:-1] + data.shape[k:]
  std::vector<int64_t> shape;
  bool known = true;
  for (int64_t j = 0; j < q - 1 && known; ++j)
    known = (*is)[static_cast<size_t>(j)].isValue() && (shape.push_back((*is)[static_cast<size_t>(j)].getValue()), true);
  for (int64_t j = k; j < r && known; ++j)
    known = (*ds)[static_cast<size_t>(j)].isValue() && (shape.push_back((*ds)[static_cast<size_t>(j)].getValue()), true);
  Value *target;
  if (known) {
    target = w.ints(shape, "shape");
  } else {
    Value *head = w.slice(w.v("Shape", {indices}, "indices_shape"), 0, q - 1, 0, 1, "batch_shape");
    Value *tail = w.slice(w.v("Shape", {data}, "data_shape"), k, r, 0, 1, "tail_shape");
    target = w.vi("Concat", {head, tail}, "shape", "axis", 0);
  }
  w.become("Reshape", {g, target});
  return "";
}

//===----------------------------------------------------------------------===//
// Min-12, Max-12 on integers
//===----------------------------------------------------------------------===//

/// The Min/Max-13 -> 12 adapters registered before this file's.
AdapterFn gMin13 = nullptr, gMax13 = nullptr;

/// Min-13 / Max-13 -> opset 12 for a target below 12, where Min and Max
/// take floats only (T5's relative-position buckets take a Min of int64):
/// integers are compared and chosen, left to right, which is exact:
///   Before:                  After:
///     y = Min(a, b, c)         m = Where(Less(a, b), a, b)
///                              y = Where(Less(m, c), m, c)
/// (Max with Greater; int8, uint8, int16, uint16 and uint32 are compared
/// in int64 and cast back, as ONNX Runtime's Where and Less take only int32
/// and int64 of the integers; uint64 is declined.) Floats and targets from
/// 12 take the usual step.
std::string minMax13(Node &node, StepContext &ctx) {
  bool isMin = node.opType() == "Min";
  AdapterFn prev = isMin ? gMin13 : gMax13;
  std::optional<DataType> t = node.operand(0) ? knownElemType(node.operand(0)) : std::nullopt;
  if (ctx.target >= 12 || !t || isFloating(*t))
    return prev ? prev(node, ctx) : std::string();
  std::vector<Value *> in = node.operands();
  if (in.empty() || std::find(in.begin(), in.end(), nullptr) != in.end())
    return "it has an omitted input";
  if (*t == DataType::UInt64)
    return "its uint64 inputs have no exact comparison in a type ONNX Runtime's Where takes";
  Writer w(node, ctx);
  if (in.size() == 1) {
    w.become("Identity", in);
    return "";
  }
  // ONNX Runtime's Where and Less take int32 and int64 of the integers:
  // the others are compared and chosen in int64 (exact) and cast back.
  bool widen = *t != DataType::Int32 && *t != DataType::Int64;
  if (widen)
    for (Value *&x : in)
      x = w.cast(x, DataType::Int64, "wide");
  Value *acc = in[0];
  for (size_t i = 1; i + 1 < in.size(); ++i)
    acc = w.v("Where", {w.v(isMin ? "Less" : "Greater", {acc, in[i]}, "pick"), acc, in[i]}, "partial");
  if (widen) {
    Value *b = in.back();
    Value *m = w.v("Where", {w.v(isMin ? "Less" : "Greater", {acc, b}, "pick"), acc, b}, "wide_result");
    w.become("Cast", {m}).setAttr(Attribute::makeInt("to", static_cast<int64_t>(*t)));
    return "";
  }
  Value *b = in.back();
  w.become("Where", {w.v(isMin ? "Less" : "Greater", {acc, b}, "pick"), acc, b});
  return "";
}

} // namespace

void registerTransformerExpansions(AdapterRegistry &r) {
  r.add("LayerNormalization", 17, Direction::Down, layerNorm17);
  r.add("Gelu", 20, Direction::Down, gelu20);
  r.add("RMSNormalization", 23, Direction::Down, rmsNorm23);
  r.add("RotaryEmbedding", 23, Direction::Down, rotary23);
  r.add("Attention", 23, Direction::Down, attention23);
  r.add("LessOrEqual", 12, Direction::Down, orEqual12);
  r.add("GreaterOrEqual", 12, Direction::Down, orEqual12);
  r.add("Range", 11, Direction::Down, range11);
  r.add("GatherND", 11, Direction::Down, gatherND11);
  // Slice-11 -> Slice-10: Gathers where Slice-1 cannot follow (below 10).
  if (!gSliceNegativeAxes)
    gSliceNegativeAxes = r.find("Slice", 11, Direction::Down);
  r.add("Slice", 11, Direction::Down, slice11);
  if (!gMin13) {
    gMin13 = r.find("Min", 13, Direction::Down);
    gMax13 = r.find("Max", 13, Direction::Down);
  }
  r.add("Min", 13, Direction::Down, minMax13);
  r.add("Max", 13, Direction::Down, minMax13);
}

} // namespace opset
} // namespace onnxslim
