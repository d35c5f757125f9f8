//===- transforms/fusion/FuseGelu.cpp - Decomposed GELU into Gelu ---------===//
//
// fuse-gelu: the two decompositions of GELU that exporters write become
// one Gelu (opset 20).
//
//   Before (erf form):                        After:
//     e = Erf(Div(x, 1.4142135))  # or Mul(x, 0.70710677)
//     a = Add(e, 1)                             y = Gelu(x)
//     y = Mul(Mul(x, 0.5), a)     # or Mul(Mul(x, a), 0.5)
//
//   Before (tanh form):                       After:
//     c = Mul(Add(x, Mul(Pow(x, 3), 0.044715)), 0.7978846)   # or x * x * x
//     a = Add(Tanh(c), 1)                       y = Gelu <approximate = "tanh"> (x)
//     y = Mul(Mul(x, 0.5), a)     # or Mul(Mul(x, a), 0.5)
//
// Binary ops match with their operands in either order. Conditions
// (otherwise declined, with the reason under --debug-only):
//   - the model's default-domain opset is >= 20 (the opset is never raised);
//   - the constants are single-element constants holding sqrt(2),
//     1/sqrt(2), 1, 0.5, 0.044715, sqrt(2/pi) and 3 for the exponent, to
//     a tenth of the model check's relative tolerance for their type
//     (nearConstant: sqrt(2) written 1.41421 is it; 1.00009 is not 1, and
//     Gelu would change the results by more than the check accepts);
//   - every intermediate value is read only inside the pattern and is not
//     a graph output;
//   - no constant has a rank above x's (a one-element constant of shape
//     [1,1,1] broadcasts a rank-2 x to rank 3, while Gelu keeps x's rank);
//     when x's rank is unknown, every constant is a scalar (rank 0).
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <cmath>

