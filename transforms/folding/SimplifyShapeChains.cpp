//===- transforms/folding/SimplifyShapeChains.cpp - Fold shape arithmetic -===//
//
// simplify-shape-chains: shape arithmetic on values of known (or partly
// symbolic) shapes becomes constants.
//
//   Before:  (x: float[batch, 16, 64])        After:
//     s = Shape(x)                              y = Reshape(x, t)
//     i = Gather(s, one)        # 16            # t = int64[3] {0, 4, -1}
//     d = Div(i, four)          # 4
//     b = Gather(s, zero)       # batch
//     bu = Unsqueeze(b, axes0)
//     du = Unsqueeze(d, axes0)
//     t = Concat<axis=0>(bu, du, minus1)
//     y = Reshape(x, t)
//
// It runs ir/ShapeInference (which follows the contents of small integer
// tensors as symbolic dims, ir/SymbolicDim) and then, in one walk:
//
//  1. Any node result that is an int32/int64/bool scalar or 1-D tensor
//     whose every element is a known number becomes a constant: Shape (with
//     start/end, opset 15) of a value whose selected dims are known,
//     Shape -> Gather / Slice of known dims, Size of a static shape,
//     Concat of known pieces, arithmetic on them, comparisons of sizes
//     whose order is provable (Equal(Shape(x), -1) is false: a size is
//     never negative)...
//  2. A Reshape whose target is not constant but whose elements are each a
//     number or a symbolic expression gets a constant target: a number is
//     kept, an element provably equal to the input's dim at the same
//     position becomes 0 (copy; only when allowzero = 0), and at most one
//     other element becomes -1 (declined when a second would be needed, or
//     when another dim of the target can be 0 at run time: -1 cannot be
//     inferred next to a 0, so [N, M*K] of an empty batch must not become
//     {0, -1}).
//  3. A result whose elements (numbers or symbolic expressions) and shape
//     are provably those of one of the node's operands is replaced by that
//     operand: torch's expand(-1) form Where(Equal(s, -1), 1, s) is s when
//     s holds sizes.
//  4. A result whose elements are those of an earlier value in scope (the
//     same symbolic expressions, so equal for every size) is replaced by
//     it: Gather(Shape(input_ids), 1) and Gather(Shape(attention_mask), 1)
//     are both `seq`.
//  5. Reshape(Reshape(x, s1), s2) with a single-use inner Reshape becomes
//     Reshape(x, s2) when s2's copy rule cannot tell the two inputs apart
//     (allowzero = 1, or every element that can be 0 sits where both
//     inputs provably have the same dim).
//  6./7. A Reshape or Expand whose symbolic target is the input's own shape
//     (Expand: each element 1 or the input's dim) is its input.
//
// Conditions: default-domain nodes without subgraphs; the node and its
// inputs are left for eliminate-dead-nodes when unused afterwards. A result
// that is a graph output is replaced only if it is the node's only result
// (the constant takes its name).
//
//===----------------------------------------------------------------------===//
#include "ir/ShapeInference.h"
#include "transforms/folding/FoldUtils.h"
#include "transforms/Pass.h"
#include "transforms/PatternMatch.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <unordered_map>

