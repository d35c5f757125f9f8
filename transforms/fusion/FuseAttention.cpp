//===- transforms/fusion/FuseAttention.cpp - Scaled dot-product attention -===//
//
// fuse-attention: the scaled dot-product attention that exporters write
// becomes one Attention (opset 23); the head split/merge around it is then
// absorbed into Attention's 3-D form.
//
//   Before (4-D, [B, H, S, D]):                 After:
//     kt = Transpose <perm = [0,1,3,2]> (k)       y = Attention <scale = c>
//          # or [0,2,3,1] of k_bshd (k is then           (q, k, v, mask)
//          #   Transpose <perm = [0,2,1,3]> (k_bshd))
//     s = MatMul(q, kt)        # q (or kt) may be Mul(q0, c) / Div(q0, 1/c)
//     t = Mul(s, c)            # or Div(s, 1/c); optional (c = 1)
//     u = Add(t, mask)         # or Add(Add(t, bias), mask) (the operand
//                              # is then bias + mask, AttentionMask.h), or
//                              # Where(bool_mask, t, -inf / <= -1e4), or
//                              # Where(hidden, -inf, t); optional (a positive
//                              # scale may follow a Where instead); the mask
//                              # operand is it, Not(hidden), is_causal or an
//                              # exact form of it (AttentionMask.h)
//     p = Softmax <axis = -1> (u)
//     y = MatMul(p, v)
//
//   Before (head split and merge):              After:
//     q = Transpose <perm = [0,2,1,3]>            y = Attention <q_num_heads = H,
//           (Reshape(q3, [B, S, H, D]))                 kv_num_heads = Hkv,
//     (k, v likewise with Hkv heads)                    scale = c> (q3, k3, v3, mask)
//     a = Attention(q, k, v, ..)
//     y = Reshape(Transpose <perm = [0,2,1,3]> (a), [B, S, H * Dv])
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - the model's default-domain opset is >= 23 (the opset is never raised);
//   - q, k, v are 4-D with known ranks, all float32 or all float16 (what
//     ONNX Runtime's Attention runs); the batch dims of q, k, v are one
//     dim (known equal, or copies of one dim: ValueUtils' sameDim); k and v have the same heads and length; q's heads are a
//     multiple of k's (grouped-query attention) and q and k have one head
//     size;
//   - the scale factors are one-element floating constants of rank <= 4
//     whose product, carried as `scale` (never assumed to be 1/sqrt(D)), is
//     a positive finite float (ONNX Runtime refuses scale <= 0);
//   - an additive mask has q's element type; a boolean mask comes from a
//     Where whose other branch is a constant <= -1e4 (a masked score); each
//     mask dim is 1 or the score's (the mask never enlarges the scores) and
//     its last dim is the key length (Attention would pad a shorter mask
//     with -inf); its rank is 2 to 4 and a row dim of 1 is expanded to the
//     known query length (ONNX Runtime requires both);
//   - the mask is one that Attention computes exactly on every input, rows
//     hidden whole included (AttentionMask.h says which and in what form:
//     causal masks over square scores become is_causal = 1, constant masks
//     must keep a visible key in every row, masks computed at run time
//     must have known finite values, raised above ONNX Runtime's hidden
//     sentinel where needed);
//   - Softmax is over the last axis;
//   - every intermediate is used only inside the pattern and is not a
//     graph output;
//   - head split/merge: Reshape of a 3-D [B, S, H*D] to [B, S, H, D] (known
//     H and D), Transpose [0,2,1,3], each used only there; the result goes
//     through Transpose [0,2,1,3] and a Reshape to [B, S, H * Dv] only.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/AttentionMask.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/fusion/NormFusionUtils.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <array>
#include <cmath>

