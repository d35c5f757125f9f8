//===- transforms/cleanup/EliminateNopOps.cpp - Remove ops that change nothing===//
//
// eliminate-nop-ops: nodes whose output provably equals their first input
// (same dtype, same shape, same elements) are replaced by that input.
//
//   Before:                                  After:
//     a = Cast <to = 1> (x)     # x: float     y = Relu(x)
//     b = Mul(a, one)           # one = 1.0
//     c = Reshape(b, s)         # s = [2, 3], x: float[2,3]
//     y = Relu(c)
//
// One pattern per op, each with its own conditions:
//   Dropout      inference (no training_mode input, or a constant false one),
//                or a constant ratio of 0 whatever training_mode says (a
//                copy; a training Dropout with ratio > 0 always stays);
//                its mask output unused. (Opsets <= 6 are treated the same, as
//                inference runtimes do.)
//   Cast         the input's element type is known and equals `to`;
//   CastLike     both element types known and equal;
//   Reshape      input shape of known rank, constant target shape: every dim
//                is 0 (copy, allowzero=0), the same known value, or a single
//                -1 whose other dims all match (and none is a known 0);
//   Expand       constant shape of rank <= the input's, each dim 1 or equal to
//                the input's known dim;
//   Squeeze      no axes, and every input dim known and != 1;
//   Unsqueeze    an empty constant axes list;
//   Slice        constant starts/ends/axes/steps, every step 1, every start
//                clamping to 0 and every end to the dim (a known dim, or an end
//                >= 2^62 for an unknown one);
//   Pad          constant pads, all zero (any mode);
//   Concat       a single input;
//   Split        a single output;
//   Add/Sub      adding (either side for Add) / subtracting a constant 0;
//                for floating types only x + (-0.0) and x - (+0.0) are
//                identities (x + 0.0 turns -0.0 into +0.0, and 1/x flips),
//                unless nothing downstream can tell -0.0 from +0.0: every
//                path from the result (up to 4096 nodes) goes through ops
//                whose results then differ at most in the sign of a zero
//                (elementwise arithmetic, MatMul, data movement, reductions,
//                normalizations, activations, a Div's numerator, a Pow's
//                base to odd positive exponents) to graph outputs, where
//                -0.0 == +0.0, or to ops that give the same for both (Abs,
//                Exp, Cos, Sigmoid, Softmax, comparisons, Shape, Pow's base to
//                other positive exponents: x^2 of an RMS norm); declined
//                when a path reaches a divisor, Reciprocal, a negative
//                exponent, Atan, Sign, a subgraph or an op of another domain
//                (a zero-bias Linear: MatMul + Add(+0.0));
//   Mul/Div      multiplying (either side for Mul) / dividing by a constant 1;
//   Pow          raising to a constant 1;
//                for these five: the input's element type (when known) is the
//                constant's (Pow: any exponent type), and the constant is a
//                scalar, or the input's rank is known and the constant
//                broadcasts to its shape without changing it (rank <= the
//                input's, each dim 1 or equal to a known dim).
// A result that is a graph output keeps its name: the node becomes an
// Identity (resolved by eliminate-identity-ops).
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <cmath>
#include <set>
#include <string_view>
#include <unordered_set>

