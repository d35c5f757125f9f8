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
    for (size_t side = 0; side < 2 && !step.recip; ++side)
      if (Node *r = producerOp(node->operand(side), "Reciprocal"); r && node->operand(1 - side) != node->operand(side)) {
        step.recip = r;
        step.numerator = node->operand(1 - side);
      }
    if (!step.recip || step.recip->numOperands() != 1 || !hasSingleNodeUse(step.recip->result(0)))
      return std::nullopt;
    step.sqrt = producerOp(step.recip->operand(0), "Sqrt");
    if (!step.sqrt || !hasSingleNodeUse(step.recip->operand(0)))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (step.sqrt->numOperands() != 1 || !step.sqrt->operand(0))
    return std::nullopt;
  return step;
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

} // namespace onnxslim