namespace onnxslim {

namespace {

/// Whether `v` is a single-element constant holding `c` (nearConstant).
bool isNear(const Value *v, double c) {
  TensorPtr t = constantTensor(v);
  if (!t || t->numElements() != 1)
    return false;
  std::optional<std::vector<double>> d = toDoubles(*t);
  if (!d) {
    std::optional<std::vector<int64_t>> i = constantInts(v);
    if (!i)
      return false;
    d = std::vector<double>{static_cast<double>((*i)[0])};
  }
  return nearConstant((*d)[0], c, t->dtype());
}

/// For a binary default-domain `op` node `n` with a constant near `c` on
/// one side, Result: the other operand; null otherwise.
Value *operandBesideConstant(const Node *n, std::string_view op, double c) {
  if (!n || !n->is(op) || n->numOperands() != 2 || !n->operand(0) || !n->operand(1))
    return nullptr;
  if (isNear(n->operand(1), c))
    return n->operand(0);
  if (isNear(n->operand(0), c))
    return n->operand(1);
  return nullptr;
}

/// The operand of binary `n` that is not `known` (null if neither is).
Value *otherOperand(const Node &n, const Value *known) {
  if (n.numOperands() != 2)
    return nullptr;
  return n.operand(0) == known ? n.operand(1) : n.operand(1) == known ? n.operand(0) : nullptr;
}

/// Given the producer of a cube, Result: x when it is Pow(x, 3), Mul(Mul(x,
/// x), x) or Mul(x, Mul(x, x)) (the inner Mul read only there), with its
/// nodes appended to `nodes`; null otherwise.
Value *cubeBase(Node *n, std::vector<Node *> &nodes) {
  if (!n || n->numOperands() != 2 || !n->operand(0) || !n->operand(1))
    return nullptr;
  if (n->is("Pow") && isNear(n->operand(1), 3.0)) {
    nodes.push_back(n);
    return n->operand(0);
  }
  if (!n->is("Mul"))
    return nullptr;
  for (size_t side = 0; side < 2; ++side) {
    Node *sq = producerOp(n->operand(side), "Mul");
    Value *x = n->operand(1 - side);
    if (sq && sq->numOperands() == 2 && sq->operand(0) == x && sq->operand(1) == x &&
        hasSingleNodeUse(n->operand(side))) {
      nodes.push_back(n);
      nodes.push_back(sq);
      return x;
    }
  }
  return nullptr;
}

/// The matched tail: `f(x)` (Erf or Tanh result) through `0.5 * x * (1 + f)`.
struct Tail {
  Node *last = nullptr;
  std::vector<Node *> nodes; ///< Tail nodes other than `last`.
};

/// Matches `y = 0.5 * x * (1 + f)` from f's producer; null reason = matched.
std::optional<Tail> matchTail(Node *f, Value *x, const char *&reason) {
  Node *addOne = singleUser(f->result(0));
  if (!addOne || operandBesideConstant(addOne, "Add", 1.0) != f->result(0)) {
    reason = "the Erf/Tanh result is not used only by an Add of 1";
    return std::nullopt;
  }
  Node *mul = singleUser(addOne->result(0));
  if (!mul || !mul->is("Mul")) {
    reason = "1 + f is not used only by a Mul";
    return std::nullopt;
  }
  Value *other = otherOperand(*mul, addOne->result(0));
  Tail tail;
  if (other == x) {
    // (x * (1 + f)) * 0.5
    Node *half = singleUser(mul->result(0));
    if (!half || operandBesideConstant(half, "Mul", 0.5) != mul->result(0)) {
      reason = "x * (1 + f) is not used only by a Mul by 0.5";
      return std::nullopt;
    }
    tail.last = half;
    tail.nodes = {addOne, mul};
    return tail;
  }
  Node *halfX = other ? other->definingNode() : nullptr;
  if (!halfX || !hasSingleNodeUse(other) || operandBesideConstant(halfX, "Mul", 0.5) != x) {
    reason = "the other factor is neither x nor x * 0.5";
    return std::nullopt;
  }
  tail.last = mul;
  tail.nodes = {addOne, halfX};
  return tail;
}

/// Null when no constant operand of `nodes` broadcasts the result beyond
/// x's rank; otherwise why.
const char *constantRankExceedsX(const std::vector<Node *> &nodes, const Value *x) {
  std::optional<Shape> xs = knownShape(x);
  for (const Node *n : nodes)
    for (size_t i = 0; n && i < n->numOperands(); ++i)
      if (TensorPtr t = n->operand(i) != x ? constantTensor(n->operand(i)) : nullptr) {
        if (!xs && t->rank() != 0)
          return "x's rank is unknown and a constant is not a scalar (it may raise the result's rank)";
        if (xs && t->rank() > static_cast<int64_t>(xs->size()))
          return "a constant's rank exceeds x's (it would broadcast the result to a higher rank)";
      }
  return nullptr;
}

/// Replaces the matched pattern by Gelu(x), or declines when a constant
/// would have broadcast the result to a higher rank than x's.
bool rewriteGelu(Node *root, Value *x, const Tail &tail, std::vector<Node *> head, bool tanh, Rewriter &rewriter) {
  std::vector<Node *> all = head;
  all.push_back(root);
  all.insert(all.end(), tail.nodes.begin(), tail.nodes.end());
  all.push_back(tail.last);
  if (const char *reason = constantRankExceedsX(all, x))
    return rewriter.notifyMatchFailure(root, reason);
  Node *gelu = rewriter.createNodeBefore(tail.last, "Gelu", {x}, {tail.last->result(0)->name() + "_gelu"});
  if (tanh)
    gelu->setAttr(Attribute::makeString("approximate", "tanh"));
  gelu->result(0)->setType(tail.last->result(0)->type());
  replaceFusedNode(tail.last, gelu->result(0), rewriter, tanh ? "Gelu(tanh)" : "Gelu", true);
  head.push_back(root);
  head.insert(head.end(), tail.nodes.begin(), tail.nodes.end());
  eraseDeadChain(head, rewriter);
  return true;
}

class FuseErfGelu : public Pattern {
public:
  FuseErfGelu() : Pattern("Erf", "fuse-gelu") {}

