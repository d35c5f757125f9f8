//===- transforms/folding/FoldConstants.cpp - Evaluate nodes of constant inputs===//
//
// fold-constants: a node all of whose inputs are constants is run by the
// interpreter (runtime/) once, here, and its results become constants.
//
//   Before:                                   After:
//     a = Constant <value = int64[3] {1,2,3}>   y = Mul(x, s)   # s = {2,4,6}
//     b = Constant <value = int64 {2}>          (s an initializer)
//     s = Mul(a, b)
//     y = Mul(x, s)
//
// Constants are initializers that are not graph inputs, Constant node
// results, and results folded earlier in the same walk (one walk in
// topological order folds whole constant chains). Values of enclosing
// graphs count, so nodes of If/Loop/Scan bodies fold too when they only
// read constants of their own or an outer scope.
//
// Convention (transforms/folding/FoldUtils.h): in the main graph, folded results
// and Constant nodes become initializers (so exporters' hundreds of
// Constant nodes go away); in subgraphs, folded results become Constant
// nodes, which (like the body's own Constant nodes) then move to the main
// graph's initializers, visible from every body, unless they are the
// body's outputs. A constant keeps the name of the value it replaces. Producers left without users are removed by
// eliminate-dead-nodes / eliminate-unused-initializers.
//
// A node is folded only when:
//   - it is of the default ONNX domain or ai.onnx.ml and owns no subgraph
//     (constant Ifs are inline-constant-if's job);
//   - it has at least one input, every present input is a constant, and
//     at least one result is used;
//   - its kernel exists for the model's opset and is deterministic (never
//     Random*, Multinomial...); QuantizeLinear/DequantizeLinear are kept so
//     that quantized (QDQ) models stay quantized, and Identity is left to
//     eliminate-identity-ops (folding it would copy the tensor);
//   - size guard: no result is larger than `size-limit` bytes (default 1 MiB,
//     `--fold-size-limit`, `fold-constants{size-limit=N}`) AND larger than the
//     sum of the node's constant input bytes. Generators (ConstantOfShape,
//     Expand, Tile, Range), which store more than they compute from, are
//     held tighter when their result would stay in the model: it may exceed
//     their inputs by at most `generator-limit` bytes (default 1 KiB) -- so
//     the zero pads of a ConstantOfShape -> Concat stay computed and folding
//     never makes the constants of a model grow by more than small
//     shape-derived tensors. A generator whose every user folds too (a
//     constant chain that starts with Expand/Range and ends in a mask or an
//     anchor grid) is an intermediate: only the chain's end, what crosses
//     into the computed part of the graph, stays, and the size limit judges
//     it;
//     The guard is checked before running (from the inferred static shape,
//     or from the constant inputs of a generator) and after, on the real
//     result;
//   - the kernel succeeds and returns tensors of the declared element type.
//     A kernel error is one warning naming the node (once per pipeline,
//     not once per fixed-point round); folding goes on;
//   - the spec defines the result for these inputs: a kernel that notes an
//     undefined result (a float -> int Cast out of range, the string "1e3"
//     cast to int64...) makes the node stay, so that the model keeps
//     computing whatever its runtime computes (rt::Status::undefined).
//
//===----------------------------------------------------------------------===//
#include "transforms/folding/FoldUtils.h"
#include "transforms/Pass.h"
#include "transforms/PatternMatch.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include "runtime/Interpreter.h"

#include <charconv>
#include <cmath>
#include <string>
#include <unordered_set>

namespace onnxslim {

namespace {

constexpr size_t kDefaultSizeLimit = size_t{1} << 20;
constexpr size_t kDefaultGeneratorLimit = size_t{1} << 10;

/// Ops that materialize data from a shape: they store more than they compute from.
bool isGenerator(const Node &n) {
  return n.is("ConstantOfShape") || n.is("Expand") || n.is("Tile") || n.is("Range");
}

/// Ops never folded although deterministic (see the file comment).
const char *keptOnPurpose(const Node &n) {
  if (n.is("QuantizeLinear") || n.is("DequantizeLinear"))
    return "quantization ops are kept";
  if (n.is("Identity"))
    return "an Identity is eliminate-identity-ops' job (folding it would copy the constant)";
  return nullptr;
}

/// Product of `dims`, or nullopt when one is negative or it overflows.
std::optional<int64_t> checkedProduct(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d != 0 && p > INT64_MAX / d))
      return std::nullopt;
    p *= d;
  }
  return p;
}