namespace onnxslim {

namespace {

constexpr int64_t kHugeIndex = int64_t{1} << 62;

/// A pattern with the common preamble: a first input and a first result.
class NopPattern : public Pattern {
public:
  NopPattern(std::string op, std::string name) : Pattern(std::move(op), std::move(name)) {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (node->numOperands() == 0 || !node->operand(0) || node->numResults() == 0 || !node->result(0))
      return rewriter.notifyMatchFailure(node, "no first input or no first result");
    const char *reason = isNop(*node);
    if (reason)
      return rewriter.notifyMatchFailure(node, reason);
    return replaceNodeWithValue(node, node->operand(0), rewriter, "no-op");
  }

protected:
  /// Null when `node` computes its first input; otherwise why not.
  virtual const char *isNop(const Node &node) const = 0;
};

/// Integer list from an attribute (when present) or a constant operand.
/// `present` tells whether either exists.
std::optional<std::vector<int64_t>> intsFromAttrOrOperand(const Node &n, std::string_view attr, size_t operand,
                                                          bool &present) {
  if (const Attribute *a = n.attr(attr)) {
    present = true;
    if (a->kind != AttrKind::Ints)
      return std::nullopt;
    return a->ints;
  }
  present = operand < n.numOperands() && n.operand(operand);
  if (!present)
    return std::nullopt;
  return constantInts(n.operand(operand));
}

bool secondResultUsed(const Node &n) {
  for (size_t i = 1; i < n.numResults(); ++i)
    if (n.result(i) && n.result(i)->hasUses())
      return true;
  return false;
}

class DropoutNop : public NopPattern {
public:
  DropoutNop() : NopPattern("Dropout", "remove-inference-dropout") {}
  const char *isNop(const Node &n) const override {
    if (secondResultUsed(n))
      return "the mask output is used";
    if (n.numOperands() > 2 && n.operand(2)) {
      TensorPtr t = constantTensor(n.operand(2));
      if (!t || t->dtype() != DataType::Bool || t->numElements() != 1 || t->at<uint8_t>(0) != 0) {
        // Training mode drops with probability `ratio` and scales by
        // 1 / (1 - ratio): with a constant ratio of 0 it is a copy
        // (torch's F.dropout(p=0.0) exports training_mode = true).
        std::optional<std::vector<double>> r = n.operand(1) ? constantDoubles(n.operand(1)) : std::nullopt;
        if (!r || r->size() != 1 || (*r)[0] != 0.0)
          return "training_mode is not a constant false and the ratio is not a constant 0";
      }
    }
    return nullptr;
  }
};

class CastNop : public NopPattern {
public:
  CastNop() : NopPattern("Cast", "remove-same-type-cast") {}
  const char *isNop(const Node &n) const override {
    const Attribute *to = n.attr("to");
    if (!to || to->kind != AttrKind::Int)
      return "no integer 'to' attribute";
    std::optional<DataType> from = knownElemType(n.operand(0));
    if (!from)
      return "the input's element type is unknown";
    if (static_cast<int64_t>(*from) != to->i)
      return "casts to another type";
    return nullptr;
  }
};

class CastLikeNop : public NopPattern {
public:
  CastLikeNop() : NopPattern("CastLike", "remove-same-type-castlike") {}
  const char *isNop(const Node &n) const override {
    std::optional<DataType> from = knownElemType(n.operand(0));
    std::optional<DataType> like = knownElemType(n.operand(1));
    if (!from || !like)
      return "an element type is unknown";
    if (*from != *like)
      return "casts to another type";
    return nullptr;
  }
};

class ReshapeNop : public NopPattern {
public:
  ReshapeNop() : NopPattern("Reshape", "remove-nop-reshape") {}
  const char *isNop(const Node &n) const override {
    std::optional<Shape> in = knownShape(n.operand(0));
    if (!in)
      return "the input's rank is unknown";
    bool present = false;
    std::optional<std::vector<int64_t>> target = intsFromAttrOrOperand(n, "shape", 1, present);
    if (!target)
      return "the target shape is not a constant";
    if (target->size() != in->size())
      return "changes the rank";
    bool allowZero = n.attrInt("allowzero", 0) != 0;
    int inferred = 0;
    for (size_t i = 0; i < in->size(); ++i) {
      const Dim &d = (*in)[i];
      int64_t t = (*target)[i];
      if (t == -1) {
        ++inferred;
      } else if (t == 0 && !allowZero) {
        continue; // copies the input dim
      } else if (!d.isValue() || d.getValue() != t) {
        return "a target dim differs from (or is not provably) the input dim";
      }
    }
    if (inferred > 1)
      return "more than one -1";
    if (inferred == 1)
      for (size_t i = 0; i < in->size(); ++i)
        if ((*in)[i].isValue() && (*in)[i].getValue() == 0)
          return "-1 next to a zero-sized dim";
    return nullptr;
  }
};

/// Whether a shape of `dims` broadcast against `in` leaves `in` unchanged.
bool broadcastKeeps(const Shape &in, const std::vector<int64_t> &dims) {
  if (dims.size() > in.size())
    return false;
  size_t offset = in.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim &d = in[offset + i];
    if (dims[i] == 1)
      continue;
    if (!d.isValue() || d.getValue() != dims[i])
      return false;
  }
  return true;
}

class ExpandNop : public NopPattern {
public:
  ExpandNop() : NopPattern("Expand", "remove-nop-expand") {}
  const char *isNop(const Node &n) const override {
    std::optional<Shape> in = knownShape(n.operand(0));
    if (!in)
      return "the input's rank is unknown";
    std::optional<std::vector<int64_t>> shape = constantInts(n.operand(1));
    if (!shape)
      return "the shape is not a constant";
    if (!broadcastKeeps(*in, *shape))
      return "the shape may change the input's shape";
    return nullptr;
  }
};

class SqueezeNop : public NopPattern {
public:
  SqueezeNop() : NopPattern("Squeeze", "remove-nop-squeeze") {}
  const char *isNop(const Node &n) const override {
    bool present = false;
    std::optional<std::vector<int64_t>> axes = intsFromAttrOrOperand(n, "axes", 1, present);
    if (present && (!axes || !axes->empty()))
      return "has axes (removes dims)";
    std::optional<Shape> in = knownShape(n.operand(0));
    if (!in)
      return "the input's rank is unknown";
    for (const Dim &d : *in)
      if (!d.isValue() || d.getValue() == 1)
        return "some input dim is 1 or unknown";
    return nullptr;
  }
};

class UnsqueezeNop : public NopPattern {
public:
  UnsqueezeNop() : NopPattern("Unsqueeze", "remove-nop-unsqueeze") {}
  const char *isNop(const Node &n) const override {
    bool present = false;
    std::optional<std::vector<int64_t>> axes = intsFromAttrOrOperand(n, "axes", 1, present);
    if (!present || !axes || !axes->empty())
      return "inserts dims";
    return nullptr;
  }
};

class SliceNop : public NopPattern {
public:
  SliceNop() : NopPattern("Slice", "remove-nop-slice") {}
  const char *isNop(const Node &n) const override {
    std::optional<Shape> in = knownShape(n.operand(0));
    if (!in)
      return "the input's rank is unknown";
    bool hasStarts = false, hasEnds = false, hasAxes = false, hasSteps = false;
    auto starts = intsFromAttrOrOperand(n, "starts", 1, hasStarts);
    auto ends = intsFromAttrOrOperand(n, "ends", 2, hasEnds);
    auto axes = intsFromAttrOrOperand(n, "axes", 3, hasAxes);
    auto steps = intsFromAttrOrOperand(n, "steps", 4, hasSteps);
    if (!starts || !ends || (hasAxes && !axes) || (hasSteps && !steps))
      return "starts/ends/axes/steps are not constants";
    size_t k = starts->size();
    if (ends->size() != k || (axes && axes->size() != k) || (steps && steps->size() != k))
      return "starts/ends/axes/steps differ in length";
    int64_t rank = static_cast<int64_t>(in->size());
    std::set<int64_t> seen;
    for (size_t i = 0; i < k; ++i) {
      int64_t axis = axes ? (*axes)[i] : static_cast<int64_t>(i);
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank || !seen.insert(axis).second)
        return "an axis is out of range or repeated";
      if (steps && (*steps)[i] != 1)
        return "a step is not 1";
      const Dim &d = (*in)[static_cast<size_t>(axis)];
      int64_t start = (*starts)[i], end = (*ends)[i];
      bool startIsZero = start == 0 || start <= -kHugeIndex || (d.isValue() && start <= -d.getValue());
      bool endIsDim = end >= kHugeIndex || (d.isValue() && end >= d.getValue());
      if (!startIsZero || !endIsDim)
        return "some axis is not sliced whole (or its size is unknown)";
    }
    return nullptr;
  }
};