namespace onnxslim {

namespace {

/// A one-element floating constant of rank <= 4, as a double.
std::optional<double> scalarConstant(const Value *v) {
  TensorPtr t = constantTensor(v);
  if (!t || t->numElements() != 1 || t->rank() > 4)
    return std::nullopt;
  std::optional<std::vector<double>> d = toDoubles(*t);
  return d ? std::optional<double>((*d)[0]) : std::nullopt;
}

/// Given `v`, when it is Mul(x, c) or Mul(c, x) or Div(x, c) with a scalar
/// constant c and `v` used once, Result: x, with `factor` multiplied by c
/// (or 1/c) and the node in `node`; null otherwise.
Value *stripScale(Value *v, double &factor, Node *&node) {
  Node *n = v ? v->definingNode() : nullptr;
  if (!n || n->numOperands() != 2 || !n->operand(0) || !n->operand(1) || !hasSingleNodeUse(v))
    return nullptr;
  if (n->is("Mul")) {
    for (size_t side = 0; side < 2; ++side)
      if (std::optional<double> c = scalarConstant(n->operand(side)); c && !constantTensor(n->operand(1 - side))) {
        factor *= *c, node = n;
        return n->operand(1 - side);
      }
  } else if (n->is("Div")) {
    if (std::optional<double> c = scalarConstant(n->operand(1)); c && *c != 0.0) {
      factor /= *c, node = n;
      return n->operand(0);
    }
  }
  return nullptr;
}

/// Whether `n` is a Transpose with permutation `perm`.
bool isTranspose(const Node *n, const std::vector<int64_t> &perm) {
  return n && n->is("Transpose") && n->numOperands() == 1 && n->operand(0) && n->attrInts("perm") == perm;
}

class FuseScaledDotProductAttention : public Pattern {
public:
  FuseScaledDotProductAttention() : Pattern("Softmax", "fuse-attention") {}

