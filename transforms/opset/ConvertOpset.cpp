//===- transforms/opset/ConvertOpset.cpp - Default-domain opset conversion ===//
//
// convert-opset{target=N allow-decline=false}: converts the model's
// default-domain (ai.onnx) opset to N (7..24), up or down, in the main
// graph and every subgraph, and updates the opset import (and, upgrading,
// the IR version when the target needs a newer one).
//
//   Before (opset 11):                     After (target=13):
//     y = Squeeze<axes = [1]>(x)             axes = Constant<value = int64[1] {1}>()
//     z = Softmax<axis = 1>(y)               y = Squeeze(x, axes)
//                                            f = Flatten<axis = 1>(y)
//                                            s = Softmax<axis = -1>(f)
//                                            shape = Shape(y)
//                                            z = Reshape(s, shape)
//   (Softmax-11 coerces its input to 2-D at `axis`; Softmax-13 normalizes
//   along one axis: the same only when `axis` is the last one.)
//
// Each node walks from its schema at the model's opset to the one at the
// target one version at a time (transforms/opset/Adapter.h); every step
// needs an adapter, written from the ONNX operator changelog
// (docs/Changelog.md). A node whose schema has the same since-version at
// both opsets is left alone.
//
// An op the target lacks altogether is written out in older ops by the
// adapter of the step below its first version (an expansion: its ONNX
// definition, Adapter.h); what any adapter writes with nodeBefore is
// typed and walked on to the target like the other nodes.
//
// Declined (nothing changes, a warning names the node, the op and the
// step, and counts every declining node by op): a node without an adapter
// for one of its steps, a downgrade of something the older opsets cannot
// express exactly (a bfloat16 tensor below 13, optional or sequence types,
// string ops, an unknown rank where a permutation needs one...), and a
// model with model-local functions (their bodies import opsets of their
// own). The conversion is all or nothing: the graph is restored when a node
// declines after others were converted, unless allow-decline=true, which
// converts every other node and leaves the declined ones at their own
// version (the model is then not valid ONNX at the target).
//
//===----------------------------------------------------------------------===//
#include "transforms/opset/Adapter.h"

