//===- transforms/fusion/NormFusionUtils.h - Shared by the norm fusions -*- C++ -*-===//
//
// What fuse-layernorm and fuse-rmsnorm both ask of a decomposed
// normalization: the axes a ReduceMean reduces, a one-element constant's
// value, the normalizing step `n / Sqrt(..)` or `n * Reciprocal(Sqrt(..))`,
// the optional affine tail (Mul by a constant gamma, Add of a constant
// beta) and its fit to the normalized shape.
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
  Node *recip = nullptr;      ///< The Reciprocal, when the step is a Mul.
};

/// Given a Div or Mul node, Result: the step when it is `a / Sqrt(s)` or
/// `a * Reciprocal(Sqrt(s))` (operands in either order) with the Sqrt (and
/// Reciprocal) read only there; nullopt otherwise.
std::optional<NormStep> matchNormStep(Node *node);

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

} // namespace onnxslim