/// Result bytes of generator ops computed from their constant inputs, for
/// results whose static shape inference did not give.
std::optional<size_t> generatorResultBytes(const Node &n) {
  auto bytesOf = [](DataType dt, std::optional<int64_t> count) -> std::optional<size_t> {
    if (!count || elementBits(dt) == 0)
      return std::nullopt;
    return tensorBytes(dt, *count);
  };
  if (n.is("ConstantOfShape")) {
    std::optional<std::vector<int64_t>> shape = constantInts(n.operand(0));
    if (!shape)
      return std::nullopt;
    DataType dt = DataType::Float;
    if (const Attribute *a = n.attr("value"); a && a->t)
      dt = a->t->dtype();
    return bytesOf(dt, checkedProduct(*shape));
  }
  TensorPtr in = constantTensor(n.operand(0));
  if (!in)
    return std::nullopt;
  if (n.is("Expand") || n.is("Tile")) {
    std::optional<std::vector<int64_t>> arg = constantInts(n.operand(1));
    if (!arg)
      return std::nullopt;
    std::vector<int64_t> dims = in->dims();
    if (n.is("Tile")) {
      if (arg->size() != dims.size())
        return std::nullopt;
      for (size_t i = 0; i < dims.size(); ++i)
        if (__builtin_mul_overflow(dims[i], (*arg)[i] < 0 ? 0 : (*arg)[i], &dims[i]))
          return SIZE_MAX; // more elements than int64 counts: far too big to fold
    } else {
      std::vector<int64_t> out(std::max(dims.size(), arg->size()), 1);
      for (size_t i = 0; i < out.size(); ++i) {
        int64_t a = i < out.size() - dims.size() ? 1 : dims[i - (out.size() - dims.size())];
        int64_t b = i < out.size() - arg->size() ? 1 : (*arg)[i - (out.size() - arg->size())];
        out[i] = a == 1 ? b : a;
      }
      dims = out;
    }
    return bytesOf(in->dtype(), checkedProduct(dims));
  }
  if (n.is("Range")) {
    TensorPtr limit = constantTensor(n.operand(1));
    TensorPtr delta = constantTensor(n.operand(2));
    if (!limit || !delta || in->numElements() != 1 || limit->numElements() != 1 || delta->numElements() != 1)
      return std::nullopt;
    auto scalar = [](const Tensor &t) -> std::optional<double> {
      switch (t.dtype()) {
      case DataType::Float: return t.at<float>(0);
      case DataType::Double: return t.at<double>(0);
      case DataType::Int16: return t.at<int16_t>(0);
      case DataType::Int32: return t.at<int32_t>(0);
      case DataType::Int64: return static_cast<double>(t.at<int64_t>(0));
      default: return std::nullopt;
      }
    };
    std::optional<double> s = scalar(*in), l = scalar(*limit), d = scalar(*delta);
    if (!s || !l || !d || *d == 0)
      return std::nullopt;
    double count = std::ceil((*l - *s) / *d);
    if (!(count >= 0))
      count = 0;
    if (count > 9e15)
      return SIZE_MAX;
    return bytesOf(in->dtype(), static_cast<int64_t>(count));
  }
  return std::nullopt;
}

class Folder {
public:
  Folder(Model &model, PassContext &context, size_t sizeLimit, size_t generatorLimit,
         std::unordered_set<std::string> &warned)
      : rewriter_(context), context_(context), sizeLimit_(sizeLimit), generatorLimit_(generatorLimit),
        warned_(warned), interp_(model, rt::OpRegistry::builtin(), runOptions()) {
    rewriter_.setCurrentPattern("fold-constants");
  }

  /// Given the main graph, Execute: marks the nodes that would fold (see
  /// markComputable), then folds.
  void run(Graph &main) {
    markComputable(main);
    visit(main);
  }

  /// Folds what can be folded in `g` and, first, in the bodies of its nodes.
  void visit(Graph &g) {
    for (Node *n = g.firstNode(); n;) {
      Node *next = n->next();
      if (hasSubgraphs(*n))
        for (Graph *sg : n->subgraphs())
          visit(*sg);
      process(n);
      n = next;
    }
  }

  bool changed() const { return rewriter_.changeCount() != 0; }

private:
  static rt::RunOptions runOptions() {
    rt::RunOptions o;
    o.deterministicOnly = true;
    o.refuseUndefined = true;
    o.memoryLimitBytes = size_t{1} << 32; // a backstop; the size guard decides
    return o;
  }

