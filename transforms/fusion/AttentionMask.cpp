//===- transforms/fusion/AttentionMask.cpp - Masks Attention can take exactly ===//
//
// The shape checks ONNX Runtime needs, the causal forms that become
// is_causal, the value sets of masks computed at run time, and the exact
// forms of AttentionMask.h.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/AttentionMask.h"

#include "transforms/folding/FoldUtils.h"
#include "transforms/fusion/FusionUtils.h"
#include "transforms/PatternMatch.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace onnxslim {

namespace {

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Null when the mask's type and dims suit Attention for scores of dims
/// `scores` ([B, H, Sq, Skv]); otherwise why not. ONNX Runtime wants a mask
/// of rank 2 to 4 whose row dim is Sq: `expandRows` says that a row dim of
/// 1 must be expanded to the known Sq first.
/// The shape of the mask operand: the mask's, or the broadcast of the bias
/// and the mask when both are there (nullopt when not provable).
std::optional<Shape> operandShape(const AttentionMaskMatch &m) {
  std::optional<Shape> ms = m.mask ? knownShape(m.mask) : std::nullopt;
  if (!m.bias)
    return ms;
  std::optional<Shape> bs = knownShape(m.bias);
  if (!m.mask || !bs)
    return m.mask ? std::nullopt : bs;
  if (!ms)
    return std::nullopt;
  const Shape &a = ms->size() >= bs->size() ? *ms : *bs, &b = ms->size() >= bs->size() ? *bs : *ms;
  Shape out = a;
  for (size_t i = 0; i < b.size(); ++i) {
    Dim &o = out[a.size() - b.size() + i];
    const Dim &d = b[i];
    if (d.isValue() && d.getValue() == 1)
      continue;
    if (o.isValue() && o.getValue() == 1)
      o = d;
    else if (!knownEqual(o, d))
      return std::nullopt;
  }
  return out;
}

const char *checkShape(const AttentionMaskMatch &m, DataType dt, const Shape &scores, bool &expandRows) {
  std::optional<Shape> ms = operandShape(m);
  std::optional<DataType> mt = knownElemType(m.mask ? m.mask : m.bias);
  if (m.bias && (m.boolean || knownElemType(m.bias) != dt))
    return "the bias added to the scores is not of q's element type, or the mask after it is boolean";
  if (!ms || !mt || *mt != (m.boolean ? DataType::Bool : dt))
    return "the mask's shape or element type is unknown or not q's (bool for a Where)";
  if (ms->size() < 2 || ms->size() > 4)
    return "the mask's rank is not 2 to 4";
  for (size_t i = 0; i < ms->size(); ++i) {
    const Dim &md = (*ms)[ms->size() - 1 - i];
    const Dim &s = scores[3 - i];
    bool last = i == 0;
    if (knownEqual(md, s))
      continue;
    if (!last && md.isValue() && md.getValue() == 1) {
      if (i == 1 && !s.isValue())
        return "the mask broadcasts over the query rows and the query length is not a known number";
      expandRows = expandRows || i == 1;
      continue;
    }
    return last ? "the mask's last dim is not the key length (Attention pads a shorter mask with -inf)"
                : "the mask does not broadcast to the scores without enlarging them";
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Causal masks
//===----------------------------------------------------------------------===//

/// A one-element integer constant, as an int64.
std::optional<int64_t> scalarInt(const Value *v) {
  std::optional<std::vector<int64_t>> c = constantInts(v);
  return c && c->size() == 1 ? std::optional<int64_t>((*c)[0]) : std::nullopt;
}

/// Whether `v` is ConstantOfShape with a nonzero fill (all ones as a mask).
bool isFilledNonzero(const Value *v) {
  Node *n = producerOp(v, "ConstantOfShape");
  const Attribute *a = n ? n->attr("value") : nullptr;
  std::optional<std::vector<double>> d = a && a->t ? toDoubles(*a->t) : std::nullopt;
  return d && d->size() == 1 && (*d)[0] != 0.0;
}

/// For a Range(0, n, 1) index vector x (or an Unsqueeze of it), Result: the
/// axis of a 2-D [S, S] mask it runs along (0: the query row i, for
/// Unsqueeze(x, -1 or 1); 1: the key column j, for x or Unsqueeze(x, 0));
/// nullopt otherwise.
std::optional<int> indexAxis(const Value *v) {
  int axis = 1;
  if (Node *u = producerOp(v, "Unsqueeze")) {
    std::optional<std::vector<int64_t>> axes =
        u->numOperands() == 2 ? constantInts(u->operand(1)) : std::optional<std::vector<int64_t>>(u->attrInts("axes"));
    if (!axes || axes->size() != 1)
      return std::nullopt;
    axis = (*axes)[0] == 0 ? 1 : ((*axes)[0] == 1 || (*axes)[0] == -1) ? 0 : -1;
    v = u->operand(0);
  }
  Node *r = producerOp(v, "Range");
  if (axis < 0 || !r || r->numOperands() != 3 || scalarInt(r->operand(0)) != 0 || scalarInt(r->operand(2)) != 1)
    return std::nullopt;
  return axis;
}

/// Whether the boolean `mask`, read as visible-where-true (or hidden-where-
/// true when `inverted`), is built as the causal mask of a 2-D [S, S]: a
/// Trilu of ones (lower with k = 0 visible, upper with k = 1 hidden, under
/// an optional Cast to bool), or a comparison of key column j and query row
/// i from Range(0, S, 1) (j <= i visible, j > i hidden). The caller checked
/// the [S, S] shape, which makes both index vectors 0 .. S-1.
bool isCausalStructure(const Value *mask, bool inverted) {
  if (Node *c = producerOp(mask, "Cast"); c && c->attrInt("to", 0) == static_cast<int64_t>(DataType::Bool))
    mask = c->operand(0);
  if (Node *t = producerOp(mask, "Trilu")) {
    std::optional<int64_t> k = t->numOperands() > 1 && t->operand(1) ? scalarInt(t->operand(1)) : 0;
    bool upper = t->attrInt("upper", 1) != 0;
    return isFilledNonzero(t->operand(0)) && (inverted ? upper && k == 1 : !upper && k == 0);
  }
  Node *cmp = mask ? mask->definingNode() : nullptr;
  if (!cmp || cmp->numOperands() != 2 ||
      !(cmp->is("Less") || cmp->is("LessOrEqual") || cmp->is("Greater") || cmp->is("GreaterOrEqual")))
    return false;
  std::optional<int> a = indexAxis(cmp->operand(0)), b = indexAxis(cmp->operand(1));
  if (!a || !b || *a == *b)
    return false;
  // Written as `j OP i` (j the key column): swapping the sides flips OP.
  bool colFirst = *a == 1;
  bool less = cmp->is("Less") || cmp->is("LessOrEqual"), orEqual = cmp->is("LessOrEqual") || cmp->is("GreaterOrEqual");
  bool jLessSide = less == colFirst; // j < i or j <= i
  bool visibleForm = jLessSide && orEqual;  // j <= i
  bool hiddenForm = !jLessSide && !orEqual; // j > i
  return inverted ? hiddenForm : visibleForm;
}

/// Whether the mask is exactly the causal mask of scores [B, H, S, S] with
/// q and kv lengths known equal: every leading dim 1, the last two S, and
/// visible (true, additive 0) exactly where key j <= query i, masked (false,
/// additive <= -1e4 or -inf) elsewhere; a constant, or a Trilu / Range
/// comparison built on the sequence length. Attention-23 aligns is_causal
/// upper-left, which equals the lower-right alignment of a KV cache only
/// when Sq == Skv, hence the condition.
bool isCausalMask(const AttentionMaskMatch &m, const Dim &sq, const Dim &skv) {
  std::optional<Shape> ms = knownShape(m.mask);
  if (!knownEqual(sq, skv) || !ms || ms->size() < 2 || !knownEqual((*ms)[ms->size() - 2], sq) ||
      !knownEqual(ms->back(), skv))
    return false;
  for (size_t i = 0; i + 2 < ms->size(); ++i)
    if (!(*ms)[i].isValue() || (*ms)[i].getValue() != 1)
      return false;
  TensorPtr t = constantTensor(m.mask);
  if (!t)
    return m.boolean && ms->size() == 2 && isCausalStructure(m.mask, m.inverted);
  if (!sq.isValue() || !t->isConsistent() || t->numElements() != sq.getValue() * sq.getValue())
    return false;
  int64_t n = sq.getValue();
  std::optional<std::vector<double>> d;
  if (!m.boolean && !(d = toDoubles(*t)))
    return false;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      size_t at = static_cast<size_t>(i * n + j);
      bool visible = m.boolean ? (t->rawData()[at] != 0) != m.inverted : (*d)[at] == 0.0;
      bool hidden = m.boolean ? !visible : (*d)[at] <= -1e4;
      if (j <= i ? !visible : !hidden)
        return false;
    }
  return true;
}

//===----------------------------------------------------------------------===//
// Value sets
//===----------------------------------------------------------------------===//

/// The values a tensor can hold, sorted and distinct, when they are few and known.
using ValueSet = std::vector<double>;
constexpr size_t kMaxValues = 8;
constexpr int kMaxDepth = 32;

/// The most negative finite value of a floating type.
double lowestOf(DataType t) {
  switch (t) {
  case DataType::Float16: return -65504.0;
  case DataType::BFloat16: return -3.3895313892515355e38;
  case DataType::Double: return -DBL_MAX;
  default: return -FLT_MAX;
  }
}

/// `x` rounded to the element type `t` as the runtime stores it (overflow
/// to infinity included); integers and bool are kept as they are.
double roundTo(DataType t, double x) {
  if (t == DataType::Float) {
    // Past FLT_MAX by half an ulp (2^103) rounds to infinity; the cast of a
    // double outside float's range is not defined, so this is done by hand.
    if (std::isfinite(x) && std::fabs(x) > FLT_MAX)
      return std::fabs(x) < FLT_MAX + std::ldexp(1.0, 103) ? std::copysign(FLT_MAX, x) : std::copysign(INFINITY, x);
    return static_cast<double>(static_cast<float>(x));
  }
  if (t == DataType::Float16 || t == DataType::BFloat16)
    return (*toDoubles(*fromDoubles(t, {}, {x})))[0];
  return x;
}

/// Given values, Result: them sorted and distinct (NaN kept once), or
/// nullopt when more than kMaxValues.
std::optional<ValueSet> normalized(ValueSet values) {
  bool nan = false;
  ValueSet out;
  for (double v : values)
    nan = nan || std::isnan(v);
  for (double v : values)
    if (!std::isnan(v))
      out.push_back(v);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (nan)
    out.push_back(std::numeric_limits<double>::quiet_NaN());
  if (out.size() > kMaxValues)
    return std::nullopt;
  return out;
}

std::optional<ValueSet> valueSet(const Value *v, int depth);

/// Whether `op`'s result holds only elements of its first operand (data
/// movement: reshapes, transposes, broadcasts, slices, gathers).
bool movesElementsOnly(const std::string &op) {
  return op == "Identity" || op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Flatten" ||
         op == "Transpose" || op == "Expand" || op == "Tile" || op == "Slice" || op == "Gather" ||
         op == "GatherElements" || op == "GatherND";
}

/// The union of the value sets of some operands of `n`.
std::optional<ValueSet> unionOf(const Node &n, size_t first, size_t last, int depth) {
  ValueSet all;
  for (size_t i = first; i < last && i < n.numOperands(); ++i) {
    std::optional<ValueSet> s = n.operand(i) ? valueSet(n.operand(i), depth + 1) : std::nullopt;
    if (!s)
      return std::nullopt;
    all.insert(all.end(), s->begin(), s->end());
  }
  return normalized(std::move(all));
}

/// The values of an elementwise op over every pair of operand values, each
/// rounded to the result type `t`.
std::optional<ValueSet> pairwise(const Node &n, DataType t, int depth, double (*op)(double, double)) {
  if (n.numOperands() < 1)
    return std::nullopt;
  std::optional<ValueSet> acc = n.operand(0) ? valueSet(n.operand(0), depth + 1) : std::nullopt;
  for (size_t i = 1; acc && i < n.numOperands(); ++i) {
    std::optional<ValueSet> rhs = n.operand(i) ? valueSet(n.operand(i), depth + 1) : std::nullopt;
    if (!rhs)
      return std::nullopt;
    ValueSet next;
    for (double a : *acc)
      for (double b : *rhs)
        next.push_back(roundTo(t, op(a, b)));
    acc = normalized(std::move(next));
  }
  return acc;
}

/// Given a value, Result: the set of values its elements can take, when its
/// producers say so: constants, bool values (0 and 1), Cast, Where, the
/// elementwise Add/Sub/Mul/Min/Max/Neg (computed in the result's type, so
/// that an overflow to infinity is seen), ConstantOfShape, and the ops
/// that only move elements. Nullopt for anything else (a graph input, an
/// unbounded integer Cast...).
std::optional<ValueSet> valueSet(const Value *v, int depth) {
  std::optional<DataType> t = knownElemType(v);
  if (!t || depth > kMaxDepth)
    return std::nullopt;
  if (*t == DataType::Bool)
    return ValueSet{0.0, 1.0};
  if (TensorPtr c = constantTensor(v)) {
    if (std::optional<std::vector<double>> d = toDoubles(*c))
      return normalized(std::move(*d));
    if (std::optional<std::vector<int64_t>> ints = constantInts(v))
      return normalized(ValueSet(ints->begin(), ints->end()));
    return std::nullopt;
  }
  Node *n = v->definingNode();
  if (!n || !n->isDefaultDomain() || n->numOperands() == 0 || !n->operand(0))
    return std::nullopt;
  const std::string &op = n->opType();
  if (movesElementsOnly(op))
    return unionOf(*n, 0, 1, depth);
  if (op == "Concat")
    return unionOf(*n, 0, n->numOperands(), depth);
  if (op == "Where")
    return unionOf(*n, 1, 3, depth);
  if (op == "Cast" || op == "Neg") {
    std::optional<ValueSet> s = unionOf(*n, 0, 1, depth);
    if (!s)
      return std::nullopt;
    for (double &x : *s)
      x = roundTo(*t, op == "Neg" ? -x : x);
    return normalized(std::move(*s));
  }
  if (op == "ConstantOfShape") {
    const Attribute *a = n->attr("value");
    std::optional<std::vector<double>> d = a && a->t ? toDoubles(*a->t) : std::nullopt;
    return a ? (d ? normalized(std::move(*d)) : std::nullopt) : ValueSet{0.0};
  }
  if (op == "Add")
    return pairwise(*n, *t, depth, [](double a, double b) { return a + b; });
  if (op == "Sub")
    return pairwise(*n, *t, depth, [](double a, double b) { return a - b; });
  if (op == "Mul")
    return pairwise(*n, *t, depth, [](double a, double b) { return a * b; });
  if (op == "Min")
    return pairwise(*n, *t, depth, [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); });
  if (op == "Max")
    return pairwise(*n, *t, depth, [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); });
  return std::nullopt;
}

