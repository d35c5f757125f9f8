//===- transforms/fusion/FuseRotaryEmbedding.cpp - Rotate-half RoPE into one op===//
//
// fuse-rotary-embedding: the rotate-half rotary position embedding that
// exporters write for Llama/GPT-NeoX-like models becomes one
// RotaryEmbedding (opset 23).
//
//   Before (x is [B, H, S, D]):                 After:
//     x1 = Slice(x, [0], [D/2], [-1])             y = RotaryEmbedding(x, cc, sc)
//     x2 = Slice(x, [D/2], [D], [-1])             # cc, sc: [B, S, D/2], the
//     r = Concat <axis = -1> (Neg(x2), x1)        # first halves of cos, sin
//     y = Add(Mul(x, cos), Mul(r, sin))           # broadcast over the batch
//
// Binary ops match with their operands in either order. Conditions
// (otherwise declined, with the reason under --debug-only):
//   - the model's default-domain opset is >= 23 (the opset is never raised);
//   - x is 4-D with known B, S and D, D even, and a floating element type;
//   - the Slices take [0, D/2) and [D/2, D) of the last axis (step 1);
//   - cos and sin are constants of x's element type and the same dims that
//     broadcast to x without enlarging it and vary at most over S and D
//     ([S, D], [1, 1, S, D], ...), with halves that repeat (cos[.., i] ==
//     cos[.., i + D/2]), which is what makes rotate-half a rotation;
//   - every intermediate is used only inside the pattern and is not a
//     graph output.
// A RotaryEmbedding of a head split (Transpose [0,2,1,3] of a Reshape
// [B, S, H*D] -> [B, S, H, D]) then works on the 3-D input with num_heads
// = H and the split moves below it, for fuse-attention to absorb.
// The interleaved (GPT-J) form, with the pairs of x's last axis:
//     r = Reshape(Concat <axis = -1> (Unsqueeze(Neg(x[.., 1::2]), -1),
//                                     Unsqueeze(x[.., 0::2], -1)), x's shape)
//     y = Add(Mul(x, cos), Mul(r, sin))    # cos[.., 2i] == cos[.., 2i+1]
// becomes RotaryEmbedding <interleaved = 1> likewise. A partial rotary
// (Phi): the rotation of x's first d dims (either form, d even, 0 < d < D)
// concatenated on the last axis with x's remaining dims, each Slice used
// once, is one RotaryEmbedding <rotary_embedding_dim = d> of x.
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/fusion/NormFusionUtils.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <array>

