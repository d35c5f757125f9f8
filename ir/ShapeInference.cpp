//===- ir/ShapeInference.cpp - Type and shape inference -------------------===//
//
// The driver: walks each graph in topological order, runs the op's rule
// (ir/shape/*.cpp) on what is known of its operands, combines the result with
// the value's existing type, and records it in a side table keyed by Value.
// Bodies of If/Loop/Scan/SequenceMap are inferred when their rule asks, with
// input facts from the parent op's semantics. Types are written back to the
// IR once, at the end, from the table:
//
//  - a node result or subgraph input without a type gets the inferred one;
//  - an existing type is kept and only its unknown parts are filled (element
//    type, rank, unknown dims), unless `overwrite`; a contradiction between
//    the two is a warning and the existing type wins;
//  - main-graph input types change only through `inputShapes`; GraphOutput
//    declared types are never touched;
//  - dims: constants and the model's own symbols are written; anonymous and
//    composite expressions are written as unknown dims.
//
// Unknown dims of inputs and results are given fresh anonymous atoms in the
// table, so a dim read through Shape and fed back through Reshape is still
// known to be the same size.
//
//===----------------------------------------------------------------------===//
#include "ir/ShapeInference.h"

#include "ir/IR.h"
#include "ir/shape/InferContext.h"

#include <unordered_map>
#include <unordered_set>