/// Given a value, Result: bounds [lo, hi] of its elements when they are
/// finite and its producers say so: constants, ConstantOfShape, the ops that
/// only move elements (Gather of a constant table included), Cast between floating
/// types, Where and Concat (the hull), Add (the sum); nullopt otherwise.
std::optional<std::pair<double, double>> valueBounds(const Value *v, int depth) {
  std::optional<DataType> t = knownElemType(v);
  if (!t || depth > kMaxDepth)
    return std::nullopt;
  auto hull = [](std::optional<std::pair<double, double>> a, std::optional<std::pair<double, double>> b) {
    return a && b ? std::optional(std::pair(std::min(a->first, b->first), std::max(a->second, b->second)))
                  : std::nullopt;
  };
  if (TensorPtr c = constantTensor(v)) {
    std::optional<std::vector<double>> d = toDoubles(*c);
    if (!d || d->empty())
      return std::nullopt;
    double lo = INFINITY, hi = -INFINITY;
    for (double x : *d) {
      if (!std::isfinite(x))
        return std::nullopt;
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    return std::pair(lo, hi);
  }
  Node *n = v->definingNode();
  if (!n || !n->isDefaultDomain() || n->numOperands() == 0 || !n->operand(0))
    return std::nullopt;
  const std::string &op = n->opType();
  if (movesElementsOnly(op))
    return valueBounds(n->operand(0), depth + 1);
  if (op == "ConstantOfShape") {
    const Attribute *a = n->attr("value");
    std::optional<std::vector<double>> d = a && a->t ? toDoubles(*a->t) : std::nullopt;
    if (!a)
      return std::pair(0.0, 0.0);
    if (!d || d->size() != 1 || !std::isfinite((*d)[0]))
      return std::nullopt;
    return std::pair((*d)[0], (*d)[0]);
  }
  if (op == "Cast" && isFloatLike(*t) && knownElemType(n->operand(0)) &&
      isFloatLike(*knownElemType(n->operand(0))))
    return valueBounds(n->operand(0), depth + 1);
  if ((op == "Where" && n->numOperands() == 3) || op == "Concat") {
    std::optional<std::pair<double, double>> acc;
    for (size_t i = op == "Where" ? 1 : 0; i < n->numOperands(); ++i) {
      std::optional<std::pair<double, double>> b = n->operand(i) ? valueBounds(n->operand(i), depth + 1) : std::nullopt;
      acc = i == (op == "Where" ? 1u : 0u) ? b : hull(acc, b);
      if (!acc)
        return std::nullopt;
    }
    return acc;
  }
  if (op == "Add" && n->numOperands() == 2 && n->operand(1)) {
    auto a = valueBounds(n->operand(0), depth + 1), b = valueBounds(n->operand(1), depth + 1);
    if (!a || !b)
      return std::nullopt;
    return std::pair(a->first + b->first, a->second + b->second);
  }
  return std::nullopt;
}

/// Whether every row (along the last dim) of a constant mask keeps a
/// visible key: a true (a false when `inverted`) of a boolean mask, a value
/// above `hiddenBelow` of an additive one; an additive value that is NaN or
/// +inf fails too. Null when so; otherwise why not.
const char *constantRowsVisible(const Tensor &t, bool boolean, bool inverted, double hiddenBelow) {
  int64_t len = t.dims().empty() ? 1 : t.dims().back();
  if (!t.isConsistent() || len <= 0)
    return "the constant mask cannot be read";
  std::optional<std::vector<double>> d = boolean ? std::nullopt : toDoubles(t);
  if (!boolean && !d)
    return "the constant mask cannot be read";
  size_t n = static_cast<size_t>(t.numElements()), row = static_cast<size_t>(len);
  for (size_t r = 0; r < n; r += row) {
    bool any = false;
    for (size_t j = r; j < r + row; ++j) {
      if (boolean) {
        any = any || (t.rawData()[j] != 0) != inverted;
        continue;
      }
      double x = (*d)[j];
      if (std::isnan(x) || x == INFINITY)
        return "the constant mask holds NaN or +inf";
      any = any || x > hiddenBelow;
    }
    if (!any)
      return "the constant mask hides a whole row (the decomposition and ONNX Runtime's Attention differ there)";
  }
  return nullptr;
}

/// A one-element floating constant of type `t` and dims `dims` holding `x`,
/// placed before `pos`.
Value *filledConstant(Rewriter &rewriter, Node *pos, std::string_view name, DataType t, std::vector<int64_t> dims,
                      double x) {
  return materializeConstant(rewriter, *pos->graph(), pos, name, fromDoubles(t, std::move(dims), {x}));
}

/// A one-element floating constant, as a double.
std::optional<double> scalarDouble(const Value *v) {
  TensorPtr t = constantTensor(v);
  std::optional<std::vector<double>> d = t && t->numElements() == 1 ? toDoubles(*t) : std::nullopt;
  return d ? std::optional<double>((*d)[0]) : std::nullopt;
}

} // namespace

