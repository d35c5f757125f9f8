//===- transforms/fusion/NormFusionUtils.h - Shared by the norm fusions -*- C++ -*-===//
//
// What fuse-layernorm and fuse-rmsnorm both ask of a decomposed
// normalization: the axes a ReduceMean reduces, a one-element constant's
// value, the normalizing step `n / Sqrt(..)` or `n * Reciprocal(Sqrt(..))`,
// the `ReduceMean(Pow(v, 2) or v * v) + epsilon` under its Sqrt and the
// checks of x against it, the optional affine tail (Mul by a constant
// gamma, Add of a constant beta), its fit to the normalized shape, and the
// scale of ones made when gamma is missing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <optional>
#include <vector>

namespace onnxslim {

class Rewriter;

/// Given a ReduceMean and its input's rank, Result: the sorted, normalized
/// axes it reduces with keepdims = 1; nullopt when they are not known.
std::optional<std::vector<int64_t>> reduceMeanAxes(const Node &mean, int64_t rank);

/// The operand of binary `node` that is not `known` (null if neither is).
Value *otherOperand(const Node &node, const Value *known);

/// Whether `v` is a single-element constant equal to `number`.
bool isConstantNumber(const Value *v, double number);

/// The normalizing step of a decomposed normalization.
struct NormStep {
  Node *norm = nullptr;       ///< The Div, or the Mul by the reciprocal.
  Value *numerator = nullptr; ///< What is normalized.
  Node *sqrt = nullptr;       ///< The Sqrt of the denominator.
  Node *recip = nullptr;      ///< The Reciprocal (or Div(1, s)), when the step is a Mul.
};

/// Given a Div or Mul node, Result: the step when it is `a / Sqrt(s)` or
/// `a * Reciprocal(Sqrt(s))` or `a * Div(1, Sqrt(s))` (torch.rsqrt; the
/// Mul's operands in either order) with the Sqrt (and reciprocal) read only
/// there; nullopt otherwise.
std::optional<NormStep> matchNormStep(Node *node);

/// `ReduceMean(Pow(v, 2)) + epsilon` or `ReduceMean(v * v) + epsilon` (the
/// Add's operands in either order): the variance of a centred v
/// (fuse-layernorm) or the mean square of v (fuse-rmsnorm).
struct MeanSquarePlusEps {
  Node *addEps = nullptr; ///< The Add of epsilon.
  Node *mean = nullptr;   ///< The ReduceMean.
  Node *square = nullptr; ///< The Pow(v, 2) or Mul(v, v).
  bool isPow = false;
  TensorPtr eps;          ///< The one-element constant epsilon.
  double epsilon = 0.0;
};

/// Given the Sqrt's input, the value `v` that must be squared and the
/// reason to give when the mean is not of Pow(v, 2) or v * v, Result: the
/// match; nullopt with the reason in `why` otherwise.
std::optional<MeanSquarePlusEps> matchMeanSquarePlusEps(Value *sqrtInput, const Value *v, const char *notSquare,
                                                        const char *&why);

/// Given a match and the normalized input x, Execute: checks that x's
/// rank and floating element type are known and epsilon's, and that the
/// one-element epsilon and exponent do not exceed x's rank (they would
/// broadcast the result), Result: null with x's shape in `xs`, or why not.
const char *checkMeanSquareOperands(const MeanSquarePlusEps &m, const Value *x, Shape &xs);

/// Given sorted reduced axes and x's rank, Result: the first of them when
/// they are the last ones (axis, .., rank - 1); nullopt otherwise.
std::optional<int64_t> firstOfLastAxes(const std::vector<int64_t> &axes, int64_t rank);

/// Given x's shape and the first normalized axis, Result: the normalized
/// dims (-1 where unknown), with `known` telling whether all are numbers.
std::vector<int64_t> normalizedDims(const Shape &xs, int64_t axis, bool &known);

/// The optional affine tail after a normalization result.
struct AffineTail {
  Node *last = nullptr;      ///< The last node of the pattern.
  Node *mulGamma = nullptr;  ///< Mul by gamma, if any.
  Node *addBeta = nullptr;   ///< Add of beta, if any.
  Value *gamma = nullptr, *beta = nullptr;
};

/// Given the normalization node and whether a bias may follow, Result: the
/// tail `Mul(n, gamma)` then (if `withBias`) `Add(.., beta)`, constants only,
/// each the single user of the value before it.
AffineTail matchAffineTail(Node *norm, bool withBias);

/// Given gamma/beta (or null), the normalized dims (-1 when unknown), x's
/// rank and element type, Execute: checks the constant broadcasts exactly to
/// the normalized shape, Result: null reason when it does (or v is null).
const char *checkAffineOperand(const Value *v, const std::vector<int64_t> &normDims, bool normKnown, int64_t rank,
                               DataType dt);

/// Given a checked gamma/beta, Result: it, or a new initializer with the
/// same data and dims `normDims` when its dims differ.
Value *asNormalizedShape(Rewriter &rewriter, Graph &graph, Node *before, Value *v,
                         const std::vector<int64_t> &normDims);

/// Given a checked gamma (or null), the known normalized dims and x's
/// element type, Result: asNormalizedShape of gamma, or a new constant of
/// ones named from `base` when there is no gamma.
Value *scaleOrOnes(Rewriter &rewriter, Graph &graph, Node *before, Value *gamma, const std::vector<int64_t> &normDims,
                   DataType dt, const std::string &base);

} // namespace onnxslim