namespace onnxslim {

namespace {

/// Whether `n` is Slice(x, [start], [end], [last axis], [step]), where
/// `end` may be any number >= the dim when it reaches the end.
bool isLastAxisSlice(const Node *n, const Value *x, int64_t start, int64_t end, int64_t rank, int64_t dim,
                     int64_t step = 1) {
  if (!n || !n->is("Slice") || n->numOperands() < 4 || n->operand(0) != x || defaultOpset(*n) < 10)
    return false;
  std::optional<std::vector<int64_t>> s = constantInts(n->operand(1)), e = constantInts(n->operand(2)),
                                      a = constantInts(n->operand(3));
  if (!s || !e || !a || s->size() != 1 || e->size() != 1 || a->size() != 1)
    return false;
  if ((*a)[0] != -1 && (*a)[0] != rank - 1)
    return false;
  if (n->numOperands() >= 5 && n->operand(4)) {
    std::optional<std::vector<int64_t>> st = constantInts(n->operand(4));
    if (!st || st->size() != 1 || (*st)[0] != step)
      return false;
  } else if (step != 1) {
    return false;
  }
  int64_t e0 = (*e)[0];
  bool endOk = e0 == end || (end == dim && e0 >= dim);
  return (*s)[0] == start && endOk;
}

/// Null when x is a 4-D floating tensor with a known even D (set);
/// otherwise why not. (Constant tables also need a known B and S.)
const char *checkX(const Value *x, int64_t &D) {
  std::optional<Shape> xs = knownShape(x);
  std::optional<DataType> dt = knownElemType(x);
  if (!xs || xs->size() != 4 || !dt || !isFloatLike(*dt))
    return "x is not known to be a 4-D floating tensor";
  const Shape &X = *xs;
  if (!X[3].isValue() || X[3].getValue() % 2 != 0)
    return "x's head size is not a known even number";
  D = X[3].getValue();
  return nullptr;
}

/// Given a table value, Result: whether its two halves along the last axis
/// provably hold the same values: Cos or Sin of Concat <axis = -1> (f, f)
/// (what rotary_emb computes from its frequencies), through Casts between
/// floating types, scalar Muls (attention_scaling) and Identity.
bool halvesRepeat(const Value *t) {
  for (int depth = 0; t && depth < 8; ++depth) {
    Node *n = t->definingNode();
    if (!n || !n->isDefaultDomain() || n->numOperands() == 0 || !n->operand(0))
      return false;
    if (n->is("Identity") || (n->is("Cast") && knownElemType(n->operand(0)) &&
                              isFloatLike(*knownElemType(n->operand(0))))) {
      t = n->operand(0);
    } else if (n->is("Mul") && n->numOperands() == 2 && n->operand(1)) {
      TensorPtr c0 = constantTensor(n->operand(0)), c1 = constantTensor(n->operand(1));
      if (c1 && c1->numElements() == 1)
        t = n->operand(0);
      else if (c0 && c0->numElements() == 1)
        t = n->operand(1);
      else
        return false;
    } else if (n->is("Cos") || n->is("Sin")) {
      Node *c = producerOp(n->operand(0), "Concat");
      std::optional<Shape> cs = c ? knownShape(c->result(0)) : std::nullopt;
      if (!c || !cs || c->numOperands() != 2 || !c->operand(0) || c->operand(0) != c->operand(1))
        return false;
      int64_t axis = c->attrInt("axis", 0);
      return axis == -1 || axis == static_cast<int64_t>(cs->size()) - 1;
    } else {
      return false;
    }
  }
  return false;
}

/// A table computed at run time: t4 = Unsqueeze(t3, [1]) with t3 of dims
/// [B', S, D] (B' = B or 1) and x's element type `dt`, whose halves
/// repeat. Result: t3, or null with `reason`.
Value *runtimeTable(Value *t4, const Shape &X, int64_t D, DataType dt, const char *&reason) {
  Node *u = producerOp(t4, "Unsqueeze");
  std::optional<std::vector<int64_t>> axes =
      u && u->numOperands() == 2 ? constantInts(u->operand(1)) : std::nullopt;
  if (!u || !axes || axes->size() != 1 || (*axes)[0] != 1 || !u->operand(0)) {
    reason = "cos/sin is neither a constant nor Unsqueeze(table, 1) of a [B, S, D] table";
    return nullptr;
  }
  Value *t3 = u->operand(0);
  std::optional<Shape> ts = knownShape(t3);
  if (!ts || ts->size() != 3 || !(*ts)[2].isValue() || (*ts)[2].getValue() != D || !knownEqual((*ts)[1], X[2]) ||
      !(knownEqual((*ts)[0], X[0]) || ((*ts)[0].isValue() && (*ts)[0].getValue() == 1))) {
    reason = "the cos/sin table is not [B or 1, S, D] for x's B, S and D";
    return nullptr;
  }
  if (knownElemType(t3) != dt) {
    reason = "the cos/sin table is not of x's element type";
    return nullptr;
  }
  if (!halvesRepeat(t3)) {
    reason = "the cos/sin table's halves are not provably equal (Cos/Sin of Concat(f, f))";
    return nullptr;
  }
  return t3;
}

/// Given the cos and sin values, Result: their first halves (or even
/// entries, when interleaved) as the [B, S, D/2] caches of RotaryEmbedding
/// (repeated over the batch) when both are constants as the conditions
/// say; nullopt with `reason`.
std::optional<std::array<std::vector<double>, 2>> cachesOf(const Value *cos, const Value *sin, DataType dt, int64_t B,
                                                           int64_t S, int64_t D, bool interleaved, const char *&reason) {
  std::array<std::vector<double>, 2> caches;
  const Value *tables[2] = {cos, sin};
  for (size_t k = 0; k < 2; ++k) {
    TensorPtr t = constantTensor(tables[k]);
    std::optional<std::vector<double>> vals = t && t->dtype() == dt ? toDoubles(*t) : std::nullopt;
    if (!vals) {
      reason = "cos/sin is not a constant of x's element type";
      return std::nullopt;
    }
    std::vector<int64_t> dims = t->dims();
    if (dims.size() > 4 || dims.empty() || dims.back() != D) {
      reason = "cos/sin's last dim is not the head size (or its rank exceeds 4)";
      return std::nullopt;
    }
    int64_t rows = dims.size() >= 2 ? dims[dims.size() - 2] : 1;
    for (size_t i = 0; i + 2 < dims.size(); ++i)
      if (dims[i] != 1) {
        reason = "cos/sin varies over the batch or the heads";
        return std::nullopt;
      }
    if (rows != S && rows != 1) {
      reason = "cos/sin's row dim is neither the sequence length nor 1";
      return std::nullopt;
    }
    int64_t half = D / 2;
    std::vector<double> &out = caches[k];
    for (int64_t s = 0; s < S; ++s) {
      int64_t r = rows == 1 ? 0 : s;
      for (int64_t i = 0; i < half; ++i) {
        size_t i1 = static_cast<size_t>(r * D + (interleaved ? 2 * i : i));
        size_t i2 = static_cast<size_t>(r * D + (interleaved ? 2 * i + 1 : i + half));
        double a = (*vals)[i1], b = (*vals)[i2];
        if (a != b) {
          reason = interleaved ? "cos/sin's pairs differ (not an interleaved rotary table)"
                               : "cos/sin's two halves differ (not a rotate-half table)";
          return std::nullopt;
        }
        out.push_back(a);
      }
    }
    size_t one = out.size();
    for (int64_t b = 1; b < B; ++b)
      out.insert(out.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(one));
  }
  return caches;
}

/// Given the root, x (checked by checkX), the rotated value and the nodes
/// that made it, Execute: matches y = Add(Mul(x, cos), Mul(rot, sin)) and
/// replaces it by RotaryEmbedding, Result: whether it did.
bool fuseRope(Node *root, Value *x, Value *rot, const std::vector<Node *> &head, bool interleaved,
              Rewriter &rewriter) {
  const Shape X = *knownShape(x);
  DataType dt = *knownElemType(x);
  int64_t D = X[3].getValue(), half = D / 2;
  Node *mulSin = singleUser(rot);
  Value *sin = mulSin && mulSin->is("Mul") ? otherOperand(*mulSin, rot) : nullptr;
  Node *add = sin && mulSin->result(0) ? singleUser(mulSin->result(0)) : nullptr;
  Value *xcos = add && add->is("Add") && add->result(0) ? otherOperand(*add, mulSin->result(0)) : nullptr;
  Node *mulCos = producerOp(xcos, "Mul");
  Value *cos = mulCos ? otherOperand(*mulCos, x) : nullptr;
  if (!cos || !hasSingleNodeUse(xcos))
    return rewriter.notifyMatchFailure(root, "not Add(Mul(x, cos), Mul(rotated, sin)) with each product used once");
  const char *reason = nullptr;
  Graph &graph = *root->graph();
  Value *cosCache = nullptr, *sinCache = nullptr;
  if (constantTensor(cos) || constantTensor(sin)) {
    if (!X[0].isValue() || !X[2].isValue())
      return rewriter.notifyMatchFailure(root, "constant cos/sin need x's batch and length known (for the caches)");
    int64_t B = X[0].getValue(), S = X[2].getValue();
    std::optional<std::array<std::vector<double>, 2>> caches = cachesOf(cos, sin, dt, B, S, D, interleaved, reason);
    if (!caches)
      return rewriter.notifyMatchFailure(root, reason);
    // Rewrite: caches [B, S, D/2].
    cosCache =
        materializeConstant(rewriter, graph, add, cos->name() + "_cache", fromDoubles(dt, {B, S, half}, (*caches)[0]));
    sinCache =
        materializeConstant(rewriter, graph, add, sin->name() + "_cache", fromDoubles(dt, {B, S, half}, (*caches)[1]));
  } else {
    if (interleaved)
      return rewriter.notifyMatchFailure(root, "an interleaved table computed at run time is not matched");
    Value *cos3 = runtimeTable(cos, X, D, dt, reason);
    Value *sin3 = cos3 ? runtimeTable(sin, X, D, dt, reason) : nullptr;
    if (!cos3 || !sin3)
      return rewriter.notifyMatchFailure(root, reason);
    // Rewrite: caches = first halves of the tables [B', S, D/2], expanded
    // to x's batch when B' is 1.
    bool expand = !knownEqual(*knownShape(cos3)->begin(), X[0]) || !knownEqual(*knownShape(sin3)->begin(), X[0]);
    auto ints = [&](std::string_view name, std::vector<int64_t> v) {
      return materializeConstant(rewriter, graph, add, std::string(name),
                                 Tensor::fromValues<int64_t>(DataType::Int64, {static_cast<int64_t>(v.size())}, v));
    };
    Value *target = nullptr;
    if (expand) {
      Node *bs = rewriter.createNodeBefore(add, "Shape", {x}, {x->name() + "_batch"});
      bs->setAttr(Attribute::makeInt("start", 0));
      bs->setAttr(Attribute::makeInt("end", 1));
      bs->result(0)->setType(Type::tensor(DataType::Int64, Shape{Dim::value(1)}));
      Node *cat = rewriter.createNodeBefore(add, "Concat", {bs->result(0), ints(x->name() + "_rows", {1, 1})},
                                            {x->name() + "_cache_shape"});
      cat->setAttr(Attribute::makeInt("axis", 0));
      cat->result(0)->setType(Type::tensor(DataType::Int64, Shape{Dim::value(3)}));
      target = cat->result(0);
    }
    auto cacheOf = [&](Value *t3) {
      Node *sl = rewriter.createNodeBefore(
          add, "Slice", {t3, ints(t3->name() + "_from", {0}), ints(t3->name() + "_to", {half}), ints(t3->name() + "_axis", {-1})},
          {t3->name() + "_half"});
      Shape hs = *knownShape(t3);
      hs[2] = Dim::value(half);
      sl->result(0)->setType(Type::tensor(dt, hs));
      if (!expand)
        return sl->result(0);
      Node *e = rewriter.createNodeBefore(add, "Expand", {sl->result(0), target}, {t3->name() + "_cache"});
      e->result(0)->setType(Type::tensor(dt, Shape{X[0], hs[1], hs[2]}));
      return e->result(0);
    };
    cosCache = cacheOf(cos3);
    sinCache = cacheOf(sin3);
  }
  Node *rope = rewriter.createNodeBefore(add, "RotaryEmbedding", {x, cosCache, sinCache}, {add->result(0)->name() + "_rope"});
  if (interleaved)
    rope->setAttr(Attribute::makeInt("interleaved", 1));
  rope->result(0)->setType(add->result(0)->type());
  replaceFusedNode(add, rope->result(0), rewriter, interleaved ? "RotaryEmbedding(interleaved)" : "RotaryEmbedding", true);
  std::vector<Node *> chain = head;
  chain.push_back(mulCos);
  chain.push_back(mulSin);
  eraseDeadChain(chain, rewriter);
  return true;
}

class FuseRotaryEmbeddingPattern : public Pattern {
public:
  FuseRotaryEmbeddingPattern() : Pattern("Neg", "fuse-rotary-embedding") {}