  /// Folding is exact by construction: the node's kernel computes now what
  /// it would compute at run time (in the interpreter, bit for bit), so
  /// each step is logged as exact (transforms/RewriteLog.h).
  void process(Node *n) {
    if (context_.rewriteLog().exhausted())
      return;
    if (n->is("Constant")) {
      if (constantNodeTensor(*n) &&
          context_.beginRewrite("constant-to-initializer", *n, true) && constantNodeToInitializer(rewriter_, n))
        ++context_.counter("constant-nodes", "Constant nodes turned into initializers");
      return;
    }
    std::vector<TensorPtr> inputs;
    if (const char *reason = foldable(*n, inputs)) {
      rewriter_.notifyMatchFailure(n, reason);
      return;
    }
    size_t inputBytes = 0;
    for (const TensorPtr &t : inputs)
      inputBytes += t ? t->byteSize() : 0;
    if (std::optional<size_t> est = estimatedResultBytes(*n); est && tooBig(*n, *est, inputBytes)) {
      ++context_.counter("size-limit", "Nodes not folded because a result would be too large");
      rewriter_.notifyMatchFailure(n, "a result would exceed the " + limitName(*est) + " (" + std::to_string(*est) +
                                          " bytes, inputs " + std::to_string(inputBytes) + ")");
      return;
    }
    std::vector<rt::RtValue> in(inputs.size());
    std::vector<const rt::RtValue *> ptrs(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i]) {
        in[i] = rt::RtValue::fromTensor(inputs[i]);
        ptrs[i] = &in[i];
      }
    std::vector<rt::RtValue> out;
    rt::Status s = interp_.runNode(*n, ptrs, out, /*deterministicOnly=*/true);
    if (s.isUndefined()) {
      ++context_.counter("undefined-results", "Nodes not folded because the spec leaves their result undefined");
      rewriter_.notifyMatchFailure(n, s.message());
      return;
    }
    if (!s.ok()) {
      ++context_.counter("kernel-errors", "Nodes not folded because their kernel failed");
      warnOnce("not folding " + nodeLabel(*n) + ": " + s.message());
      return;
    }
    std::vector<TensorPtr> results(n->numResults());
    for (size_t i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      if (!r || !r->hasUses())
        continue;
      if (i >= out.size() || !out[i].isTensor()) {
        rewriter_.notifyMatchFailure(n, "a result is not a tensor");
        return;
      }
      const TensorPtr &t = out[i].tensor;
      if (tooBig(*n, t->byteSize(), inputBytes)) {
        ++context_.counter("size-limit");
        rewriter_.notifyMatchFailure(n, "a result exceeds the " + limitName(t->byteSize()) + " (" +
                                            std::to_string(t->byteSize()) + " bytes, inputs " +
                                            std::to_string(inputBytes) + ")");
        return;
      }
      if (std::optional<DataType> dt = knownElemType(r); dt && *dt != t->dtype()) {
        warnOnce("not folding " + nodeLabel(*n) + ": the kernel returned " + dataTypeName(t->dtype()) +
                 " for a " + dataTypeName(*dt) + " result");
        return;
      }
      results[i] = t;
    }
    if (!context_.beginRewrite("fold", *n, true))
      return;
    if (rewriter_.debugEnabled()) {
      size_t bytes = 0;
      for (const TensorPtr &t : results)
        bytes += t ? t->byteSize() : 0;
      rewriter_.notifyRewrite(n, "folded into a constant (" + std::to_string(bytes) + " bytes from " +
                                     std::to_string(inputBytes) + ")");
    }
    replaceNodeWithConstants(rewriter_, n, results);
    ++context_.counter("folded-nodes", "Nodes evaluated and replaced by constants");
  }

  /// Null when `n` may be folded (and `inputs` holds its constant inputs,
  /// null for omitted ones); otherwise why not.
  const char *foldable(const Node &n, std::vector<TensorPtr> &inputs) {
    if (!n.isDefaultDomain() && n.domain() != "ai.onnx.ml")
      return "not of the default or ai.onnx.ml domain";
    if (hasSubgraphs(n))
      return "owns subgraphs";
    if (n.numOperands() == 0)
      return "has no inputs";
    bool used = false;
    for (size_t i = 0; i < n.numResults(); ++i)
      used |= n.result(i) && n.result(i)->hasUses();
    if (!used)
      return "no result is used";
    inputs.assign(n.numOperands(), nullptr);
    bool any = false;
    for (size_t i = 0; i < n.numOperands(); ++i) {
      const Value *v = n.operand(i);
      if (!v)
        continue;
      inputs[i] = constantTensor(v);
      if (!inputs[i])
        return "an input is not a constant";
      any = true;
    }
    if (!any)
      return "has no inputs";
    if (const char *reason = keptOnPurpose(n))
      return reason;
    const rt::KernelDef *k =
        interp_.registry().find(n.domain() == "ai.onnx" ? "" : n.domain(), n.opType(), interp_.opsetVersionFor(n));
    if (!k)
      return "no kernel for this op and opset";
    if (!k->deterministic)
      return "the op is not deterministic";
    return nullptr;
  }

  std::optional<size_t> estimatedResultBytes(const Node &n) const {
    std::optional<size_t> best;
    for (size_t i = 0; i < n.numResults(); ++i)
      if (std::optional<size_t> b = staticValueBytes(n.result(i)))
        best = std::max(best.value_or(0), *b);
    if (best)
      return best;
    return generatorResultBytes(n);
  }

  /// The size guard: a result larger than its inputs may not exceed the
  /// size limit (nor, for a generator whose result would stay in the model,
  /// grow the constants by more than the generator limit).
  bool tooBig(const Node &n, size_t resultBytes, size_t inputBytes) const {
    if (resultBytes <= inputBytes)
      return false;
    if (resultBytes > sizeLimit_)
      return true;
    return isGenerator(n) && !internalGenerator(n) && resultBytes - inputBytes > generatorLimit_;
  }

  /// Given the main graph, Execute: records in computable_ the results of
  /// the nodes (of it and its bodies) that would fold: structurally
  /// foldable (the domains, no subgraph, not kept on purpose, a
  /// deterministic kernel), every present input a constant or such a
  /// result, no result known to exceed the size limit.
  void markComputable(const Graph &g) {
    for (const Node *n = g.firstNode(); n; n = n->next()) {
      if (hasSubgraphs(*n)) {
        for (const Graph *sg : n->subgraphs())
          markComputable(*sg);
        continue;
      }
      if ((!n->isDefaultDomain() && n->domain() != "ai.onnx.ml") || n->is("Constant") || keptOnPurpose(*n))
        continue;
      bool any = false, all = true;
      for (const Value *v : n->operands()) {
        if (!v)
          continue;
        any = true;
        all = all && (constantTensor(v) || computable_.count(v));
      }
      const rt::KernelDef *k =
          interp_.registry().find(n->domain() == "ai.onnx" ? "" : n->domain(), n->opType(), interp_.opsetVersionFor(*n));
      std::optional<size_t> est = estimatedResultBytes(*n);
      if (!any || !all || !k || !k->deterministic || (est && *est > sizeLimit_))
        continue;
      for (const Value *r : n->results())
        if (r)
          computable_.insert(r);
    }
  }

  /// Whether every use of generator `n`'s results is by a node that folds
  /// too: the generated tensor is then an intermediate of a constant chain
  /// (swin's shifted-window mask, an anchor grid), gone once the chain is
  /// folded, and only what crosses into the computed part of the graph
  /// stays (judged by the size limit).
  bool internalGenerator(const Node &n) const {
    for (const Value *r : n.results()) {
      if (!r)
        continue;
      for (Use *u = r->uses().first; u; u = u->next()) {
        const Node *user = u->owner();
        if (u->isGraphOutput() || !user || user->numResults() == 0)
          return false;
        for (const Value *ur : user->results())
          if (ur && !computable_.count(ur))
            return false;
      }
    }
    return true;
  }

  /// Warns once per message over the fixed-point rounds of one pipeline.
  void warnOnce(std::string message) {
    if (warned_.insert(message).second)
      context_.warn(message);
  }

  std::string limitName(size_t resultBytes) const {
    return resultBytes > sizeLimit_ ? "size limit" : "generator limit";
  }

  Rewriter rewriter_;
  PassContext &context_;
  size_t sizeLimit_;
  size_t generatorLimit_;
  /// Results of the nodes that would fold (markComputable).
  std::unordered_set<const Value *> computable_;
  std::unordered_set<std::string> &warned_;
  rt::Interpreter interp_;
};