  bool matchAndRewrite(Node *softmax, Rewriter &rewriter) const override {
    if (defaultOpset(*softmax) < 23)
      return rewriter.notifyMatchFailure(softmax, "opset < 23 has no Attention");
    if (softmax->numOperands() != 1 || !softmax->operand(0) || !softmax->result(0))
      return rewriter.notifyMatchFailure(softmax, "malformed Softmax");
    int64_t axis = softmax->attrInt("axis", -1);
    if (axis != -1 && axis != 3)
      return rewriter.notifyMatchFailure(softmax, "the Softmax is not over the last axis");
    Node *pv = singleUser(softmax->result(0));
    if (!pv || !pv->is("MatMul") || pv->numOperands() != 2 || pv->operand(0) != softmax->result(0) ||
        !pv->operand(1) || !pv->result(0))
      return rewriter.notifyMatchFailure(softmax, "the Softmax result is not used only as MatMul(p, v)");
    Value *v = pv->operand(1);

    // Softmax input: optional mask, then optional scale, then MatMul(q, k^T).
    std::vector<Node *> chain{softmax};
    Value *u = softmax->operand(0);
    // A positive scale after a Where mask scales its fill too: the same
    // attention with the scale ahead of the mask.
    double postScale = 1.0;
    Node *postScaleNode = nullptr;
    if (Value *base = stripScale(u, postScale, postScaleNode); base && producerOp(base, "Where") && postScale > 0.0) {
      u = base;
      chain.push_back(postScaleNode);
    } else {
      postScale = 1.0;
    }
    AttentionMaskMatch mask;
    Value *scores = u;
    if (Node *n = u->definingNode(); n && hasSingleNodeUse(u) && (n->is("Add") || n->is("Where"))) {
      if (n->is("Add") && n->numOperands() == 2) {
        // The score side is the one that leads to the MatMul (through an optional scale).
        auto leadsToScores = [](Value *x) {
          double f = 1.0;
          Node *sn = nullptr;
          Value *base = stripScale(x, f, sn);
          return producerOp(x, "MatMul") || (base && producerOp(base, "MatMul"));
        };
        for (size_t side = 0; side < 2 && !mask.mask; ++side)
          if (leadsToScores(n->operand(side))) {
            scores = n->operand(side);
            mask.mask = n->operand(1 - side);
          }
        // Add(Add(scores, bias), mask): a bias ahead of the mask (T5).
        for (size_t side = 0; side < 2 && !mask.mask; ++side) {
          Node *inner = producerOp(n->operand(side), "Add");
          if (!inner || inner->numOperands() != 2 || !hasSingleNodeUse(n->operand(side)))
            continue;
          for (size_t s2 = 0; s2 < 2 && !mask.mask; ++s2)
            if (inner->operand(s2) && inner->operand(1 - s2) && leadsToScores(inner->operand(s2))) {
              scores = inner->operand(s2);
              mask.bias = inner->operand(1 - s2);
              mask.mask = n->operand(1 - side);
              chain.push_back(inner);
            }
        }
      } else if (n->is("Where") && n->numOperands() == 3) {
        // Where(visible, scores, fill), or masked_fill's Where(hidden, fill, scores).
        std::optional<double> fill = scalarConstant(n->operand(2)), fillFirst = scalarConstant(n->operand(1));
        bool isBool = knownElemType(n->operand(0)) == DataType::Bool;
        if (isBool && fill && *fill * postScale <= -1e4) {
          scores = n->operand(1);
          mask = {n->operand(0), true, false, *fill * postScale};
        } else if (isBool && fillFirst && *fillFirst * postScale <= -1e4) {
          scores = n->operand(2);
          mask = {n->operand(0), true, true, *fillFirst * postScale};
        } else {
          return rewriter.notifyMatchFailure(softmax, "the Where is not Where(bool_mask, scores, constant <= -1e4)");
        }
      }
      if (!mask.mask)
        return rewriter.notifyMatchFailure(softmax, "the Add has no MatMul-derived scores side");
      chain.push_back(n);
    }
    double scale = postScale;
    Node *scaleNode = nullptr;
    if (Value *base = stripScale(scores, scale, scaleNode)) {
      scores = base;
      chain.push_back(scaleNode);
    }
    Node *qk = producerOp(scores, "MatMul");
    if (!qk || qk->numOperands() != 2 || !hasSingleNodeUse(scores) || !qk->operand(0) || !qk->operand(1))
      return rewriter.notifyMatchFailure(softmax, "the scores are not a MatMul used only here (scale before mask, if any)");
    chain.push_back(qk);
    Value *q = qk->operand(0);
    Node *qScaleNode = nullptr;
    if (Value *base = stripScale(q, scale, qScaleNode)) {
      q = base;
      chain.push_back(qScaleNode);
    }
    // k^T (which may carry the scale too): a Transpose of k [0,1,3,2], or
    // [0,2,3,1] of k in [B, S, H, D].
    Value *kSide = qk->operand(1);
    Node *kScaleNode = nullptr;
    if (Value *base = stripScale(kSide, scale, kScaleNode)) {
      kSide = base;
      chain.push_back(kScaleNode);
    }
    Node *kt = kSide->definingNode();
    Value *kBshd = nullptr, *k = nullptr;
    if (isTranspose(kt, {0, 1, 3, 2}))
      k = kt->operand(0);
    else if (isTranspose(kt, {0, 2, 3, 1}))
      kBshd = kt->operand(0);
    else
      return rewriter.notifyMatchFailure(softmax, "the MatMul's right side is not a Transpose of k with perm [0,1,3,2] or [0,2,3,1]");
    chain.push_back(kt);

    // Shapes and types.
    std::optional<Shape> qs = knownShape(q), vs = knownShape(v), ks = knownShape(k ? k : kBshd);
    std::optional<DataType> dt = knownElemType(q);
    if (!qs || !ks || !vs || qs->size() != 4 || ks->size() != 4 || vs->size() != 4)
      return rewriter.notifyMatchFailure(softmax, "q, k or v is not known to be 4-D");
    if (kBshd)
      ks = Shape{(*ks)[0], (*ks)[2], (*ks)[1], (*ks)[3]};
    if (!dt || (*dt != DataType::Float && *dt != DataType::Float16) || knownElemType(v) != dt ||
        knownElemType(k ? k : kBshd) != dt)
      return rewriter.notifyMatchFailure(softmax, "q, k and v are not all float32 or all float16 (the types ONNX Runtime's Attention runs)");
    const Shape &Q = *qs, &K = *ks;
    // Dim i of k in [B, H, S, D] order, as a dim of the value that holds it.
    auto kDim = [&](size_t i) -> size_t { return kBshd ? std::array<size_t, 4>{0, 2, 1, 3}[i] : i; };
    Value *kv = k ? k : kBshd;
    if (!sameDim(q, 0, kv, kDim(0)) || !sameDim(q, 0, v, 0))
      return rewriter.notifyMatchFailure(softmax, "q, k and v are not known to have one batch dim");
    if (!sameDim(kv, kDim(1), v, 1) || !sameDim(kv, kDim(2), v, 2) || !sameDim(q, 3, kv, kDim(3)))
      return rewriter.notifyMatchFailure(softmax, "k and v heads/length or q and k head sizes differ or are unknown");
    bool headsFit = knownEqual(Q[1], K[1]) ||
                    (Q[1].isValue() && K[1].isValue() && K[1].getValue() > 0 && Q[1].getValue() % K[1].getValue() == 0);
    if (!headsFit)
      return rewriter.notifyMatchFailure(softmax, "q's heads are not a known multiple of k's");
    // ONNX Runtime refuses an Attention whose scale is not > 0.
    if (!(static_cast<float>(scale) > 0.0f) || !std::isfinite(static_cast<float>(scale)))
      return rewriter.notifyMatchFailure(softmax, "the scale is not a positive finite float (Attention needs scale > 0)");
    AttentionMaskPlan plan;
    if (mask.mask)
      if (const char *reason = planAttentionMask(mask, *dt, {Q[0], Q[1], Q[2], K[2]}, plan))
        return rewriter.notifyMatchFailure(softmax, reason);

    // Rewrite.
    if (kBshd) {
      Node *t = rewriter.createNodeBefore(qk, "Transpose", {kBshd}, {kBshd->name() + "_bhsd"});
      t->setAttr(Attribute::makeInts("perm", {0, 2, 1, 3}));
      t->result(0)->setType(Type::tensor(*dt, K));
      k = t->result(0);
    }
    Value *maskOperand = mask.mask ? materializeAttentionMask(mask, plan, *dt, Q[2], pv, rewriter) : nullptr;
    std::vector<Value *> operands{q, k, v};
    if (maskOperand)
      operands.push_back(maskOperand);
    Node *att = rewriter.createNodeBefore(pv, "Attention", operands, {pv->result(0)->name() + "_attention"});
    att->setAttr(Attribute::makeFloat("scale", static_cast<float>(scale)));
    if (mask.mask && plan.form == AttentionMaskPlan::Form::Causal)
      att->setAttr(Attribute::makeInt("is_causal", 1));
    att->result(0)->setType(pv->result(0)->type());
    replaceFusedNode(pv, att->result(0), rewriter, "Attention", true);
    eraseDeadChain(chain, rewriter);
    return true;
  }

};

/// Given a 4-D head view value, Result: the 3-D [B, S, H*D] value it splits
/// when it is Transpose <perm = [0,2,1,3]> (Reshape(x3, [B, S, H, D])) with
/// each step used once and known dims; also the head count and the nodes.
Value *headSplitSource(Value *v, int64_t &heads, std::vector<Node *> &nodes) {
  Node *t = v ? v->definingNode() : nullptr;
  if (!isTranspose(t, {0, 2, 1, 3}) || !hasSingleNodeUse(v))
    return nullptr;
  Node *r = producerOp(t->operand(0), "Reshape");
  if (!r || r->numOperands() < 1 || !r->operand(0) || !hasSingleNodeUse(t->operand(0)))
    return nullptr;
  std::optional<Shape> in = knownShape(r->operand(0)), out = knownShape(r->result(0));
  if (!in || !out || in->size() != 3 || out->size() != 4 || !sameDim(r->operand(0), 0, r->result(0), 0) ||
      !sameDim(r->operand(0), 1, r->result(0), 1) || !(*in)[2].isValue() || !(*out)[2].isValue() || !(*out)[3].isValue() ||
      (*in)[2].getValue() != (*out)[2].getValue() * (*out)[3].getValue())
    return nullptr;
  heads = (*out)[2].getValue();
  nodes.push_back(t);
  nodes.push_back(r);
  return r->operand(0);
}

class AbsorbAttentionHeads : public Pattern {
public:
  AbsorbAttentionHeads() : Pattern("Attention", "fuse-attention") {}