  bool matchAndRewrite(Node *neg, Rewriter &rewriter) const override {
    if (defaultOpset(*neg) < 23)
      return rewriter.notifyMatchFailure(neg, "opset < 23 has no RotaryEmbedding");
    if (neg->numOperands() != 1 || !neg->operand(0) || !neg->result(0))
      return rewriter.notifyMatchFailure(neg, "malformed Neg");
    Node *slice2 = producerOp(neg->operand(0), "Slice");
    Node *concat = singleUser(neg->result(0));
    if (!slice2 || !concat || !concat->is("Concat") || concat->numOperands() != 2 ||
        concat->operand(0) != neg->result(0) || !concat->operand(1) || !concat->result(0))
      return rewriter.notifyMatchFailure(neg, "not Concat(Neg(Slice(..)), ..) with the Neg used once");
    Value *x = slice2->operand(0);
    Node *slice1 = producerOp(concat->operand(1), "Slice");
    if (!slice1 || slice1->operand(0) != x || !hasSingleNodeUse(slice1->result(0)) ||
        !hasSingleNodeUse(slice2->result(0)))
      return rewriter.notifyMatchFailure(neg, "the Concat is not (Neg(x2), x1) of two Slices of one x used once");
    int64_t D = 0;
    if (const char *reason = checkX(x, D))
      return rewriter.notifyMatchFailure(neg, reason);
    int64_t caxis = concat->attrInt("axis", 0);
    if ((caxis != -1 && caxis != 3) || !isLastAxisSlice(slice1, x, 0, D / 2, 4, D) ||
        !isLastAxisSlice(slice2, x, D / 2, D, 4, D))
      return rewriter.notifyMatchFailure(neg, "the Slices/Concat are not the two halves of x's last axis");
    return fuseRope(neg, x, concat->result(0), {concat, neg, slice1, slice2}, false, rewriter);
  }
};

class FuseInterleavedRotaryEmbedding : public Pattern {
public:
  FuseInterleavedRotaryEmbedding() : Pattern("Neg", "fuse-rotary-embedding") {}