class FoldConstantsPass : public Pass {
public:
  std::string_view name() const override { return "fold-constants"; }
  std::string_view description() const override {
    return "Evaluate nodes whose inputs are all constants; Constant nodes become initializers";
  }

  bool setOption(std::string_view key, std::string_view value, std::string &error) override {
    if (key != "size-limit" && key != "generator-limit")
      return Pass::setOption(key, value, error);
    size_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size()) {
      error = std::string(key) + ": expected a number of bytes, got '" + std::string(value) + "'";
      return false;
    }
    (key == "size-limit" ? sizeLimit_ : generatorLimit_) = v;
    return true;
  }
  std::string optionsText() const override {
    std::string text;
    if (sizeLimit_ != kDefaultSizeLimit)
      text = "size-limit=" + std::to_string(sizeLimit_);
    if (generatorLimit_ != kDefaultGeneratorLimit)
      text += (text.empty() ? "" : " ") + std::string("generator-limit=") + std::to_string(generatorLimit_);
    return text;
  }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    Folder folder(model, context, sizeLimit_, generatorLimit_, warned_);
    folder.run(*model.graph());
    return folder.changed();
  }

private:
  size_t sizeLimit_ = kDefaultSizeLimit;
  size_t generatorLimit_ = kDefaultGeneratorLimit;
  /// Kernel-error warnings already printed: the default pipeline runs this
  /// pass once per round, and a node that cannot fold says so once.
  std::unordered_set<std::string> warned_;
};

} // namespace

std::unique_ptr<Pass> createFoldConstantsPass() { return std::make_unique<FoldConstantsPass>(); }

} // namespace onnxslim