#include "ir/OpSchema.h"
#include "ir/ShapeInference.h"
#include "transforms/Clone.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace onnxslim {
namespace opset {

//===----------------------------------------------------------------------===//
// Registry and helpers
//===----------------------------------------------------------------------===//

void AdapterRegistry::add(std::string_view op, int version, Direction direction, AdapterFn fn) {
  adapters_[std::make_tuple(std::string(op), version, direction)] = fn;
}

void AdapterRegistry::addBoth(std::string_view op, int version, AdapterFn fn) {
  add(op, version, Direction::Up, fn);
  add(op, version, Direction::Down, fn);
}

AdapterFn AdapterRegistry::find(std::string_view op, int version, Direction direction) const {
  auto it = adapters_.find(std::make_tuple(std::string(op), version, direction));
  return it == adapters_.end() ? nullptr : it->second;
}

const AdapterRegistry &builtinAdapters() {
  static const AdapterRegistry registry = [] {
    AdapterRegistry r;
    registerVersionBumps(r);
    registerAttributesToInputs(r);
    registerAxisSemantics(r);
    registerNormalization(r);
    registerResize(r);
    registerRenamed(r);
    registerBroadcast(r);
    registerScan(r);
    registerTransformerExpansions(r);
    registerFunctionExpansions(r);
    registerElementwiseExpansions(r);
    registerScatterExpansions(r);
    return r;
  }();
  return registry;
}

Value *StepContext::constantBefore(Node &node, std::string_view base, TensorPtr tensor) {
  std::string name = model.names().fresh(std::string(base));
  Node *c = node.graph()->createNode("Constant", {}, {name});
  c->setName(model.names().fresh(name + "_node"));
  Shape shape;
  for (int64_t d : tensor->dims())
    shape.push_back(Dim::value(d));
  Type t = Type::tensor(tensor->dtype(), shape);
  c->setAttr(Attribute::makeTensor("value", std::move(tensor)));
  node.graph()->insertBefore(&node, c);
  c->result(0)->setType(t);
  return c->result(0);
}

Node *StepContext::nodeBefore(Node &node, std::string opType, const std::vector<Value *> &operands,
                              std::string_view base) {
  std::string name = model.names().fresh(std::string(base));
  Node *n = node.graph()->createNode(std::move(opType), operands, {name});
  n->setName(model.names().fresh(name + "_node"));
  node.graph()->insertBefore(&node, n);
  created.push_back(n);
  return n;
}

TensorPtr StepContext::int64s(const std::vector<int64_t> &values, bool scalar) {
  std::vector<int64_t> dims;
  if (!scalar)
    dims.push_back(static_cast<int64_t>(values.size()));
  return Tensor::fromValues(DataType::Int64, dims, values);
}

std::string describe(const Node &node) {
  return node.opType() + (node.name().empty() ? "" : " '" + node.name() + "'");
}

std::string nodeBase(const Node &node, std::string_view what) {
  return (node.name().empty() ? node.opType() : node.name()) + "_" + std::string(what);
}

Node *createAxesOp(Node &node, StepContext &ctx, std::string opType, Value *x, const std::vector<int64_t> &axes,
                   std::string_view base) {
  std::vector<Value *> operands{x};
  if (ctx.target >= 13)
    operands.push_back(ctx.constantBefore(node, std::string(base) + "_axes", StepContext::int64s(axes)));
  Node *n = node.graph()->createNode(std::move(opType), operands, {ctx.model.names().fresh(std::string(base))});
  n->setName(ctx.model.names().fresh(n->result(0)->name() + "_node"));
  if (ctx.target < 13)
    n->setAttr(Attribute::makeInts("axes", axes));
  return n;
}

void wrapResult(Node &node, size_t i, Node *w, StepContext &ctx, std::optional<Type> inner, std::string_view what) {
  Value *r = node.result(i);
  std::string name = r->name();
  r->setName(ctx.model.names().fresh(name + "_" + std::string(what)));
  node.graph()->insertAfter(&node, w);
  Value *out = w->result(0);
  r->replaceUsesWithIf(out, [&](Use &u) { return u.owner() != w; });
  out->setType(r->type());
  out->valueInfoOrder = r->valueInfoOrder;
  out->info = std::move(r->info);
  r->valueInfoOrder = Value::kNoValueInfo;
  r->info = {};
  out->setName(name);
  r->setType(std::move(inner));
}

std::optional<std::vector<int64_t>> constantIntsOperand(const Node &node, size_t i) {
  return node.operand(i) ? constantInts(node.operand(i)) : std::nullopt;
}

void clearOperand(Node &node, size_t i) {
  Value *old = node.operand(i);
  if (!old)
    return;
  node.setOperand(i, nullptr);
  // A Constant only this operand read goes with it.
  if (Node *def = old->definingNode(); def && def->is("Constant") && def->resultsUnused())
    def->erase();
}

void trimOperands(Node &node) {
  size_t n = node.numOperands();
  while (n > 0 && !node.operand(n - 1))
    --n;
  node.resizeOperands(n);
}

bool attributeToInput(Node &node, StepContext &ctx, std::string_view name, size_t index) {
  const Attribute *a = node.attr(name);
  if (!a)
    return false;
  Value *v = ctx.constantBefore(node, nodeBase(node, name), StepContext::int64s(a->ints));
  node.removeAttr(name);
  if (node.numOperands() <= index)
    node.resizeOperands(index + 1);
  node.setOperand(index, v);
  return true;
}

std::string inputToAttribute(Node &node, size_t index, std::string_view name) {
  if (!node.operand(index))
    return "";
  std::optional<std::vector<int64_t>> values = constantInts(node.operand(index));
  if (!values)
    return "its input " + std::to_string(index) + " ('" + node.operand(index)->name() +
           "') is not a constant, and the older version takes it as attribute '" + std::string(name) + "'";
  node.setAttr(Attribute::makeInts(std::string(name), *values));
  clearOperand(node, index);
  trimOperands(node);
  return "";
}

bool isNeutralAttribute(std::string_view op, const Attribute &a) {
  auto allOnes = [&] { return std::all_of(a.ints.begin(), a.ints.end(), [](int64_t v) { return v == 1; }); };
  std::string_view n = a.name;
  if (a.kind == AttrKind::Int) {
    if (n == "select_last_index" || n == "ceil_mode" || n == "allowzero" || n == "layout" || n == "batch_dims" ||
        n == "training_mode" || n == "antialias" || n == "storage_order" || n == "block_size" || n == "noop_with_empty_axes" ||
        (n == "start" && op == "Shape"))
      return a.i == 0;
    if (n == "largest" || n == "sorted" || n == "saturate")
      return a.i == 1;
    if (n == "spatial" && op == "BatchNormalization")
      return a.i == 1;
  }
  if (a.kind == AttrKind::Ints && n == "dilations")
    return allOnes();
  if (a.kind == AttrKind::String) {
    if (n == "mode" && op == "DepthToSpace")
      return a.s == "DCR";
    if (n == "reduction")
      return a.s == "none";
    if (n == "keep_aspect_ratio_policy")
      return a.s == "stretch";
  }
  return false;
}

namespace {

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

/// The lowest IR version whose spec has default-domain opset `opset`.
int64_t irVersionFor(int64_t opset) {
  static const int64_t kIr[] = {/*0*/ 3, 3, 3, 3, 3, 3, 3, 3, 3, /*9*/ 4, 5, 6, 7, 7, 7, /*15*/ 8, 8, 8, 8,
                                /*19*/ 9, 9, /*21*/ 10, 10, /*23*/ 11, /*24*/ 11};
  return opset >= 0 && opset < static_cast<int64_t>(std::size(kIr)) ? kIr[opset] : 11;
}

/// The first opset with each element type (older ones cannot express it).
int64_t firstOpsetOf(DataType t) {
  switch (t) {
  case DataType::BFloat16: return 13;
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ: return 19;
  case DataType::UInt4:
  case DataType::Int4: return 21;
  case DataType::Float4E2M1: return 23;
  case DataType::Float8E8M0: return 24;
  default: return 0;
  }
}

/// The since-versions of every schema of `op` (deprecations included), ascending.
std::vector<int> versionsOf(std::string_view op) {
  std::vector<int> out;
  for (const OpSchema &s : allOpSchemas())
    if (s.domain.empty() && s.opType == op)
      out.push_back(s.sinceVersion);
  return out;
}

class ConvertOpsetPass : public Pass {
public:
  std::string_view name() const override { return "convert-opset"; }
  std::string_view description() const override {
    return "Convert the default-domain opset to target=N (7..24, up or down), node by node; declines the whole "
           "model when a node has no form or adapter";
  }