const char *planAttentionMask(const AttentionMaskMatch &m, DataType dt, const Shape &scores,
                              AttentionMaskPlan &plan) {
  plan = AttentionMaskPlan{};
  if (const char *why = checkShape(m, dt, scores, plan.expandRows))
    return why;
  double half = roundTo(dt, lowestOf(dt) / 2);
  if (m.bias) {
    // bias + mask: see the file comment.
    std::optional<std::pair<double, double>> b = valueBounds(m.bias, 0);
    const double limit = std::ldexp(1.0, 100);
    if (!b || std::fabs(b->first) > limit || std::fabs(b->second) > limit)
      return "the values of the bias added to the scores are not known to be finite and bounded by 2^100";
    std::optional<ValueSet> values = m.mask ? valueSet(m.mask, 0) : ValueSet{0.0};
    if (!values)
      return "the values of the mask after the bias are not known";
    bool low = false;
    for (double x : *values) {
      if (!std::isfinite(x))
        return "the mask after the bias may hold -inf, +inf or NaN";
      if (x <= half)
        low = true;
      else if (x + b->first <= half)
        return "a mask value lies so close to half of the type's lowest that the bias may move it across";
    }
    if (low && dt != DataType::Float)
      return "a bias plus a mask that hides keys is fused in float32 only";
    plan.form = low ? AttentionMaskPlan::Form::Floored : AttentionMaskPlan::Form::AsIs;
    return nullptr;
  }
  if (isCausalMask(m, scores[2], scores[3])) {
    plan.form = AttentionMaskPlan::Form::Causal;
    plan.expandRows = false;
    return nullptr;
  }
  if (TensorPtr t = constantTensor(m.mask)) {
    plan.form = AttentionMaskPlan::Form::AsIs;
    return constantRowsVisible(*t, m.boolean, m.inverted, half);
  }
  if (m.boolean) {
    if (!std::isfinite(m.fill))
      return "a boolean mask computed at run time with a -inf fill may hide a whole row (NaN in the decomposition, "
             "0 in ONNX Runtime's Attention)";
    if (dt != DataType::Float)
      return "a boolean mask computed at run time is fused in float32 only (its hidden rows need a fill that absorbs "
             "the scores)";
    plan.form = AttentionMaskPlan::Form::VisibleWhere;
    return nullptr;
  }
  std::optional<ValueSet> values = valueSet(m.mask, 0);
  if (!values)
    return "the values of the mask computed at run time are not known (a row hidden whole by -inf is NaN in the "
           "decomposition, 0 in ONNX Runtime's Attention)";
  ValueSet low;
  for (double x : *values) {
    if (!std::isfinite(x))
      return "the mask may hold -inf, +inf or NaN (a row hidden whole by -inf is NaN in the decomposition, 0 in "
             "ONNX Runtime's Attention)";
    if (x <= half)
      low.push_back(x);
  }
  if (low.empty()) {
    plan.form = AttentionMaskPlan::Form::AsIs;
    return nullptr;
  }
  if (dt != DataType::Float || low.size() != 1)
    return "the mask holds values near its type's lowest, which ONNX Runtime's Attention takes for hidden (a whole "
           "row of them: 0 there, the mean of v in the decomposition), and no single one to raise in float32";
  plan.form = AttentionMaskPlan::Form::Raised;
  plan.raise = low[0];
  return nullptr;
}