  bool matchAndRewrite(Node *neg, Rewriter &rewriter) const override {
    if (defaultOpset(*neg) < 23)
      return rewriter.notifyMatchFailure(neg, "opset < 23 has no RotaryEmbedding");
    if (neg->numOperands() != 1 || !neg->operand(0) || !neg->result(0))
      return rewriter.notifyMatchFailure(neg, "malformed Neg");
    // rot = Reshape(Concat <axis = -1> (Unsqueeze(Neg(x_odd), -1), Unsqueeze(x_even, -1)), x's shape)
    Node *slice2 = producerOp(neg->operand(0), "Slice");
    Node *unsq2 = singleUser(neg->result(0));
    Node *concat = unsq2 && unsq2->is("Unsqueeze") && unsq2->result(0) ? singleUser(unsq2->result(0)) : nullptr;
    if (!slice2 || !isUnsqueezeLast(unsq2, 4) || !concat || !concat->is("Concat") || concat->numOperands() != 2 ||
        concat->operand(0) != unsq2->result(0) || !concat->operand(1) || !concat->result(0))
      return rewriter.notifyMatchFailure(neg, "not Concat(Unsqueeze(Neg(Slice(..)), -1), ..) with each step used once");
    Node *unsq1 = concat->operand(1)->definingNode();
    Node *slice1 = unsq1 && unsq1->is("Unsqueeze") && unsq1->operand(0) ? producerOp(unsq1->operand(0), "Slice") : nullptr;
    Value *x = slice2->operand(0);
    if (!isUnsqueezeLast(unsq1, 4) || !slice1 || slice1->operand(0) != x || !hasSingleNodeUse(concat->operand(1)) ||
        !hasSingleNodeUse(unsq1->operand(0)) || !hasSingleNodeUse(slice2->result(0)))
      return rewriter.notifyMatchFailure(neg, "the Concat's second input is not Unsqueeze(Slice(x)) used once");
    Node *reshape = singleUser(concat->result(0));
    if (!reshape || !reshape->is("Reshape") || reshape->operand(0) != concat->result(0) || !reshape->result(0))
      return rewriter.notifyMatchFailure(neg, "the pairs are not flattened by a Reshape");
    int64_t D = 0;
    if (const char *reason = checkX(x, D))
      return rewriter.notifyMatchFailure(neg, reason);
    int64_t caxis = concat->attrInt("axis", 0);
    std::optional<Shape> rs = knownShape(reshape->result(0));
    if ((caxis != -1 && caxis != 4) || !isLastAxisSlice(slice1, x, 0, D, 4, D, 2) ||
        !isLastAxisSlice(slice2, x, 1, D, 4, D, 2) || !rs || *rs != *knownShape(x))
      return rewriter.notifyMatchFailure(neg, "not the even/odd pairs of x's last axis flattened back to x's shape");
    return fuseRope(neg, x, reshape->result(0), {reshape, concat, unsq1, unsq2, neg, slice1, slice2}, true, rewriter);
  }

private:
  /// Whether `n` is Unsqueeze of the new last axis of a rank-`rank` result.
  static bool isUnsqueezeLast(const Node *n, int64_t rank) {
    if (!n || !n->is("Unsqueeze") || !n->operand(0) || !n->result(0))
      return false;
    std::optional<std::vector<int64_t>> axes =
        defaultOpset(*n) >= 13 ? (n->numOperands() == 2 ? constantInts(n->operand(1)) : std::nullopt)
                               : std::optional<std::vector<int64_t>>(n->attrInts("axes"));
    return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == rank);
  }
};

/// A rotary embedding of the first d dims of x's last axis, concatenated
/// with the rest (Phi's partial rotary), is one RotaryEmbedding with
/// rotary_embedding_dim = d:
///   Concat <axis = -1> (RotaryEmbedding(Slice(x, [0], [d], [-1]), c, s), Slice(x, [d], [D], [-1]))
///   -> RotaryEmbedding <rotary_embedding_dim = d> (x, c, s)
class AbsorbPartialRotary : public Pattern {
public:
  AbsorbPartialRotary() : Pattern("Concat", "fuse-rotary-embedding") {}