  bool setOption(std::string_view key, std::string_view value, std::string &error) override {
    if (key == "target") {
      int v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || p != value.data() + value.size() || v < kMinOpset || v > maxKnownDefaultOpset()) {
        error = "option target of convert-opset takes an opset from " + std::to_string(kMinOpset) + " to " +
                std::to_string(maxKnownDefaultOpset()) + ", not '" + std::string(value) + "'";
        return false;
      }
      target_ = v;
      return true;
    }
    if (key == "allow-decline") {
      if (value != "true" && value != "false") {
        error = "option allow-decline of convert-opset takes true or false, not '" + std::string(value) + "'";
        return false;
      }
      allowDecline_ = value == "true";
      return true;
    }
    return Pass::setOption(key, value, error);
  }
  std::string optionsText() const override {
    std::string text = target_ == maxKnownDefaultOpset() ? "" : "target=" + std::to_string(target_);
    if (allowDecline_)
      text += std::string(text.empty() ? "" : " ") + "allow-decline=true";
    return text;
  }

  bool run(Model &model, PassContext &context) override;

  static constexpr int kMinOpset = 7;

private:
  /// A node that cannot reach the target: its position among the
  /// default-domain nodes (graphs in walk order), its op and the message.
  struct Decline {
    size_t position;
    std::string op;
    std::string text;
  };
  /// Given a model at opset `from` and positions to leave alone, Execute:
  /// walks every other default-domain node to the target (counted in
  /// `converted`), Result: the nodes that could not be.
  std::vector<Decline> convertAll(Model &model, int64_t from, const std::set<size_t> &skip, uint64_t &converted);
  /// Given a node, Execute: walks it to the target, Result: "" or why not.
  std::string convertNode(Node &node, Model &model, int64_t from);
  /// Given a node after a step to `version`, Execute: drops neutral
  /// attributes the schema lacks (downgrades), Result: "" or why the node
  /// does not fit that schema.
  std::string fitSchema(Node &node, int64_t version, Direction dir);