  bool matchAndRewrite(Node *erf, Rewriter &rewriter) const override {
    if (defaultOpset(*erf) < 20)
      return rewriter.notifyMatchFailure(erf, "opset < 20 has no Gelu");
    if (erf->numOperands() != 1 || !erf->operand(0) || !erf->result(0))
      return rewriter.notifyMatchFailure(erf, "malformed Erf");
    Node *scale = erf->operand(0)->definingNode();
    if (!hasSingleNodeUse(erf->operand(0)))
      return rewriter.notifyMatchFailure(erf, "the Erf input has other users");
    Value *x = operandBesideConstant(scale, "Div", M_SQRT2);
    if (!x || (scale->operand(0) != x))
      x = operandBesideConstant(scale, "Mul", M_SQRT1_2);
    if (!x)
      return rewriter.notifyMatchFailure(erf, "the Erf input is not x / sqrt(2) or x * (1/sqrt(2))");
    const char *reason = nullptr;
    std::optional<Tail> tail = matchTail(erf, x, reason);
    if (!tail)
      return rewriter.notifyMatchFailure(erf, reason);
    return rewriteGelu(erf, x, *tail, {scale}, false, rewriter);
  }
};

class FuseTanhGelu : public Pattern {
public:
  FuseTanhGelu() : Pattern("Tanh", "fuse-gelu") {}

  bool matchAndRewrite(Node *tanh, Rewriter &rewriter) const override {
    if (defaultOpset(*tanh) < 20)
      return rewriter.notifyMatchFailure(tanh, "opset < 20 has no Gelu");
    if (tanh->numOperands() != 1 || !tanh->operand(0) || !tanh->result(0))
      return rewriter.notifyMatchFailure(tanh, "malformed Tanh");
    // c = (x + 0.044715 * x^3) * sqrt(2/pi)
    Node *scale = tanh->operand(0)->definingNode();
    Value *inner = operandBesideConstant(scale, "Mul", std::sqrt(2.0 / M_PI));
    Node *add = inner ? inner->definingNode() : nullptr;
    if (!add || !add->is("Add") || !hasSingleNodeUse(tanh->operand(0)) || !hasSingleNodeUse(inner))
      return rewriter.notifyMatchFailure(tanh, "the Tanh input is not (x + ...) * sqrt(2/pi) used once");
    Node *cubeMul = nullptr;
    Value *x = nullptr;
    std::vector<Node *> cubeNodes;
    for (size_t side = 0; side < 2 && !x; ++side) {
      Value *cubic = add->operand(side);
      Node *m = cubic ? cubic->definingNode() : nullptr;
      Value *cube = operandBesideConstant(m, "Mul", 0.044715);
      std::vector<Node *> nodes;
      if (cube && hasSingleNodeUse(cubic) && hasSingleNodeUse(cube) &&
          cubeBase(cube->definingNode(), nodes) == add->operand(1 - side) && add->operand(1 - side)) {
        x = add->operand(1 - side);
        cubeMul = m;
        cubeNodes = nodes;
      }
    }
    if (!x)
      return rewriter.notifyMatchFailure(tanh, "the Add is not x + 0.044715 * Pow(x, 3) (or x * x * x)");
    const char *reason = nullptr;
    std::optional<Tail> tail = matchTail(tanh, x, reason);
    if (!tail)
      return rewriter.notifyMatchFailure(tanh, reason);
    std::vector<Node *> head{scale, add, cubeMul};
    head.insert(head.end(), cubeNodes.begin(), cubeNodes.end());
    return rewriteGelu(tanh, x, *tail, head, true, rewriter);
  }
};

class FuseGeluPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-gelu"; }
  std::string_view description() const override {
    return "Replace a decomposed GELU (erf or tanh form) by Gelu (opset >= 20)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<FuseErfGelu>();
    patterns.add<FuseTanhGelu>();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseGeluPass() { return std::make_unique<FuseGeluPass>(); }

} // namespace onnxslim