class PadNop : public NopPattern {
public:
  PadNop() : NopPattern("Pad", "remove-nop-pad") {}
  const char *isNop(const Node &n) const override {
    bool present = false;
    std::optional<std::vector<int64_t>> pads = intsFromAttrOrOperand(n, "pads", 1, present);
    if (!present)
      pads = intsFromAttrOrOperand(n, "paddings", SIZE_MAX, present);
    if (!pads)
      return "pads are not a constant";
    if (pads->empty())
      return "pads are empty";
    for (int64_t p : *pads)
      if (p != 0)
        return "some pad is not zero";
    return nullptr;
  }
};

class ConcatNop : public NopPattern {
public:
  ConcatNop() : NopPattern("Concat", "remove-single-input-concat") {}
  const char *isNop(const Node &n) const override {
    return n.numOperands() == 1 ? nullptr : "more than one input";
  }
};

class SplitNop : public NopPattern {
public:
  SplitNop() : NopPattern("Split", "remove-single-output-split") {}
  const char *isNop(const Node &n) const override {
    return n.numResults() == 1 ? nullptr : "more than one output";
  }
};

/// The sign a floating zero must have to be an identity element: x + (-0.0)
/// and x - (+0.0) are x for every x, -0.0 included.
enum class ZeroSign { Any, Negative, Positive };