  bool matchAndRewrite(Node *concat, Rewriter &rewriter) const override {
    if (concat->numOperands() != 2 || !concat->operand(0) || !concat->operand(1) || !concat->result(0))
      return rewriter.notifyMatchFailure(concat, "not a Concat of two values");
    Node *rope = producerOp(concat->operand(0), "RotaryEmbedding");
    if (!rope || rope->numOperands() != 3 || !rope->operand(0) || rope->attr("num_heads") ||
        rope->attr("rotary_embedding_dim") || !hasSingleNodeUse(concat->operand(0)))
      return rewriter.notifyMatchFailure(concat, "the first input is not a 4-D RotaryEmbedding (no position_ids, no partial dim) used only here");
    Node *head = producerOp(rope->operand(0), "Slice");
    Node *tail = producerOp(concat->operand(1), "Slice");
    if (!head || !tail || head->operand(0) != tail->operand(0) || !hasSingleNodeUse(rope->operand(0)) ||
        !hasSingleNodeUse(concat->operand(1)))
      return rewriter.notifyMatchFailure(concat, "not the rotated head and the tail of one x, each used once");
    Value *x = head->operand(0);
    int64_t D = 0;
    if (const char *reason = checkX(x, D))
      return rewriter.notifyMatchFailure(concat, reason);
    std::optional<Shape> hs = knownShape(rope->operand(0));
    int64_t caxis = concat->attrInt("axis", 0);
    if (!hs || hs->size() != 4 || !(*hs)[3].isValue())
      return rewriter.notifyMatchFailure(concat, "the rotated head has no known last dim");
    int64_t d = (*hs)[3].getValue();
    if ((caxis != -1 && caxis != 3) || d <= 0 || d >= D || d % 2 != 0 || !isLastAxisSlice(head, x, 0, d, 4, D) ||
        !isLastAxisSlice(tail, x, d, D, 4, D))
      return rewriter.notifyMatchFailure(concat, "not [0, d) rotated and [d, D) kept of x's last axis, d even");
    Node *fused = rewriter.createNodeBefore(concat, "RotaryEmbedding", {x, rope->operand(1), rope->operand(2)},
                                            {concat->result(0)->name() + "_rotary"});
    if (rope->attr("interleaved"))
      fused->setAttr(Attribute::makeInt("interleaved", rope->attrInt("interleaved", 0)));
    fused->setAttr(Attribute::makeInt("rotary_embedding_dim", d));
    fused->result(0)->setType(x->type());
    replaceFusedNode(concat, fused->result(0), rewriter, "RotaryEmbedding (partial)", true);
    eraseDeadChain({rope, head, tail}, rewriter);
    return true;
  }
};

/// Moves a head split below a 4-D RotaryEmbedding, which then works on the
/// 3-D [B, S, H*D] input with num_heads = H, so that fuse-attention can
/// absorb the split into Attention's 3-D form:
///   RotaryEmbedding(Transpose <perm = [0,2,1,3]> (Reshape(x3, [B,S,H,D])), c, s)
///   -> Transpose <perm = [0,2,1,3]> (Reshape(RotaryEmbedding <num_heads = H> (x3, c, s), [B,S,H,D]))
class SinkHeadSplitBelowRotary : public Pattern {
public:
  SinkHeadSplitBelowRotary() : Pattern("RotaryEmbedding", "fuse-rotary-embedding") {}