  bool matchAndRewrite(Node *att, Rewriter &rewriter) const override {
    if (att->numOperands() < 3 || att->numOperands() > 4 || att->numResults() != 1 || !att->result(0))
      return rewriter.notifyMatchFailure(att, "not an Attention with q, k, v (and a mask) and one result");
    if (att->attr("q_num_heads") || att->attr("softcap") ||
        att->attr("qk_matmul_output_mode"))
      return rewriter.notifyMatchFailure(att, "already 3-D, or with attributes this rewrite does not carry");
    int64_t hq = 0, hk = 0, hv = 0;
    std::vector<Node *> chain;
    Value *q3 = headSplitSource(att->operand(0), hq, chain);
    Value *k3 = headSplitSource(att->operand(1), hk, chain);
    Value *v3 = headSplitSource(att->operand(2), hv, chain);
    if (!q3 || !k3 || !v3 || hk != hv)
      return rewriter.notifyMatchFailure(att, "q, k and v are not all Transpose(Reshape(3-D)) head splits");
    Node *t = singleUser(att->result(0));
    if (!isTranspose(t, {0, 2, 1, 3}))
      return rewriter.notifyMatchFailure(att, "the result is not used only by a Transpose [0,2,1,3]");
    Node *r = singleUser(t->result(0));
    if (!r || !r->is("Reshape") || r->operand(0) != t->result(0) || !r->result(0))
      return rewriter.notifyMatchFailure(att, "the head merge is not a Reshape");
    std::optional<Shape> in = knownShape(t->result(0)), out = knownShape(r->result(0));
    if (!in || !out || in->size() != 4 || out->size() != 3 || !sameDim(t->result(0), 0, r->result(0), 0) ||
        !sameDim(t->result(0), 1, r->result(0), 1) || !(*in)[2].isValue() || !(*in)[3].isValue() || !(*out)[2].isValue() ||
        (*out)[2].getValue() != (*in)[2].getValue() * (*in)[3].getValue())
      return rewriter.notifyMatchFailure(att, "the head merge is not [B, S, H, Dv] -> [B, S, H * Dv]");
    // The default scale would be 1/sqrt(D) of the same D either way, but
    // the fusion always writes it; keep whatever it says.
    std::vector<Value *> operands{q3, k3, v3};
    if (att->numOperands() == 4 && att->operand(3))
      operands.push_back(att->operand(3));
    Node *att3 = rewriter.createNodeBefore(r, "Attention", operands, {r->result(0)->name() + "_attention"});
    if (att->attr("scale"))
      att3->setAttr(Attribute::makeFloat("scale", att->attrFloat("scale", 1.0f)));
    if (att->attr("is_causal"))
      att3->setAttr(Attribute::makeInt("is_causal", att->attrInt("is_causal", 0)));
    if (att->attr("softmax_precision"))
      att3->setAttr(Attribute::makeInt("softmax_precision", att->attrInt("softmax_precision", 1)));
    att3->setAttr(Attribute::makeInt("q_num_heads", hq));
    att3->setAttr(Attribute::makeInt("kv_num_heads", hk));
    att3->result(0)->setType(r->result(0)->type());
    replaceFusedNode(r, att3->result(0), rewriter, "Attention (3-D)", true);
    chain.push_back(t);
    chain.push_back(att);
    eraseDeadChain(chain, rewriter);
    return true;
  }
};

class FuseAttentionPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-attention"; }
  std::string_view description() const override {
    return "Replace softmax(q k^T * scale + mask) v by Attention and absorb the head split/merge (opset >= 23)";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override {
    patterns.add<FuseScaledDotProductAttention>();
    patterns.add<AbsorbAttentionHeads>();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttentionPass() { return std::make_unique<FuseAttentionPass>(); }

} // namespace onnxslim