/// Whether every element of a floating tensor has its sign bit equal to
/// `negative` (true for non-floating tensors: their zero has no sign).
bool allSignsAre(const Tensor &t, bool negative) {
  size_t n = static_cast<size_t>(t.numElements());
  for (size_t i = 0; i < n; ++i) {
    bool sign = false;
    switch (t.dtype()) {
    case DataType::Float: sign = std::signbit(t.at<float>(i)); break;
    case DataType::Double: sign = std::signbit(t.at<double>(i)); break;
    case DataType::Float16:
    case DataType::BFloat16: sign = (t.at<uint16_t>(i) & 0x8000u) != 0; break;
    default: return true;
    }
    if (sign != negative)
      return false;
  }
  return true;
}

/// Given a value, Result: whether replacing it by one that differs at most
/// in the sign of its zeros changes every use only that way, down to the
/// graph outputs (see the file comment); `budget` bounds the nodes visited,
/// `seen` holds them (each is followed once).
bool zeroSignInsensitive(const Value *v, int &budget, std::unordered_set<const Node *> &seen) {
  // Ops whose result differs at most in the sign of a zero when an input
  // does (for every input position unless listed in the divisor rule).
  static const std::unordered_set<std::string_view> kSafe = {
      "Add", "Sub", "Mul", "Neg", "MatMul", "Gemm", "Identity", "Reshape", "Transpose", "Unsqueeze",
      "Squeeze", "Flatten", "Expand", "Tile", "Slice", "Concat", "Split", "Gather", "GatherElements",
      "GatherND", "Where", "Cast", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu", "Exp", "Sqrt",
      "Abs", "Softmax", "LogSoftmax", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "Max", "Min",
      "LayerNormalization", "RMSNormalization", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
      "Shape", "Size", "Dropout", "Clip", "HardSigmoid", "HardSwish", "Softplus", "Elu", "Selu", "Celu"};
  for (Use *u = v->uses().first; u; u = u->next()) {
    if (u->isGraphOutput())
      continue; // -0.0 == +0.0 there
    Node *n = u->owner();
    if (!n)
      return false;
    if (seen.count(n))
      continue; // its results are being (or were) followed already
    seen.insert(n);
    if (--budget < 0 || !n->isDefaultDomain() || hasSubgraphs(*n))
      return false;
    const std::string &op = n->opType();
    // Ops whose result is the same for -0.0 and +0.0: nothing to follow.
    static const std::unordered_set<std::string_view> kSame = {"Abs", "Exp", "Cos", "Sigmoid", "Softmax",
                                                              "Equal", "Less", "LessOrEqual", "Greater",
                                                              "GreaterOrEqual", "Shape", "Size"};
    if (kSame.count(op))
      continue;
    if (op == "Pow") {
      // A base raised to positive exponents: pow(-0, y) is -0 for an odd
      // integer y (followed on), +0 = pow(+0, y) otherwise; a negative
      // exponent gives -inf against +inf.
      std::optional<std::vector<double>> e = u->index() == 0 ? constantDoubles(n->operand(1)) : std::nullopt;
      if (!e)
        return false;
      bool odd = false;
      for (double y : *e) {
        if (!(y > 0))
          return false;
        odd = odd || (std::trunc(y) == y && std::fmod(y, 2.0) != 0.0);
      }
      if (!odd)
        continue;
    } else if (!(op == "Div" && u->index() == 0) && !kSafe.count(op)) {
      return false; // a divisor (and anything not listed) may tell -0.0 from +0.0
    }
    for (const Value *r : n->results())
      if (r && !zeroSignInsensitive(r, budget, seen))
        return false;
  }
  return true;
}

