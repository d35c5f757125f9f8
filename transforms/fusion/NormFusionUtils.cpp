//===- transforms/fusion/NormFusionUtils.cpp - Shared by the norm fusions -===//
#include "transforms/fusion/NormFusionUtils.h"

#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

#include <algorithm>

namespace onnxslim {

std::optional<std::vector<int64_t>> reduceMeanAxes(const Node &mean, int64_t rank) {
  if (mean.attrInt("keepdims", 1) != 1)
    return std::nullopt;
  std::optional<std::vector<int64_t>> axes;
  if (defaultOpset(mean) < 18) {
    axes = mean.attrInts("axes");
  } else if (mean.numOperands() >= 2 && mean.operand(1)) {
    axes = constantInts(mean.operand(1));
  } else {
    if (mean.attrInt("noop_with_empty_axes", 0) != 0)
      return std::nullopt;
    axes.emplace();
  }
  if (!axes)
    return std::nullopt;
  if (axes->empty())
    for (int64_t i = 0; i < rank; ++i)
      axes->push_back(i);
  for (int64_t &a : *axes) {
    if (a < 0)
      a += rank;
    if (a < 0 || a >= rank)
      return std::nullopt;
  }
  std::sort(axes->begin(), axes->end());
  return axes;
}

Value *otherOperand(const Node &node, const Value *known) {
  if (node.numOperands() != 2)
    return nullptr;
  if (node.operand(0) == known)
    return node.operand(1);
  if (node.operand(1) == known)
    return node.operand(0);
  return nullptr;
}

bool isConstantNumber(const Value *v, double number) {
  TensorPtr t = constantTensor(v);
  if (!t || t->numElements() != 1)
    return false;
  if (std::optional<std::vector<double>> d = toDoubles(*t))
    return (*d)[0] == number;
  std::optional<std::vector<int64_t>> i = constantInts(v);
  return i && static_cast<double>((*i)[0]) == number;
}

std::optional<NormStep> matchNormStep(Node *node) {
  if (!node || node->numOperands() != 2 || !node->operand(0) || !node->operand(1) || !node->result(0))
    return std::nullopt;
  NormStep step;
  step.norm = node;
  if (node->is("Div")) {
    step.numerator = node->operand(0);
    step.sqrt = producerOp(node->operand(1), "Sqrt");
    if (!step.sqrt || !hasSingleNodeUse(node->operand(1)))
      return std::nullopt;
  } else if (node->is("Mul")) {
    // The reciprocal: Reciprocal(s), or Div(1, s) (torch.rsqrt's export);
    // both are 1/s correctly rounded, the same value.
    auto reciprocalOf = [](Node *r) -> Value * {
      if (!r)
        return nullptr;
      if (r->is("Reciprocal") && r->numOperands() == 1)
        return r->operand(0);
      if (r->is("Div") && r->numOperands() == 2) {
        if (isConstantNumber(r->operand(0), 1.0))
          return r->operand(1);
      }
      return nullptr;
    };
    Value *denominator = nullptr;
    for (size_t side = 0; side < 2 && !step.recip; ++side) {
      Node *r = node->operand(side)->definingNode();
      if (Value *d = reciprocalOf(r); d && node->operand(1 - side) != node->operand(side)) {
        step.recip = r;
        denominator = d;
        step.numerator = node->operand(1 - side);
      }
    }
    if (!step.recip || !hasSingleNodeUse(step.recip->result(0)))
      return std::nullopt;
    step.sqrt = producerOp(denominator, "Sqrt");
    if (!step.sqrt || !hasSingleNodeUse(denominator))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (step.sqrt->numOperands() != 1 || !step.sqrt->operand(0))
    return std::nullopt;
  return step;
}

std::optional<MeanSquarePlusEps> matchMeanSquarePlusEps(Value *sqrtInput, const Value *v, const char *notSquare,
                                                        const char *&why) {
  MeanSquarePlusEps m;
  m.addEps = producerOp(sqrtInput, "Add");
  if (!m.addEps || m.addEps->numOperands() != 2) {
    why = "the Sqrt input is not an Add";
    return std::nullopt;
  }
  size_t meanSide = producerOp(m.addEps->operand(0), "ReduceMean") ? 0 : 1;
  m.mean = producerOp(m.addEps->operand(meanSide), "ReduceMean");
  m.eps = constantTensor(m.addEps->operand(1 - meanSide));
  std::optional<std::vector<double>> epsValue = m.eps ? toDoubles(*m.eps) : std::nullopt;
  if (!m.mean || !epsValue || epsValue->size() != 1) {
    why = "the Sqrt input is not ReduceMean(..) + a constant epsilon";
    return std::nullopt;
  }
  m.epsilon = (*epsValue)[0];
  Node *sq = m.mean->operand(0) ? m.mean->operand(0)->definingNode() : nullptr;
  m.isPow = sq && sq->is("Pow") && sq->numOperands() == 2 && sq->operand(0) == v && isConstantNumber(sq->operand(1), 2.0);
  bool isMul = sq && sq->is("Mul") && sq->numOperands() == 2 && sq->operand(0) == v && sq->operand(1) == v;
  if (!m.isPow && !isMul) {
    why = notSquare;
    return std::nullopt;
  }
  m.square = sq;
  return m;
}

const char *checkMeanSquareOperands(const MeanSquarePlusEps &m, const Value *x, Shape &xs) {
  std::optional<Shape> shape = knownShape(x);
  std::optional<DataType> dt = knownElemType(x);
  if (!shape || shape->empty())
    return "x's rank is unknown";
  if (!dt || !isFloatLike(*dt) || m.eps->dtype() != *dt)
    return "x's element type is unknown, not floating, or not epsilon's";
  int64_t rank = static_cast<int64_t>(shape->size());
  if (m.eps->rank() > rank)
    return "epsilon's rank exceeds x's (it would broadcast the result to a higher rank)";
  if (m.isPow) {
    TensorPtr two = constantTensor(m.square->operand(1));
    if (!two || two->rank() > rank)
      return "the exponent's rank exceeds x's (it would broadcast the result to a higher rank)";
  }
  xs = *shape;
  return nullptr;
}

std::optional<int64_t> firstOfLastAxes(const std::vector<int64_t> &axes, int64_t rank) {
  int64_t axis = rank - static_cast<int64_t>(axes.size());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != axis + static_cast<int64_t>(i))
      return std::nullopt;
  return axis;
}

std::vector<int64_t> normalizedDims(const Shape &xs, int64_t axis, bool &known) {
  std::vector<int64_t> dims;
  known = true;
  for (size_t i = static_cast<size_t>(axis); i < xs.size(); ++i) {
    known = known && xs[i].isValue();
    dims.push_back(xs[i].isValue() ? xs[i].getValue() : -1);
  }
  return dims;
}

AffineTail matchAffineTail(Node *norm, bool withBias) {
  AffineTail tail;
  tail.last = norm;
  if (Node *u = singleUser(norm->result(0)); u && u->is("Mul") && u->result(0)) {
    Value *g = otherOperand(*u, norm->result(0));
    if (g && g != norm->result(0) && constantTensor(g)) {
      tail.mulGamma = u, tail.gamma = g, tail.last = u;
      if (Node *a = withBias ? singleUser(u->result(0)) : nullptr; a && a->is("Add") && a->result(0)) {
        Value *b = otherOperand(*a, u->result(0));
        if (b && b != u->result(0) && constantTensor(b))
          tail.addBeta = a, tail.beta = b, tail.last = a;
      }
    }
  }
  return tail;
}

const char *checkAffineOperand(const Value *v, const std::vector<int64_t> &normDims, bool normKnown, int64_t rank,
                               DataType dt) {
  if (!v)
    return nullptr;
  TensorPtr t = constantTensor(v);
  if (!t || t->dtype() != dt)
    return "gamma/beta's dtype is not x's";
  std::vector<int64_t> td = t->dims();
  if (td == normDims)
    return nullptr;
  // Dims after dropping leading 1s must be the normalized dims (without
  // their leading 1s), and the constant's rank must not exceed x's.
  auto strip = [](std::vector<int64_t> dims) {
    size_t i = 0;
    while (i < dims.size() && dims[i] == 1)
      ++i;
    return std::vector<int64_t>(dims.begin() + static_cast<std::ptrdiff_t>(i), dims.end());
  };
  if (!normKnown || strip(td) != strip(normDims) || td.size() > static_cast<size_t>(rank))
    return "gamma/beta do not match the normalized shape exactly";
  return nullptr;
}

Value *asNormalizedShape(Rewriter &rewriter, Graph &graph, Node *before, Value *v,
                         const std::vector<int64_t> &normDims) {
  TensorPtr t = constantTensor(v);
  if (t->dims() == normDims)
    return v;
  auto copy = std::make_shared<Tensor>(t->dtype(), normDims, t->buffer());
  return materializeConstant(rewriter, graph, before, v->name() + "_reshaped", copy);
}

Value *scaleOrOnes(Rewriter &rewriter, Graph &graph, Node *before, Value *gamma, const std::vector<int64_t> &normDims,
                   DataType dt, const std::string &base) {
  if (gamma)
    return asNormalizedShape(rewriter, graph, before, gamma, normDims);
  int64_t n = 1;
  for (int64_t v : normDims)
    n *= v;
  return materializeConstant(rewriter, graph, before, base, fromDoubles(dt, normDims, std::vector<double>(static_cast<size_t>(n), 1.0)));
}

} // namespace onnxslim