  bool matchAndRewrite(Node *rope, Rewriter &rewriter) const override {
    if (rope->numOperands() != 3 || !rope->operand(0) || !rope->result(0) || rope->attr("num_heads"))
      return rewriter.notifyMatchFailure(rope, "not a 4-D RotaryEmbedding without position_ids");
    Node *t = rope->operand(0)->definingNode();
    if (!t || !t->is("Transpose") || t->attrInts("perm") != std::vector<int64_t>{0, 2, 1, 3} ||
        !hasSingleNodeUse(rope->operand(0)))
      return rewriter.notifyMatchFailure(rope, "the input is not a Transpose [0,2,1,3] used only here");
    Node *r = producerOp(t->operand(0), "Reshape");
    if (!r || r->numOperands() != 2 || !r->operand(0) || !hasSingleNodeUse(t->operand(0)))
      return rewriter.notifyMatchFailure(rope, "the Transpose input is not a Reshape used only here");
    std::optional<Shape> in = knownShape(r->operand(0)), out = knownShape(r->result(0));
    if (!in || !out || in->size() != 3 || out->size() != 4 || !(*out)[2].isValue() || !(*out)[3].isValue() ||
        !(*in)[2].isValue() || (*in)[2].getValue() != (*out)[2].getValue() * (*out)[3].getValue() ||
        (*in)[0] != (*out)[0] || (*in)[1] != (*out)[1] || (*in)[0].isUnknown() || (*in)[1].isUnknown())
      return rewriter.notifyMatchFailure(rope, "the Reshape is not a head split [B, S, H*D] -> [B, S, H, D]");
    Node *rope3 = rewriter.createNodeBefore(rope, "RotaryEmbedding", {r->operand(0), rope->operand(1), rope->operand(2)},
                                            {rope->result(0)->name() + "_3d"});
    if (rope->attr("interleaved"))
      rope3->setAttr(Attribute::makeInt("interleaved", rope->attrInt("interleaved", 0)));
    if (rope->attr("rotary_embedding_dim"))
      rope3->setAttr(Attribute::makeInt("rotary_embedding_dim", rope->attrInt("rotary_embedding_dim", 0)));
    rope3->setAttr(Attribute::makeInt("num_heads", (*out)[2].getValue()));
    rope3->result(0)->setType(r->operand(0)->type());
    Node *r2 = rewriter.createNodeBefore(rope, "Reshape", {rope3->result(0), r->operand(1)}, {rope->result(0)->name() + "_heads"});
    r2->result(0)->setType(r->result(0)->type());
    Node *t2 = rewriter.createNodeBefore(rope, "Transpose", {r2->result(0)}, {rope->result(0)->name() + "_bhsd"});
    t2->setAttr(Attribute::makeInts("perm", {0, 2, 1, 3}));
    t2->result(0)->setType(rope->result(0)->type());
    replaceFusedNode(rope, t2->result(0), rewriter, "RotaryEmbedding (3-D)", true);
    eraseDeadChain({t, r}, rewriter);
    return true;
  }
};

class FuseRotaryEmbeddingPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-rotary-embedding"; }
  std::string_view description() const override {
    return "Replace a rotate-half rotary embedding by RotaryEmbedding (opset >= 23)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<FuseRotaryEmbeddingPattern>();
    patterns.add<FuseInterleavedRotaryEmbedding>();
    patterns.add<AbsorbPartialRotary>();
    patterns.add<SinkHeadSplitBelowRotary>();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseRotaryEmbeddingPass() { return std::make_unique<FuseRotaryEmbeddingPass>(); }

} // namespace onnxslim