/// x op c == x for an identity-element constant c (see the file comment).
class ArithmeticNop : public Pattern {
public:
  ArithmeticNop(std::string op, std::string name, int identity, bool commutative, bool sameDtype,
                ZeroSign zeroSign = ZeroSign::Any)
      : Pattern(std::move(op), std::move(name)), identity_(identity), commutative_(commutative),
        sameDtype_(sameDtype), zeroSign_(zeroSign) {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (node->numOperands() != 2 || !node->operand(0) || !node->operand(1) || node->numResults() != 1 ||
        !node->result(0))
      return rewriter.notifyMatchFailure(node, "not two inputs and one result");
    result_ = node->result(0);
    const char *reason = check(node->operand(0), node->operand(1), "no operand is a constant identity element");
    if (!reason)
      return replaceNodeWithValue(node, node->operand(0), rewriter, "identity element");
    if (commutative_) {
      reason = check(node->operand(1), node->operand(0), reason);
      if (!reason)
        return replaceNodeWithValue(node, node->operand(1), rewriter, "identity element");
    }
    return rewriter.notifyMatchFailure(node, reason);
  }

private:
  /// Null when `x op constant` is x; otherwise why not (or `previous` when
  /// `constant` is not an identity element at all).
  const char *check(const Value *x, const Value *constant, const char *previous) const {
    TensorPtr t = constantTensor(constant);
    if (!t || !isSplatOf(*t, identity_))
      return previous;
    if (zeroSign_ != ZeroSign::Any && !allSignsAre(*t, zeroSign_ == ZeroSign::Negative)) {
      int budget = 4096;
      std::unordered_set<const Node *> seen;
      if (!zeroSignInsensitive(result_, budget, seen))
        return zeroSign_ == ZeroSign::Negative
                   ? "x + (+0.0) turns -0.0 into +0.0 (only -0.0 is an identity), and a use can tell them apart"
                   : "x - (-0.0) turns -0.0 into +0.0 (only +0.0 is an identity), and a use can tell them apart";
    }
    if (sameDtype_)
      if (std::optional<DataType> dt = knownElemType(x); dt && *dt != t->dtype())
        return "the constant's dtype differs from the input's";
    // A scalar broadcasts to any shape unchanged; anything else needs x's shape.
    if (t->dims().empty())
      return nullptr;
    std::optional<Shape> shape = knownShape(x);
    if (!shape)
      return "the other input's rank is unknown (and the constant is not a scalar)";
    if (!broadcastKeeps(*shape, t->dims()))
      return "broadcasting the constant may change the input's shape";
    return nullptr;
  }

  int identity_;
  bool commutative_;
  bool sameDtype_;
  ZeroSign zeroSign_;
  /// The result of the node being matched (for the zero-sign analysis).
  mutable const Value *result_ = nullptr;
};

class EliminateNopOpsPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "eliminate-nop-ops"; }
  std::string_view description() const override {
    return "Remove ops that provably return their input (Dropout, same-type Cast, x*1, x+0, no-op Reshape...)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<DropoutNop>();
    patterns.add<CastNop>();
    patterns.add<CastLikeNop>();
    patterns.add<ReshapeNop>();
    patterns.add<ExpandNop>();
    patterns.add<SqueezeNop>();
    patterns.add<UnsqueezeNop>();
    patterns.add<SliceNop>();
    patterns.add<PadNop>();
    patterns.add<ConcatNop>();
    patterns.add<SplitNop>();
    patterns.add<ArithmeticNop>("Add", "remove-add-zero", 0, true, true, ZeroSign::Negative);
    patterns.add<ArithmeticNop>("Sub", "remove-sub-zero", 0, false, true, ZeroSign::Positive);
    patterns.add<ArithmeticNop>("Mul", "remove-mul-one", 1, true, true);
    patterns.add<ArithmeticNop>("Div", "remove-div-one", 1, false, true);
    patterns.add<ArithmeticNop>("Pow", "remove-pow-one", 1, false, false);
  }
};

} // namespace

std::unique_ptr<Pass> createEliminateNopOpsPass() { return std::make_unique<EliminateNopOpsPass>(); }

} // namespace onnxslim