  int64_t target_ = maxKnownDefaultOpset();
  bool allowDecline_ = false;
};

std::string ConvertOpsetPass::fitSchema(Node &node, int64_t version, Direction dir) {
  const OpSchema *s = lookupOpSchema("", node.opType(), version);
  if (!s)
    return node.opType() + " has no form at opset " + std::to_string(version);
  std::vector<std::string> drop;
  for (const Attribute &a : node.attributes()) {
    if (s->attribute(a.name))
      continue;
    if (dir == Direction::Down && isNeutralAttribute(node.opType(), a)) {
      drop.push_back(a.name);
      continue;
    }
    return "attribute '" + a.name + "' has no form in " + node.opType() + "-" + std::to_string(s->sinceVersion) +
           (dir == Direction::Down ? " (only its default value could be dropped)" : "");
  }
  for (const std::string &n : drop)
    node.removeAttr(n);
  trimOperands(node);
  node.trimResults();
  int64_t in = static_cast<int64_t>(node.numOperands());
  if (s->maxInputs != OpSchema::kUnbounded && in > s->maxInputs)
    return "it has " + std::to_string(in) + " inputs; " + node.opType() + "-" + std::to_string(s->sinceVersion) +
           " takes at most " + std::to_string(s->maxInputs);
  for (int64_t i = 0; i < s->minInputs && i < in; ++i)
    if (!node.operand(static_cast<size_t>(i)) && s->maxInputs != OpSchema::kUnbounded)
      return "its input " + std::to_string(i) + " is omitted; " + node.opType() + "-" +
             std::to_string(s->sinceVersion) + " requires it";
  if (in < s->minInputs)
    return "it has " + std::to_string(in) + " inputs; " + node.opType() + "-" + std::to_string(s->sinceVersion) +
           " requires " + std::to_string(s->minInputs);
  int64_t out = static_cast<int64_t>(node.numResults());
  while (out > 0 && !node.result(static_cast<size_t>(out - 1)))
    --out;
  if (s->maxOutputs != OpSchema::kUnbounded && out > s->maxOutputs)
    return "it has " + std::to_string(out) + " outputs; " + node.opType() + "-" + std::to_string(s->sinceVersion) +
           " has at most " + std::to_string(s->maxOutputs);
  return "";
}

std::string ConvertOpsetPass::convertNode(Node &node, Model &model, int64_t from) {
  const AdapterRegistry &adapters = builtinAdapters();
  const OpSchema *start = lookupOpSchema("", node.opType(), from);
  // A version deprecated in place (GroupNormalization-18) is left upward.
  if (const OpSchema *dep = findOpSchemaVersion("", node.opType(), from);
      !start && dep && dep->deprecated && isSupersededInPlace(node.opType(), dep->sinceVersion))
    start = dep;
  if (!start)
    return node.opType() + " is not an operator of opset " + std::to_string(from);
  int64_t version = start->sinceVersion; // the since-version the node is at
  Direction dir = target_ > from ? Direction::Up : Direction::Down;
  for (int guard = 0; guard < 64; ++guard) {
    int64_t next = 0;
    if (dir == Direction::Up) {
      for (int s : versionsOf(node.opType()))
        if (s > version && s <= target_) {
          next = s;
          break;
        }
      if (!next)
        break;
    } else {
      const OpSchema *cur = findOpSchemaVersion("", node.opType(), version);
      if (!cur || cur->sinceVersion <= target_)
        break;
      const OpSchema *prev = findOpSchemaVersion("", node.opType(), cur->sinceVersion - 1);
      if (!prev || prev->deprecated) {
        // The op is older than its first version: only an adapter that
        // replaces it by other ops (CastLike -> Cast) takes it further.
        if (!adapters.find(node.opType(), cur->sinceVersion, dir))
          return node.opType() + " has no form at opset " + std::to_string(target_) + " (it was introduced at " +
                 std::to_string(cur->sinceVersion) + ")";
        next = cur->sinceVersion - 1;
      } else {
        next = prev->sinceVersion;
      }
      version = cur->sinceVersion;
    }
    int64_t key = dir == Direction::Up ? next : version;
    std::string op = node.opType();
    AdapterFn fn = adapters.find(op, static_cast<int>(key), dir);
    std::string step = op + "-" + std::to_string(version) + " -> " + op + "-" + std::to_string(next);
    if (!fn)
      return "no adapter for " + step;
    StepContext ctx{model, dir, version, next, target_, {}};
    if (std::string why = fn(node, ctx); !why.empty())
      return step + ": " + why;
    // An adapter may replace the op (Upsample-10 -> Resize-10): it then
    // stands at the same version in the new op's history.
    const OpSchema *now = findOpSchemaVersion("", node.opType(), next);
    if (!now || now->deprecated)
      return "no adapter for " + step + " (" + node.opType() + " has no form at opset " + std::to_string(next) + ")";
    if (std::string why = fitSchema(node, next, dir); !why.empty())
      return step + ": " + why;
    // What the adapter wrote is in its form at the opset the step lands in
    // (going down, the one just below the newer version: Slice-10 -> 1
    // lands in 9): typed there, then walked on.
    int64_t landed = dir == Direction::Down ? version - 1 : next;
    for (Node *c : ctx.created) {
      // Inferred at `landed` (the model still imports the source opset,
      // under which Unsqueeze<axes> or ReduceSum<axes> would read as
      // malformed).
      OpsetId *def = nullptr;
      for (OpsetId &id : model.opsetImport)
        if (id.domain.empty() || id.domain == "ai.onnx")
          def = &id;
      int64_t saved = def ? def->version : 0;
      if (def)
        def->version = landed;
      for (size_t i = 0; i < c->numResults(); ++i)
        if (Value *r = c->result(i); r && !r->type())
          if (std::optional<Type> t = inferNodeResultType(*c, i))
            r->setType(std::move(*t));
      if (def)
        def->version = saved;
      if (std::string why = convertNode(*c, model, landed); !why.empty())
        return step + ": its " + describe(*c) + ": " + why;
    }
    version = next;
  }
  if (!lookupOpSchema("", node.opType(), target_))
    return node.opType() + " has no form at opset " + std::to_string(target_);
  if (dir == Direction::Down) {
    auto tooNew = [&](const Value *v) -> std::string {
      std::optional<DataType> t = v ? knownElemType(v) : std::nullopt;
      if (t && firstOpsetOf(*t) > target_)
        return "'" + v->name() + "' is " + dataTypeName(*t) + ", which opset " + std::to_string(target_) +
               " does not have";
      return "";
    };
    for (Value *v : node.operands())
      if (std::string why = tooNew(v); !why.empty())
        return why;
    for (Value *v : node.results())
      if (std::string why = tooNew(v); !why.empty())
        return why;
  }
  return "";
}

std::vector<ConvertOpsetPass::Decline> ConvertOpsetPass::convertAll(Model &model, int64_t from,
                                                                   const std::set<size_t> &skip,
                                                                   uint64_t &converted) {
  std::vector<Graph *> graphs{model.graph()};
  model.graph()->walk([&](Node *n) {
    for (Graph *sg : n->subgraphs())
      graphs.push_back(sg);
  });
  std::vector<Decline> declines;
  size_t position = 0;
  for (Graph *g : graphs) {
    std::vector<Node *> nodes;
    for (Node *n : g->nodes())
      if (n->isDefaultDomain())
        nodes.push_back(n);
    for (Node *n : nodes) {
      size_t at = position++;
      if (skip.count(at))
        continue;
      std::string what = describe(*n);
      std::string op = n->opType();
      std::string path;
      for (Node *p = g->parentNode(); p; p = p->graph()->parentNode())
        path = " in the subgraph of " + describe(*p) + path;
      if (std::string why = convertNode(*n, model, from); !why.empty()) {
        declines.push_back({at, op, "node " + what + path + ": " + why});
        continue;
      }
      ++converted;
    }
  }
  return declines;
}

bool ConvertOpsetPass::run(Model &model, PassContext &context) {
  if (!model.graph())
    return false;
  int64_t from = model.opsetVersion("");
  if (from < 0 || from == target_)
    return false;
  auto decline = [&](const std::string &why) {
    context.warn("declined: " + why + "; the model stays at opset " + std::to_string(from));
    context.counter("declined", "Models declined") += 1;
    return false;
  };
  if (from > maxKnownDefaultOpset())
    return decline("the model's opset " + std::to_string(from) + " is newer than this tool knows");
  if (!model.functions.empty())
    return decline("the model has model-local functions, whose bodies are not converted");

  // Types (ranks, element types) some adapters need, at the source opset.
  ShapeInferenceOptions inferOpts;
  inferOpts.addValueInfo = false;
  inferShapes(model, inferOpts);

  std::unique_ptr<Graph> snapshot = cloneGraph(*model.graph());
  if (!snapshot)
    return decline("the graph could not be copied");

  uint64_t converted = 0;
  std::vector<Decline> declines = convertAll(model, from, {}, converted);
  if (!declines.empty()) {
    // All or nothing: the graph as it was, then (allow-decline) everything
    // but the declined nodes converted again, from the same positions.
    model.setGraph(std::move(snapshot));
    std::map<std::string, size_t> byOp;
    for (const Decline &d : declines)
      ++byOp[d.op];
    std::string summary;
    if (declines.size() > 1) {
      summary = " (" + std::to_string(declines.size()) + " nodes decline:";
      for (const auto &entry : byOp)
        summary += " " + entry.first + " " + std::to_string(entry.second) + (entry.first == byOp.rbegin()->first ? "" : ",");
      summary += ")";
    }
    if (!allowDecline_)
      return decline(declines.front().text + summary);
    std::set<size_t> skip;
    for (const Decline &d : declines) {
      skip.insert(d.position);
      context.warn("left at its own version (allow-decline): " + d.text);
    }
    converted = 0;
    if (std::vector<Decline> again = convertAll(model, from, skip, converted); !again.empty()) {
      // Not expected (each node converts alone); kept all or nothing.
      return decline(again.front().text);
    }
    context.counter("left", "Nodes left at their own version (allow-decline)") += declines.size();
  }

  for (OpsetId &id : model.opsetImport)
    if (id.domain.empty() || id.domain == "ai.onnx")
      id.version = target_;
  if (target_ > from && model.irVersion > 0 && model.irVersion < irVersionFor(target_))
    model.irVersion = irVersionFor(target_);
  context.counter("nodes", "Default-domain nodes walked to the target opset") += converted;
  return true;
}

} // namespace
} // namespace opset

std::unique_ptr<Pass> createConvertOpsetPass() { return std::make_unique<opset::ConvertOpsetPass>(); }

} // namespace onnxslim