namespace onnxslim {

using shape::Facts;
using shape::InferContext;
using shape::InferFn;

namespace {

/// Depth up to which the per-node API infers an operand's producer on demand.
constexpr int kMaxOnDemandDepth = 48;

std::string describeNode(const Node &n) {
  std::string s = "node '" + n.name() + "' (";
  if (!n.isDefaultDomain())
    s += n.domain() + ":";
  return s + n.opType() + ")";
}

/// `main / node 'If_3' (If) / then_branch`: where a graph sits in the model.
std::string graphPath(const Graph *g) {
  std::string path;
  while (g) {
    Node *parent = g->parentNode();
    std::string here;
    if (!parent) {
      here = g->name.empty() ? "main graph" : "graph '" + g->name + "'";
    } else {
      std::string attr;
      for (const Attribute &a : parent->attributes())
        for (Graph *sub : a.subgraphs())
          if (sub == g)
            attr = a.name;
      here = describeNode(*parent) + " / " + attr;
    }
    path = path.empty() ? here : here + " / " + path;
    g = parent ? parent->graph() : nullptr;
  }
  return path;
}

std::string typeText(const Type &t);

std::string shapeText(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    const Dim &d = s[i];
    out += (i ? "," : "") + (d.isValue()    ? std::to_string(d.getValue())
                             : d.isSymbol() ? d.getSymbol()
                                            : "?");
  }
  return out + "]";
}

std::string typeText(const Type &t) {
  switch (t.kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    return dataTypeName(t.elemType()) + (t.shape() ? shapeText(*t.shape()) : "[*]");
  case Type::Kind::Sequence: return "seq(" + (t.inner() ? typeText(*t.inner()) : "?") + ")";
  case Type::Kind::Optional: return "optional(" + (t.inner() ? typeText(*t.inner()) : "?") + ")";
  case Type::Kind::Map:
    return "map(" + dataTypeName(t.elemType()) + ", " + (t.inner() ? typeText(*t.inner()) : "?") +
           ")";
  default: return "?";
  }
}

/// Fills the unknown parts of `existing` from `inferred` (same kind only).
Type fillType(const Type &existing, const Type &inferred) {
  if (existing.kind() != inferred.kind())
    return existing;
  Type out = existing;
  switch (existing.kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    if (!existing.hasElemType || existing.elemType() == DataType::Undefined) {
      out.setElemType(inferred.elemType());
      out.hasElemType = inferred.elemType() != DataType::Undefined;
    }
    if (!existing.shape()) {
      out.shape() = inferred.shape();
    } else if (inferred.shape() && inferred.shape()->size() == existing.shape()->size()) {
      for (size_t i = 0; i < existing.shape()->size(); ++i) {
        Dim &d = (*out.shape())[i];
        if (d.isUnknown() || (d.isSymbol() && d.getSymbol().empty())) {
          std::string denotation = d.denotation;
          d = (*inferred.shape())[i];
          d.denotation = denotation;
        }
      }
    }
    return out;
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    if (existing.inner() && inferred.inner())
      *out.inner() = fillType(*existing.inner(), *inferred.inner());
    return out;
  default: return out;
  }
}

/// Whether `existing` and `inferred` contradict (different kinds, element
/// types, ranks or known dims).
bool contradicts(const Type &existing, const Type &inferred) {
  if (existing.kind() != inferred.kind())
    return existing.kind() != Type::Kind::Empty;
  switch (existing.kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    if (existing.hasElemType && existing.elemType() != DataType::Undefined &&
        inferred.elemType() != DataType::Undefined && existing.elemType() != inferred.elemType())
      return true;
    if (existing.shape() && inferred.shape()) {
      if (existing.shape()->size() != inferred.shape()->size())
        return true;
      for (size_t i = 0; i < existing.shape()->size(); ++i) {
        const Dim &a = (*existing.shape())[i], &b = (*inferred.shape())[i];
        if (a.isValue() && b.isValue() && a.getValue() != b.getValue())
          return true;
      }
    }
    return false;
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    return existing.inner() && inferred.inner() &&
           contradicts(*existing.inner(), *inferred.inner());
  default: return false;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Impl
//===----------------------------------------------------------------------===//

struct ShapeInferencer::Impl {
  Model *model;
  ShapeInferenceOptions options;
  std::unordered_map<const Value *, Facts> facts;
  uint64_t anonCounter = 0;
  /// Values whose facts were inferred (node results, subgraph inputs), in order.
  std::vector<const Value *> touched;
  std::unordered_set<const Value *> touchedSet;
  /// Every record() in order, repeats included (updateNode writes these).
  std::vector<const Value *> recent;
  std::vector<std::string> warnings;
  std::unordered_set<std::string> warningSet;
  int onDemandDepth = 0;
  /// Above 0 while inferring a body that never runs: no warnings.
  int quietDepth = 0;
  /// Malformed nodes found so far, per graph they sit in (not nested bodies).
  std::unordered_map<const Graph *, size_t> failures;

  Impl(Model *m, ShapeInferenceOptions o) : model(m), options(std::move(o)) {}

  void warn(std::string msg) {
    if (quietDepth == 0 && warningSet.insert(msg).second)
      warnings.push_back(std::move(msg));
  }

  void warnNode(const Node &n, const std::string &msg) {
    warn(graphPath(n.graph()) + " / " + describeNode(n) + ": " + msg);
  }

  int64_t opsetFor(const Node &n) const {
    const Model *m = model ? model : (n.graph() ? n.graph()->model() : nullptr);
    int64_t v = m ? m->opsetVersion("") : -1;
    return v > 0 ? v : shape::kLatestOpset;
  }

  /// Gives every unknown dim of a tensor a fresh anonymous atom.
  void freshen(Facts &f) {
    if (!f.isTensor() || !f.shape)
      return;
    for (SymDim &d : *f.shape)
      if (d.isUnknown())
        d = SymDim::anonymous(++anonCounter);
  }

  //===--- Lookup -------------------------------------------------------===//

  /// Facts for a value not inferred in this run: from its data, its
  /// producer (on demand, bounded depth) or its declared type.
  Facts derive(const Value *v) {
    if (v->defKind() == Value::DefKind::Initializer && v->initializer())
      return Facts::ofConstant(v->initializer());
    if (v->defKind() == Value::DefKind::Initializer && v->sparseInitializer()) {
      SymShape s;
      for (int64_t d : v->sparseInitializer()->dims)
        s.push_back(SymDim::constant(d));
      const auto &vals = v->sparseInitializer()->values;
      return Facts::tensor(vals ? vals->dtype() : DataType::Undefined, s);
    }
    if (v->isGraphInput() && v->initializer() && (initializerInputsAreConstant() || !v->type()))
      return inputFacts(*v);
    if (const Node *producer = v->definingNode();
        producer && onDemandDepth < kMaxOnDemandDepth && producer->subgraphs().empty()) {
      ++onDemandDepth;
      std::vector<std::optional<Facts>> results = computeResults(*producer, nullptr);
      --onDemandDepth;
      std::optional<Facts> mine =
          v->resultNumber() < results.size() ? results[v->resultNumber()] : std::nullopt;
      Facts f = combine(*v, mine, nullptr);
      freshen(f);
      return f;
    }
    Facts f = v->type() ? Facts::fromType(*v->type()) : Facts();
    freshen(f);
    return f;
  }

  const Facts *lookup(const Value *v) {
    auto it = facts.find(v);
    if (it != facts.end())
      return &it->second;
    Facts f = derive(v);
    return &facts.insert_or_assign(v, std::move(f)).first->second;
  }

  //===--- Combining with existing types -------------------------------===//

  /// The facts a value ends with: the inferred facts, refined by (or, on a
  /// contradiction, yielding to) its existing type unless overwriting.
  Facts combine(const Value &v, const std::optional<Facts> &inferred, const Node *where) {
    const std::optional<Type> &existing = v.type();
    if (!inferred || !inferred->type)
      return existing ? Facts::fromType(*existing) : Facts();
    if (!existing || options.overwrite || existing->kind() == Type::Kind::Empty)
      return *inferred;
    Type inferredType = inferred->toType();
    if (contradicts(*existing, inferredType)) {
      std::string msg = std::string(v.definingNode() ? "result '" : "input '") + v.name() +
                        "' is declared " + typeText(*existing) + " but inferred " +
                        typeText(inferredType) + "; keeping the declared type";
      if (where)
        warnNode(*where, msg);
      return Facts::fromType(*existing);
    }
    if (!inferred->isTensor())
      return *inferred;
    Facts e = Facts::fromType(*existing);
    Facts out = *inferred;
    if (out.elem() == DataType::Undefined && e.elem() != DataType::Undefined)
      out.type = e.type;
    if (!out.shape) {
      out.shape = e.shape;
    } else if (e.shape && e.shape->size() == out.shape->size()) {
      for (size_t i = 0; i < out.shape->size(); ++i)
        if ((*out.shape)[i].isUnknown())
          (*out.shape)[i] = (*e.shape)[i];
    }
    return out;
  }

  //===--- Nodes --------------------------------------------------------===//

  /// Runs the node's rule; nullopt entries where nothing is inferred. A
  /// malformed node is reported through `error` (or warned when null).
  std::vector<std::optional<Facts>> computeResults(const Node &n, std::string *error) {
    std::vector<std::optional<Facts>> none(n.numResults());
    InferFn fn = n.isDefaultDomain() ? shape::findRule(n.opType())
                                     : shape::findDomainRule(n.domain(), n.opType());
    if (!fn) {
      if (options.strict)
        warnNode(n, "no shape inference rule for this op");
      return none;
    }
    InferContext ctx(
        n, opsetFor(n), [this](const Value *v) { return lookup(v); },
        [this](const Graph &g, const std::vector<std::optional<Facts>> &inputs, bool quiet,
               bool *fails) {
          quietDepth += quiet;
          size_t before = failures[&g];
          auto outs = inferSubgraph(g, inputs);
          if (fails)
            *fails = failures[&g] > before;
          quietDepth -= quiet;
          return outs;
        },
        &anonCounter);
    fn(ctx);
    if (ctx.failed()) {
      if (error)
        *error = ctx.error();
      return none;
    }
    return ctx.takeResults();
  }

  void record(const Value *v, Facts f) {
    freshen(f);
    facts.insert_or_assign(v, std::move(f));
    recent.push_back(v);
    if (touchedSet.insert(v).second)
      touched.push_back(v);
  }

  void inferNode(const Node &n) {
    std::string error;
    std::vector<std::optional<Facts>> results = computeResults(n, &error);
    if (!error.empty()) {
      warnNode(n, error);
      ++failures[n.graph()];
    }
    for (size_t i = 0; i < n.numResults(); ++i)
      if (const Value *v = n.result(i))
        record(v, combine(*v, results[i], &n));
  }

  //===--- Graphs -------------------------------------------------------===//

  void seedLeaves(const Graph &g) {
    for (const Value *v : g.initializers())
      if (v->defKind() == Value::DefKind::Initializer && !facts.count(v))
        facts.emplace(v, derive(v));
    for (const Value *v : g.sparseInitializers())
      if (!facts.count(v))
        facts.emplace(v, derive(v));
  }

  /// Before IR version 4 every initializer had to be listed as a graph
  /// input, so such inputs are constants; later, an input's initializer is
  /// only a default that the caller may override.
  bool initializerInputsAreConstant() const {
    return model && model->irVersion > 0 && model->irVersion < 4;
  }

  Facts inputFacts(const Value &v) {
    Facts f = v.type() ? Facts::fromType(*v.type()) : Facts();
    if (v.initializer() && (initializerInputsAreConstant() || !v.type())) {
      f = Facts::ofConstant(v.initializer());
      if (!initializerInputsAreConstant())
        f.constant.reset();
    }
    freshen(f);
    return f;
  }

  void inferMainGraph(Graph &g) {
    for (Value *v : g.inputs())
      facts.insert_or_assign(v, inputFacts(*v));
    seedLeaves(g);
    for (const Node *n : g.nodes())
      inferNode(*n);
  }

  std::optional<std::vector<std::optional<Facts>>>
  inferSubgraph(const Graph &g, const std::vector<std::optional<Facts>> &inputs) {
    if (inputs.size() != g.inputs().size()) {
      warn(graphPath(&g) + ": the body has " + std::to_string(g.inputs().size()) +
           " inputs; the op provides " + std::to_string(inputs.size()));
      return std::nullopt;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Value *v = g.inputs()[i];
      record(v, combine(*v, inputs[i], g.parentNode()));
    }
    seedLeaves(g);
    for (const Node *n : g.nodes())
      inferNode(*n);
    std::vector<std::optional<Facts>> outs;
    for (size_t i = 0; i < g.numOutputs(); ++i) {
      const Value *v = g.output(i);
      const auto &declared = g.outputSlots()[i].type;
      std::optional<Facts> f;
      if (v) {
        const Facts *known = lookup(v);
        if (known->type)
          f = *known;
      }
      if (!f && declared)
        f = Facts::fromType(*declared);
      outs.push_back(std::move(f));
    }
    return outs;
  }

  //===--- Write-back --------------------------------------------------===//

  /// Writes the table's facts for `v` into its type; Result: whether it changed.
  bool writeBack(const Value *cv) {
    auto it = facts.find(cv);
    if (it == facts.end() || !it->second.type)
      return false;
    const Facts &f = it->second;
    if (f.isTensor() && f.elem() == DataType::Undefined)
      return false;
    // The inferencer was given the model mutably; the table only keys by const.
    Value *v = const_cast<Value *>(cv);
    Type inferred = f.toType();
    std::optional<Type> next;
    if (!v->type() || options.overwrite || v->type()->kind() == Type::Kind::Empty)
      next = inferred;
    else if (contradicts(*v->type(), inferred))
      return false;
    else
      next = fillType(*v->type(), inferred);
    if (v->type() && *v->type() == *next)
      return false;
    v->setType(std::move(next));
    if (options.addValueInfo && v->definingNode() && v->valueInfoOrder == Value::kNoValueInfo &&
        !isOutputOfItsGraph(*v))
      v->valueInfoOrder = v->graph()->nextValueInfoOrder();
    return true;
  }

  static bool isOutputOfItsGraph(const Value &v) {
    for (Use *u : v.uses())
      if (u->isGraphOutput() && u->ownerGraph() == v.graph())
        return true;
    return false;
  }

  size_t writeTouched(size_t from) {
    size_t changed = 0;
    for (size_t i = from; i < touched.size(); ++i)
      changed += writeBack(touched[i]);
    return changed;
  }

  void applyInputOverrides(Graph &g) {
    for (const auto &[name, shape] : options.inputShapes) {
      Value *input = nullptr;
      for (Value *v : g.inputs())
        if (v->name() == name)
          input = v;
      if (!input) {
        warn("input-shapes: the model has no input named '" + name + "'");
        continue;
      }
      if (input->type() && !input->type()->isTensor()) {
        warn("input-shapes: input '" + name + "' is not a tensor");
        continue;
      }
      Type t = input->type() ? *input->type() : Type::tensor(DataType::Undefined);
      if (!input->type())
        t.hasElemType = false;
      t.shape() = shape;
      input->setType(std::move(t));
    }
  }

  void reportUntyped() {
    for (const Value *v : touched)
      if (v->definingNode() && !v->type())
        warnNode(*v->definingNode(), "result '" + v->name() + "' has no type");
  }

  ShapeInferenceResult run() {
    ShapeInferenceResult result;
    facts.clear();
    touched.clear();
    touchedSet.clear();
    recent.clear();
    failures.clear();
    warnings.clear();
    warningSet.clear();
    if (!model || !model->graph())
      return result;
    applyInputOverrides(*model->graph());
    inferMainGraph(*model->graph());
    result.valuesTyped = writeTouched(0);
    recent.clear();
    if (options.strict)
      reportUntyped();
    result.warnings = warnings;
    return result;
  }
};

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

ShapeInferencer::ShapeInferencer(Model &model, ShapeInferenceOptions options)
    : impl_(std::make_unique<Impl>(&model, std::move(options))) {}

ShapeInferencer::~ShapeInferencer() = default;

ShapeInferenceResult ShapeInferencer::run() { return impl_->run(); }

std::vector<std::optional<Type>>
ShapeInferencer::inferResultTypes(const Node &node, std::vector<std::string> *warnings) {
  std::string error;
  std::vector<std::optional<Facts>> results = impl_->computeResults(node, &error);
  if (!error.empty() && warnings)
    warnings->push_back(graphPath(node.graph()) + " / " + describeNode(node) + ": " + error);
  std::vector<std::optional<Type>> out;
  for (const auto &f : results) {
    if (f && f->type && !(f->isTensor() && f->elem() == DataType::Undefined))
      out.push_back(f->toType());
    else
      out.push_back(std::nullopt);
  }
  return out;
}

std::optional<Type> ShapeInferencer::inferResultType(const Node &node, size_t resultIndex) {
  std::vector<std::optional<Type>> all = inferResultTypes(node);
  return resultIndex < all.size() ? all[resultIndex] : std::nullopt;
}

size_t ShapeInferencer::updateNode(Node &node, std::vector<std::string> *warnings) {
  // Report this node's warnings even if an earlier run already did.
  std::unordered_set<std::string> seen = std::move(impl_->warningSet);
  impl_->warningSet.clear();
  size_t before = impl_->warnings.size();
  impl_->recent.clear();
  impl_->inferNode(node);
  size_t changed = 0;
  std::unordered_set<const Value *> written;
  for (const Value *v : impl_->recent)
    if (written.insert(v).second)
      changed += impl_->writeBack(v);
  if (warnings)
    warnings->insert(warnings->end(), impl_->warnings.begin() + static_cast<ptrdiff_t>(before),
                     impl_->warnings.end());
  impl_->warningSet.merge(seen);
  return changed;
}

std::optional<std::vector<SymDim>> ShapeInferencer::symbolicElements(const Value *v) {
  if (!v)
    return std::nullopt;
  const Facts *f = impl_->lookup(v);
  if (f->elements)
    return f->elements;
  if (f->constant)
    return shape::tensorElements(*f->constant);
  return std::nullopt;
}

std::optional<std::vector<Dim>> ShapeInferencer::symbolicValue(const Value *v) {
  auto e = symbolicElements(v);
  if (!e)
    return std::nullopt;
  std::vector<Dim> out;
  out.reserve(e->size());
  for (const SymDim &d : *e) {
    // Contents may be negative (-1 in a Reshape target): keep them as numbers.
    auto c = d.constantValue();
    out.push_back(c ? Dim::value(*c) : d.toDim());
  }
  return out;
}

std::optional<SymShape> ShapeInferencer::symbolicShape(const Value *v) {
  if (!v)
    return std::nullopt;
  const Facts *f = impl_->lookup(v);
  if (!f->isTensor())
    return std::nullopt;
  return f->shape;
}

void ShapeInferencer::forget(const Value *v) {
  impl_->facts.erase(v);
  std::erase(impl_->recent, v);
  if (impl_->touchedSet.erase(v))
    std::erase(impl_->touched, v);
}

void ShapeInferencer::clear() {
  impl_->facts.clear();
  impl_->touched.clear();
  impl_->touchedSet.clear();
  impl_->recent.clear();
}

ShapeInferenceResult inferShapes(Model &model, const ShapeInferenceOptions &options) {
  ShapeInferencer inferencer(model, options);
  return inferencer.run();
}

std::optional<Type> inferNodeResultType(const Node &node, size_t resultIndex,
                                        std::vector<std::string> *warnings) {
  Model *model = node.graph() ? node.graph()->model() : nullptr;
  ShapeInferencer::Impl impl(model, {});
  std::string error;
  std::vector<std::optional<Facts>> results = impl.computeResults(node, &error);
  if (!error.empty() && warnings)
    warnings->push_back(describeNode(node) + ": " + error);
  if (resultIndex >= results.size() || !results[resultIndex] || !results[resultIndex]->type)
    return std::nullopt;
  const Facts &f = *results[resultIndex];
  if (f.isTensor() && f.elem() == DataType::Undefined)
    return std::nullopt;
  return f.toType();
}

std::unordered_map<const Value *, Type> inferTypesFromOps(const Model &model, std::vector<std::string> *contradictions) {
  std::unordered_map<const Value *, Type> out;
  if (!model.graph())
    return out;
  ShapeInferenceOptions options;
  options.overwrite = true;
  // The Impl holds the model mutably for run()'s write-back, which is not
  // called here: only its own tables change.
  ShapeInferencer::Impl impl(const_cast<Model *>(&model), options);
  impl.quietDepth = contradictions ? 0 : 1; // else warnings are the shape-inference pass's to give
  impl.inferMainGraph(*const_cast<Graph *>(model.graph()));
  if (contradictions)
    *contradictions = impl.warnings;
  for (const auto &[v, f] : impl.facts)
    if (f.type)
      out.emplace(v, f.toType());
  return out;
}

} // namespace onnxslim
