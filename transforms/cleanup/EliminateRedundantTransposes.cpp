//===- transforms/cleanup/EliminateRedundantTransposes.cpp - Fewer Transposes===//
//
// eliminate-redundant-transposes: consecutive Transposes are composed into
// one, Transposes with an identity permutation are removed, and so pairs
// that cancel disappear.
//
//   Before:                                   After:
//     t = Transpose <perm = [0, 2, 1]> (x)      z = Transpose <perm = [1, 2, 0]> (x)
//     z = Transpose <perm = [2, 0, 1]> (t)
//
//     t = Transpose <perm = [1, 0]> (x)         y = Neg(x)
//     u = Transpose <perm = [1, 0]> (t)
//     y = Neg(u)
//
// Transpose semantics: out.shape[i] = in.shape[perm[i]], so the composition
// of p1 then p2 is p[i] = p1[p2[i]].
//
// Conditions:
//   - perm is a permutation of 0..rank-1; without perm (reverse the axes)
//     the rank must be known (from the input's type or the other perm);
//   - the first Transpose is left in place for its other users (it is
//     erased when the second was its only user), so nothing is computed
//     twice;
//   - a removed Transpose whose result is a graph output leaves an Identity
//     that keeps the output's name.
//
//===----------------------------------------------------------------------===//
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

bool isPermutation(const std::vector<int64_t> &perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
      return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

bool isIdentityPerm(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// The permutation of a Transpose; `rankHint` (or the input's known rank)
/// gives the rank when the attribute is absent. Null reason = valid.
std::optional<std::vector<int64_t>> transposePerm(const Node &t, std::optional<size_t> rankHint,
                                                  const char *&reason) {
  if (const Attribute *a = t.attr("perm")) {
    if (a->kind != AttrKind::Ints || !isPermutation(a->ints)) {
      reason = "perm is not a permutation";
      return std::nullopt;
    }
    return a->ints;
  }
  std::optional<Shape> shape = knownShape(t.operand(0));
  std::optional<size_t> rank = shape ? std::optional<size_t>(shape->size()) : rankHint;
  if (!rank) {
    reason = "no perm and the input's rank is unknown";
    return std::nullopt;
  }
  std::vector<int64_t> perm(*rank);
  for (size_t i = 0; i < *rank; ++i)
    perm[i] = static_cast<int64_t>(*rank - 1 - i);
  return perm;
}

bool isPlainTranspose(const Node &n) {
  return n.is("Transpose") && n.numOperands() == 1 && n.operand(0) && n.numResults() == 1 && n.result(0);
}

class RemoveIdentityTranspose : public Pattern {
public:
  RemoveIdentityTranspose() : Pattern("Transpose", "remove-identity-transpose") {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (!isPlainTranspose(*node))
      return rewriter.notifyMatchFailure(node, "not one input and one result");
    const char *reason = nullptr;
    std::optional<std::vector<int64_t>> perm = transposePerm(*node, std::nullopt, reason);
    if (!perm)
      return rewriter.notifyMatchFailure(node, reason);
    if (!isIdentityPerm(*perm))
      return rewriter.notifyMatchFailure(node, "perm is not the identity");
    return replaceNodeWithValue(node, node->operand(0), rewriter, "identity perm");
  }
};

class ComposeTransposes : public Pattern {
public:
  ComposeTransposes() : Pattern("Transpose", "compose-transposes") {}

  bool matchAndRewrite(Node *node, Rewriter &rewriter) const override {
    if (!isPlainTranspose(*node))
      return rewriter.notifyMatchFailure(node, "not one input and one result");
    Node *first = node->operand(0)->definingNode();
    if (!first || !isPlainTranspose(*first))
      return rewriter.notifyMatchFailure(node, "input is not produced by a Transpose");
    const char *reason = nullptr;
    std::optional<std::vector<int64_t>> p2 = transposePerm(*node, std::nullopt, reason);
    std::optional<std::vector<int64_t>> p1 =
        transposePerm(*first, p2 ? std::optional<size_t>(p2->size()) : std::nullopt, reason);
    if (p1 && !p2)
      p2 = transposePerm(*node, p1->size(), reason);
    if (!p1 || !p2)
      return rewriter.notifyMatchFailure(node, reason);
    if (p1->size() != p2->size())
      return rewriter.notifyMatchFailure(node, "the two perms have different ranks");
    std::vector<int64_t> composed(p2->size());
    for (size_t i = 0; i < composed.size(); ++i)
      composed[i] = (*p1)[static_cast<size_t>((*p2)[i])];

    Value *source = first->operand(0);
    Value *middle = node->operand(0);
    if (isIdentityPerm(composed)) {
      if (!replaceNodeWithValue(node, source, rewriter, "cancels the Transpose before it"))
        return false;
    } else {
      rewriter.notifyRewrite(node, "composed with the Transpose before it");
      rewriter.setOperand(node, 0, source);
      rewriter.modifyNodeInPlace(node, [&] { node->setAttr(Attribute::makeInts("perm", composed)); });
    }
    if (!middle->hasUses())
      rewriter.eraseNode(first);
    return true;
  }
};

class EliminateRedundantTransposesPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "eliminate-redundant-transposes"; }
  std::string_view description() const override {
    return "Compose consecutive Transposes, remove identity and cancelling ones";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<RemoveIdentityTranspose>();
    patterns.add<ComposeTransposes>();
  }
};

} // namespace

std::unique_ptr<Pass> createEliminateRedundantTransposesPass() {
  return std::make_unique<EliminateRedundantTransposesPass>();
}

} // namespace onnxslim