Value *materializeAttentionMask(const AttentionMaskMatch &m, const AttentionMaskPlan &plan, DataType dt,
                                const Dim &queryLength, Node *pos, Rewriter &rewriter) {
  using Form = AttentionMaskPlan::Form;
  if (plan.form == Form::Causal)
    return nullptr;
  Value *mask = m.mask;
  double half = roundTo(dt, lowestOf(dt) / 2);
  Type maskType = Type::tensor(dt, *operandShape(m));
  if (m.bias && m.mask) {
    Node *sum = rewriter.createNodeBefore(pos, "Add", {m.bias, m.mask}, {m.mask->name() + "_biased"});
    sum->result(0)->setType(maskType);
    mask = sum->result(0);
  } else if (m.bias) {
    mask = m.bias;
  }
  switch (plan.form) {
  case Form::Floored: {
    Value *floor = filledConstant(rewriter, pos, mask->name() + "_floor", dt, {}, half);
    Node *n = rewriter.createNodeBefore(pos, "Max", {mask, floor}, {mask->name() + "_floored"});
    n->result(0)->setType(maskType);
    mask = n->result(0);
    break;
  }
  case Form::AsIs:
    if (m.boolean && m.inverted) {
      // masked_fill's mask is true where hidden; Attention's where visible.
      Node *no = rewriter.createNodeBefore(pos, "Not", {mask}, {mask->name() + "_visible"});
      no->result(0)->setType(mask->type());
      mask = no->result(0);
    }
    break;
  case Form::VisibleWhere: {
    Value *zero = filledConstant(rewriter, pos, mask->name() + "_visible", dt, {}, 0.0);
    Value *hidden = filledConstant(rewriter, pos, mask->name() + "_hidden", dt, {}, half);
    Node *w = rewriter.createNodeBefore(pos, "Where", {mask, m.inverted ? hidden : zero, m.inverted ? zero : hidden},
                                        {mask->name() + "_additive"});
    w->result(0)->setType(maskType);
    mask = w->result(0);
    break;
  }
  case Form::Raised: {
    Node *w = producerOp(mask, "Where");
    std::optional<double> a = w ? scalarDouble(w->operand(1)) : std::nullopt;
    std::optional<double> b = w ? scalarDouble(w->operand(2)) : std::nullopt;
    Node *n = nullptr;
    if (a && b) {
      // Where(c, x, y) of two constants: the same Where with the low one raised.
      auto raised = [&](size_t i, double x) {
        return x == plan.raise ? filledConstant(rewriter, pos, mask->name() + "_raised", dt,
                                                constantTensor(w->operand(i))->dims(), half)
                               : w->operand(i);
      };
      Value *x = raised(1, *a), *y = raised(2, *b);
      n = rewriter.createNodeBefore(pos, "Where", {w->operand(0), x, y}, {mask->name() + "_raised"});
    } else {
      Value *floor = filledConstant(rewriter, pos, mask->name() + "_floor", dt, {}, half);
      n = rewriter.createNodeBefore(pos, "Max", {mask, floor}, {mask->name() + "_raised"});
    }
    n->result(0)->setType(maskType);
    mask = n->result(0);
    break;
  }
  case Form::Causal: break;
  }
  if (plan.expandRows) {
    // [.., 1, Skv] -> [.., Sq, Skv] (ONNX Runtime's row-dim requirement).
    Shape md = *knownShape(mask);
    std::vector<int64_t> target(md.size(), 1);
    target[md.size() - 2] = queryLength.getValue();
    Value *shape = materializeConstant(
        rewriter, *pos->graph(), pos, mask->name() + "_rows",
        Tensor::fromValues<int64_t>(DataType::Int64, {static_cast<int64_t>(target.size())}, target));
    Node *e = rewriter.createNodeBefore(pos, "Expand", {mask, shape}, {mask->name() + "_rows"});
    md[md.size() - 2] = queryLength;
    e->result(0)->setType(Type::tensor(*knownElemType(mask), md));
    mask = e->result(0);
  }
  return mask;
}

} // namespace onnxslim