namespace onnxslim {

namespace {

/// Elements as numbers when each is a known constant.
std::optional<std::vector<int64_t>> constantElements(const std::vector<SymDim> &elems) {
  std::vector<int64_t> out;
  out.reserve(elems.size());
  for (const SymDim &d : elems) {
    std::optional<int64_t> c = d.constantValue();
    if (!c)
      return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

/// A tensor of `dtype` (int32, int64 or bool) and `dims` holding `values`.
TensorPtr makeIntTensor(DataType dtype, std::vector<int64_t> dims, const std::vector<int64_t> &values) {
  if (dtype == DataType::Int64)
    return Tensor::fromValues<int64_t>(dtype, std::move(dims), values);
  if (dtype == DataType::Bool) {
    std::vector<uint8_t> bytes;
    bytes.reserve(values.size());
    for (int64_t v : values) {
      if (v != 0 && v != 1)
        return nullptr;
      bytes.push_back(static_cast<uint8_t>(v));
    }
    return Tensor::fromValues<uint8_t>(dtype, std::move(dims), bytes);
  }
  std::vector<int32_t> narrow;
  narrow.reserve(values.size());
  for (int64_t v : values) {
    if (v < INT32_MIN || v > INT32_MAX)
      return nullptr;
    narrow.push_back(static_cast<int32_t>(v));
  }
  return Tensor::fromValues<int32_t>(dtype, std::move(dims), narrow);
}

class ShapeChainSimplifier {
public:
  ShapeChainSimplifier(Model &model, PassContext &context)
      : rewriter_(context), context_(context), inferencer_(model, inferenceOptions()) {
    rewriter_.setCurrentPattern("simplify-shape-chains");
  }

  void run(Graph &main) {
    inferencer_.run();
    visit(main);
  }

  bool changed() const { return rewriter_.changeCount() != 0; }

private:
  static ShapeInferenceOptions inferenceOptions() {
    ShapeInferenceOptions o;
    o.addValueInfo = false;
    return o;
  }

  void visit(Graph &g) {
    for (Node *n = g.firstNode(); n;) {
      Node *next = n->next();
      if (hasSubgraphs(*n)) {
        // A body sees the values defined before its node, not the reverse.
        std::unordered_map<std::string, Value *> outer = seen_;
        for (Graph *sg : n->subgraphs()) {
          visit(*sg);
          seen_ = outer;
        }
      } else if (n->isDefaultDomain() && !n->is("Constant")) {
        if (!foldKnownResults(n) && !forwardEqualOperand(n) && !reuseEqualValue(n)) {
          if (n->is("Reshape")) {
            collapseReshapes(n);
            if (!removeNopReshape(n))
              staticReshapeTarget(n);
          } else if (n->is("Expand")) {
            removeNopExpand(n);
          }
        }
      }
      n = next;
    }
  }

  /// The key of a value whose shape (scalar or 1-D) and every element are
  /// known, some symbolically: equal keys hold equal data for every size.
  std::optional<std::string> valueKey(const Value *r) {
    std::optional<DataType> dt = knownElemType(r);
    std::optional<SymShape> shape = inferencer_.symbolicShape(r);
    if (!dt || !shape || shape->size() > 1)
      return std::nullopt;
    std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(r);
    if (!elems)
      return std::nullopt;
    std::string key = std::to_string(static_cast<int>(*dt)) + "|" + str(*shape) + "|";
    bool symbolic = false;
    for (const SymDim &e : *elems) {
      if (e.isUnknown())
        return std::nullopt;
      symbolic |= !e.isConstant();
      key += e.str() + ";";
    }
    if (!symbolic)
      return std::nullopt; // all numbers: rule 1 makes it a constant
    return key;
  }

  /// Rule 4. Result: whether `n`'s one result was replaced by an earlier
  /// value with the same key (Gather(Shape(input_ids), 1) and
  /// Gather(Shape(attention_mask), 1) are both `seq`); the first such value
  /// is remembered otherwise.
  bool reuseEqualValue(Node *n) {
    Value *r = n->numResults() == 1 ? n->result(0) : nullptr;
    if (!r || !r->hasUses())
      return false;
    std::optional<std::string> key = valueKey(r);
    if (!key)
      return false;
    auto [it, fresh] = seen_.emplace(*key, r);
    if (fresh || r->isGraphOutput())
      return false;
    if (!context_.beginRewrite("equal-values", *n, /*exact=*/true))
      return false;
    inferencer_.forget(r);
    rewriter_.notifyRewrite(n, "holds the same elements as '" + it->second->name() + "'");
    rewriter_.replaceAllUsesWith(r, it->second);
    rewriter_.eraseNode(n);
    ++context_.counter("equal-values", "Results provably equal to an earlier value, replaced by it");
    return true;
  }

  /// Whether a Reshape's output dim `i` is provably its input's dim `i`
  /// when the target element there is 0 at run time (the copy rule).
  static bool sameDim(const std::optional<SymShape> &a, const std::optional<SymShape> &b, size_t i) {
    return a && b && i < a->size() && i < b->size() && provablyEqual((*a)[i], (*b)[i]);
  }

  /// Whether a Reshape from shape `a` to shape `b` can only run on an empty
  /// tensor whose emptiness comes from a dim the two share: with the dims
  /// they share cancelled, what is left of each is known, and the two
  /// products differ ([N,3,4] to [N,3,5]: N = 0 runs), or one holds a 0 and
  /// the other does not ([N,3,0] to [N,3,5]: N = 0 again).
  static bool onlyEmpty(const std::optional<SymShape> &a, const std::optional<SymShape> &b) {
    if (!a || !b)
      return false;
    std::vector<SymDim> rest(b->begin(), b->end());
    std::vector<SymDim> left;
    for (const SymDim &d : *a) {
      auto same = std::find_if(rest.begin(), rest.end(), [&](const SymDim &e) { return provablyEqual(d, e); });
      if (same != rest.end())
        rest.erase(same);
      else
        left.push_back(d);
    }
    // The product of what is left of one side, or 0 when it holds a 0.
    auto product = [](const std::vector<SymDim> &dims) -> std::optional<int64_t> {
      int64_t p = 1;
      bool zero = false;
      for (const SymDim &d : dims) {
        std::optional<int64_t> v = d.constantValue();
        if (!v)
          return std::nullopt;
        if (*v == 0)
          zero = true;
        else if (__builtin_mul_overflow(p, *v, &p))
          return std::nullopt;
      }
      return zero ? 0 : p;
    };
    std::optional<int64_t> l = product(left), r = product(rest);
    return l && r && *l != *r;
  }

  /// Whether a shape's element count and a Reshape target's (every
  /// element known and positive) are both known and differ.
  static bool differentCount(const std::optional<SymShape> &shape,
                             const std::optional<std::vector<SymDim>> &target) {
    if (!shape || !target)
      return false;
    auto count = [](const std::vector<SymDim> &dims, bool positive) -> std::optional<int64_t> {
      int64_t p = 1;
      for (const SymDim &d : dims) {
        std::optional<int64_t> v = d.constantValue();
        if (!v || *v < 0 || (positive && *v == 0) || __builtin_mul_overflow(p, *v, &p))
          return std::nullopt;
      }
      return p;
    };
    std::optional<int64_t> a = count(*shape, false), b = count(*target, true);
    return a && b && *a != *b;
  }

  /// Rule 5. Reshape(Reshape(x, s1), s2) with a single-use inner Reshape
  /// is Reshape(x, s2): both keep the elements in order, so only s2's
  /// copy rule can differ (a 0 copies the input's dim, once y's and now
  /// x's); exact with allowzero = 1, or when every element of s2 that can
  /// be 0 sits where y and x provably have the same dim.
  bool collapseReshapes(Node *n) {
    Value *y = n->operand(0);
    Node *inner = y ? y->definingNode() : nullptr;
    if (!inner || !inner->is("Reshape") || !inner->isDefaultDomain() || y->isGraphOutput() ||
        !y->hasOneUse() || !inner->operand(0) || !n->operand(1))
      return false;
    // An inner Reshape that only an empty tensor gets through hides what
    // its input's dims are from the ops after it; the model is no less
    // broken with it, but reading x directly would show later ops dims
    // they contradict (a fuzz_load_pipeline finding).
    if (onlyEmpty(inferencer_.symbolicShape(inner->operand(0)), inferencer_.symbolicShape(y)))
      return rewriter_.notifyMatchFailure(n, "the inner Reshape runs only on an empty tensor");
    // Likewise an inner Reshape that cannot run (its target is not int64),
    // and an outer target whose element count is known to differ from x's:
    // either fails as it is, but read straight from x the outer target would
    // contradict x's known dims (fuzz_load_pipeline findings).
    if (std::optional<DataType> dt = knownElemType(inner->operand(1)); !inner->operand(1) || (dt && *dt != DataType::Int64))
      return rewriter_.notifyMatchFailure(n, "the inner Reshape's target is not int64");
    if (differentCount(inferencer_.symbolicShape(inner->operand(0)), inferencer_.symbolicElements(n->operand(1))))
      return rewriter_.notifyMatchFailure(n, "the outer target's element count is not the input's");
    if (n->attrInt("allowzero", 0) == 0) {
      std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(n->operand(1));
      if (!elems)
        return rewriter_.notifyMatchFailure(n, "the outer target's elements are not known");
      std::optional<SymShape> ys = inferencer_.symbolicShape(y), xs = inferencer_.symbolicShape(inner->operand(0));
      for (size_t i = 0; i < elems->size(); ++i) {
        std::optional<int64_t> low = (*elems)[i].lowerBound();
        bool neverZero = (low && *low >= 1) || ((*elems)[i].constantValue() && *(*elems)[i].constantValue() != 0);
        if (!neverZero && !sameDim(ys, xs, i))
          return rewriter_.notifyMatchFailure(n, "a target element can be 0 where the two inputs' dims may differ");
      }
    }
    if (!context_.beginRewrite("reshape-of-reshape", *n, /*exact=*/true))
      return false;
    rewriter_.notifyRewrite(n, "reshapes the inner Reshape's input directly");
    rewriter_.setOperand(n, 0, inner->operand(0));
    rewriter_.eraseNode(inner);
    ++context_.counter("reshape-of-reshape", "Reshapes of a single-use Reshape that read its input");
    return true;
  }

  /// Rule 6. A Reshape whose target (constant or symbolic) is its input's
  /// own shape, element by element (or 0 copying it), is its input.
  bool removeNopReshape(Node *n) {
    Value *r = n->result(0);
    if (!r || r->isGraphOutput() || !n->operand(0) || !n->operand(1) || constantTensor(n->operand(1)))
      return false; // constant targets: eliminate-nop-ops
    std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(n->operand(1));
    std::optional<SymShape> in = inferencer_.symbolicShape(n->operand(0));
    if (!elems || !in || elems->size() != in->size())
      return false;
    bool allowZero = n->attrInt("allowzero", 0) != 0;
    for (size_t i = 0; i < in->size(); ++i) {
      const SymDim &e = (*elems)[i];
      std::optional<int64_t> c = e.constantValue();
      if (!(provablyEqual(e, (*in)[i]) || (c && *c == 0 && !allowZero)))
        return false;
    }
    return replaceByInput(n, "nop-reshapes", "Reshapes to the input's own (symbolic) shape removed",
                          "the target is the input's own shape");
  }

  /// Given a node whose result provably equals its first operand, Execute:
  /// replaces it by that operand (counted under `key`), Result: whether it did.
  bool replaceByInput(Node *n, const char *key, const char *description, const char *why) {
    if (!context_.beginRewrite(key, *n, /*exact=*/true))
      return false;
    inferencer_.forget(n->result(0));
    rewriter_.notifyRewrite(n, why);
    rewriter_.replaceAllUsesWith(n->result(0), n->operand(0));
    rewriter_.eraseNode(n);
    ++context_.counter(key, description);
    return true;
  }

  /// Rule 7. An Expand whose target (symbolic) broadcasts to its input's own
  /// shape (each element 1 or provably the input's dim) is its input.
  bool removeNopExpand(Node *n) {
    Value *r = n->result(0);
    if (!r || r->isGraphOutput() || !n->operand(0) || !n->operand(1))
      return false;
    std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(n->operand(1));
    std::optional<SymShape> in = inferencer_.symbolicShape(n->operand(0));
    if (!elems || !in || elems->size() > in->size())
      return false;
    size_t offset = in->size() - elems->size();
    for (size_t i = 0; i < elems->size(); ++i) {
      const SymDim &e = (*elems)[i];
      std::optional<int64_t> c = e.constantValue();
      if (!(provablyEqual(e, (*in)[offset + i]) || (c && *c == 1)))
        return false;
    }
    return replaceByInput(n, "nop-expands", "Expands to the input's own (symbolic) shape removed",
                          "the target broadcasts to the input's own shape");
  }

  /// Rule 1. Result: whether `n` was replaced (and erased).
  bool foldKnownResults(Node *n) {
    if (n->numOperands() == 0)
      return false; // generators (Random*): nothing to follow
    std::vector<TensorPtr> tensors(n->numResults());
    bool any = false, outputs = false;
    for (size_t i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      if (!r || !r->hasUses())
        continue;
      tensors[i] = knownIntTensor(r);
      any |= tensors[i] != nullptr;
      outputs |= r->isGraphOutput();
    }
    if (!any)
      return false;
    bool whole = n->numResults() == 1;
    if (!whole && outputs) {
      // Replace node uses only: graph outputs keep reading the node.
      bool some = false;
      for (size_t i = 0; i < n->numResults(); ++i)
        some = some || (tensors[i] && hasNodeUse(*n->result(i)));
      if (!some || !context_.beginRewrite("known-values", *n, /*exact=*/true))
        return false;
      bool moved = false;
      for (size_t i = 0; i < n->numResults(); ++i)
        if (tensors[i] && hasNodeUse(*n->result(i))) {
          Value *c = materializeConstant(rewriter_, *n->graph(), n, n->result(i)->name(), tensors[i]);
          rewriter_.replaceNodeUsesWith(n->result(i), c);
          moved = true;
        }
      if (!moved)
        return false;
    } else {
      if (!whole)
        for (size_t i = 0; i < n->numResults(); ++i)
          if (n->result(i) && n->result(i)->hasUses() && !tensors[i])
            return false; // keep the node: a result is still computed
      if (!context_.beginRewrite("known-values", *n, /*exact=*/true))
        return false;
      for (Value *r : n->results())
        if (r)
          inferencer_.forget(r);
      rewriter_.notifyRewrite(n, "every element of the result is known");
      replaceNodeWithConstants(rewriter_, n, tensors);
    }
    ++context_.counter("known-values", "Shape values whose elements are all known, made constants");
    return whole;
  }

  static bool hasNodeUse(const Value &v) {
    for (Use *u = v.uses().first; u; u = u->next())
      if (!u->isGraphOutput())
        return true;
    return false;
  }

  /// Rule 3. Result: whether `n`'s one result was replaced by an operand
  /// that provably holds the same elements (Where(Equal(Shape(x), -1), 1,
  /// Shape(x)) is Shape(x): a size is never -1).
  bool forwardEqualOperand(Node *n) {
    Value *r = n->numResults() == 1 ? n->result(0) : nullptr;
    if (!r || !r->hasUses() || r->isGraphOutput())
      return false;
    std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(r);
    std::optional<SymShape> shape = inferencer_.symbolicShape(r);
    std::optional<DataType> dt = knownElemType(r);
    if (!elems || !shape || !dt)
      return false;
    for (Value *op : n->operands()) {
      if (!op || op == r || knownElemType(op) != dt)
        continue;
      std::optional<SymShape> opShape = inferencer_.symbolicShape(op);
      if (!opShape || opShape->size() != shape->size() ||
          !std::equal(shape->begin(), shape->end(), opShape->begin(), provablyEqual))
        continue;
      std::optional<std::vector<SymDim>> opElems = inferencer_.symbolicElements(op);
      if (!opElems || opElems->size() != elems->size() ||
          !std::equal(elems->begin(), elems->end(), opElems->begin(), provablyEqual))
        continue;
      if (!context_.beginRewrite("equal-operands", *n, /*exact=*/true))
        return false;
      inferencer_.forget(r);
      rewriter_.notifyRewrite(n, "the result holds the same elements as operand '" + op->name() + "'");
      rewriter_.replaceAllUsesWith(r, op);
      rewriter_.eraseNode(n);
      ++context_.counter("equal-operands", "Results provably equal to an operand, replaced by it");
      return true;
    }
    return false;
  }

  /// The constant a result provably holds, or null.
  TensorPtr knownIntTensor(const Value *r) {
    std::optional<DataType> dt = knownElemType(r);
    if (!dt || (*dt != DataType::Int64 && *dt != DataType::Int32 && *dt != DataType::Bool))
      return nullptr;
    std::optional<SymShape> shape = inferencer_.symbolicShape(r);
    if (!shape || shape->size() > 1 || !isStatic(*shape))
      return nullptr;
    std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(r);
    if (!elems)
      return nullptr;
    std::optional<std::vector<int64_t>> values = constantElements(*elems);
    if (!values)
      return nullptr;
    std::vector<int64_t> dims;
    if (shape->size() == 1) {
      dims.push_back(*(*shape)[0].constantValue());
      if (dims[0] != static_cast<int64_t>(values->size()))
        return nullptr;
    } else if (values->size() != 1) {
      return nullptr;
    }
    return makeIntTensor(*dt, std::move(dims), *values);
  }

  /// Rule 2. Result: whether the target was replaced.
  bool staticReshapeTarget(Node *n) {
    Value *target = n->operand(1);
    if (!target || constantTensor(target) || !n->operand(0))
      return false;
    std::optional<std::vector<SymDim>> elems = inferencer_.symbolicElements(target);
    if (!elems)
      return rewriter_.notifyMatchFailure(n, "the target's elements are not known");
    std::optional<SymShape> in = inferencer_.symbolicShape(n->operand(0));
    bool allowZero = n->attrInt("allowzero", 0) != 0;
    std::vector<int64_t> out;
    // The size each output dim has at run time (for a 0 that copies, the
    // input's dim), to prove a new -1 can be inferred.
    std::vector<SymDim> sizes;
    unsigned inferred = 0;
    std::optional<size_t> newInferred;
    for (size_t i = 0; i < elems->size(); ++i) {
      const SymDim &e = (*elems)[i];
      if (std::optional<int64_t> c = e.constantValue()) {
        inferred += *c == -1;
        out.push_back(*c);
        bool copies = *c == 0 && !allowZero;
        sizes.push_back(copies ? (in && i < in->size() ? (*in)[i] : SymDim()) : e);
        continue;
      }
      if (e.isUnknown())
        return rewriter_.notifyMatchFailure(n, "an element of the target is unknown");
      sizes.push_back(e);
      if (!allowZero && in && i < in->size() && provablyEqual(e, (*in)[i])) {
        out.push_back(0);
        continue;
      }
      ++inferred;
      newInferred = i;
      out.push_back(-1);
    }
    if (inferred > 1)
      return rewriter_.notifyMatchFailure(n, "more than one target dim would have to be -1");
    // A -1 is inferred as size / (product of the other dims), which fails
    // when that product is 0 (ONNX Runtime: "cannot be reshaped"), while the
    // computed target reshapes an empty tensor fine: every other dim must be
    // provably >= 1 for every run-time size.
    if (newInferred)
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (i == *newInferred)
          continue;
        std::optional<int64_t> low = sizes[i].lowerBound();
        if (!low || *low < 1)
          return rewriter_.notifyMatchFailure(n, "a -1 would sit next to a dim that can be 0 at run time");
      }
    if (!context_.beginRewrite("static-reshape", *n, /*exact=*/true))
      return false;
    TensorPtr t = Tensor::fromValues<int64_t>(DataType::Int64, {static_cast<int64_t>(out.size())}, out);
    Value *c = materializeConstant(rewriter_, *n->graph(), n, target->name(), t);
    rewriter_.setOperand(n, 1, c);
    rewriter_.notifyRewrite(n, "static target shape");
    ++context_.counter("static-reshapes", "Reshape targets computed from shapes made constant");
    return true;
  }

  Rewriter rewriter_;
  PassContext &context_;
  ShapeInferencer inferencer_;
  /// valueKey -> the first value in scope holding it (rule 4).
  std::unordered_map<std::string, Value *> seen_;
};

class SimplifyShapeChainsPass : public Pass {
public:
  std::string_view name() const override { return "simplify-shape-chains"; }
  std::string_view description() const override {
    return "Fold Shape/Gather/Slice/Concat/Size of known dims; give Reshapes static targets (0 / -1)";
  }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    ShapeChainSimplifier s(model, context);
    s.run(*model.graph());
    return s.changed();
  }
};

} // namespace

std::unique_ptr<Pass> createSimplifyShapeChainsPass() { return std::make_unique<SimplifyShapeChainsPass>(); }

} // namespace onnxslim
