//===- ir/Validate.cpp - ONNX model validity checks ------------------------===//
//
// One walk over the model: model-level fields first, then every graph
// (subgraphs in place, with the scopes that enclose them), then each node
// against the op schema table. See ir/Validate.h for the list of checks.
//
//===----------------------------------------------------------------------===//
#include "ir/Validate.h"

#include "ir/IR.h"
#include "ir/OpSchema.h"
#include "ir/ShapeInference.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace onnxslim {

namespace {

/// "node 'name' (Op)", or "node #i (Op)" for an unnamed node (its place in its graph).
std::string describe(const Node *n, size_t index) {
  std::string op = n->isDefaultDomain() ? n->opType() : n->domain() + "." + n->opType();
  std::string who = n->name().empty() ? "node #" + std::to_string(index) : "node '" + n->name() + "'";
  return who + " (" + op + ")";
}

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

bool isKnownDataType(DataType t) {
  auto i = static_cast<int32_t>(t);
  return i >= 1 && i <= static_cast<int32_t>(DataType::Float8E8M0);
}

/// The lowest IR version whose spec has this element type (0: every version).
int64_t irVersionNeededFor(DataType t) {
  switch (t) {
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ:
    return 9;
  case DataType::UInt4:
  case DataType::Int4:
    return 10;
  case DataType::Float4E2M1:
    return 11;
  case DataType::Float8E8M0:
    return 12;
  default:
    return 0;
  }
}

/// The first default-domain opset in which an op can produce this element
/// type (0: every opset). Cast, the op that reaches every type first, took
/// bfloat16 in 13, the float8 types in 19, the 4-bit integers in 21,
/// float4e2m1 in 23 and float8e8m0 in 24.
int64_t defaultOpsetNeededFor(DataType t) {
  switch (t) {
  case DataType::BFloat16:
    return 13;
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ:
    return 19;
  case DataType::UInt4:
  case DataType::Int4:
    return 21;
  case DataType::Float4E2M1:
    return 23;
  case DataType::Float8E8M0:
    return 24;
  default:
    return 0;
  }
}

/// Whether attribute `name` of a default-domain op names an element type
/// (Cast's `to`, the generators' `dtype`, the quantizers' `output_dtype`).
bool namesElementType(std::string_view name) { return name == "to" || name == "dtype" || name == "output_dtype"; }

const char *canonicalDomainName(const std::string &d) { return d.empty() || d == "ai.onnx" ? "ai.onnx" : d.c_str(); }

/// A type as the declared-type diagnostics name it: "int64", "seq(float)".
std::string typeText(const Type &t) {
  auto inner = [&] { return t.inner() ? typeText(*t.inner()) : std::string("?"); };
  switch (t.kind()) {
  case Type::Kind::Tensor: return dataTypeName(t.elemType());
  case Type::Kind::SparseTensor: return "sparse_tensor(" + dataTypeName(t.elemType()) + ")";
  case Type::Kind::Sequence: return "seq(" + inner() + ")";
  case Type::Kind::Optional: return "optional(" + inner() + ")";
  case Type::Kind::Map: return "map(" + dataTypeName(t.elemType()) + ", " + inner() + ")";
  default: return "?";
  }
}

bool knownElem(const Type &t) { return t.hasElemType && t.elemType() != DataType::Undefined; }

/// Whether a declared type definitely contradicts an inferred one in its
/// element type: tensors (or sparse tensors) whose element types are both
/// known and differ, or sequences and optionals whose elements do. An
/// unknown or undefined element type, or kinds that differ, are not.
bool elemTypesContradict(const Type &declared, const Type &inferred) {
  if (declared.kind() != inferred.kind())
    return false;
  switch (declared.kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    return knownElem(declared) && knownElem(inferred) && declared.elemType() != inferred.elemType();
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    return declared.inner() && inferred.inner() && elemTypesContradict(*declared.inner(), *inferred.inner());
  default: return false;
  }
}

class Validator {
public:
  Validator(const Model &m, const ValidateOptions &opts) : model_(m), opts_(opts) {}

  std::vector<std::string> run() {
    checkModel();
    if (const Graph *g = model_.graph()) {
      std::string path = "graph '" + g->name + "'";
      checkGraph(*g, path);
      // Types are inferred only over a model sound in every other way.
      if (diags_.empty()) {
        std::vector<std::string> contradictions;
        inferred_ = inferTypesFromOps(model_, &contradictions);
        for (const std::string &c : contradictions)
          report("", "shapes or types contradict the op: " + c);
        checkDeclaredTypes(*g, path);
      }
    } else {
      report("", "the model has no graph");
    }
    return std::move(diags_);
  }

private:
  void report(const std::string &where, const std::string &what) {
    if (diags_.size() >= opts_.maxDiagnostics)
      return;
    std::string line = opts_.file.empty() ? "" : opts_.file + ": ";
    diags_.push_back(line + (where.empty() ? "" : where + ": ") + what);
  }

  //===--- Model ------------------------------------------------------===//

  void checkModel() {
    int64_t ir = model_.irVersion;
    if (ir <= 0)
      report("", "ir_version is not set (" + std::to_string(ir) + ")");
    else if (ir > kNewestIrVersion)
      report("", "ir_version " + std::to_string(ir) + " is newer than the newest this tool knows (" +
                     std::to_string(kNewestIrVersion) + ")");
    std::map<std::string, int64_t> seen;
    for (const OpsetId &o : model_.opsetImport) {
      std::string d = canonicalDomainName(o.domain);
      if (!seen.emplace(d, o.version).second)
        report("", "opset_import lists domain '" + d + "' twice");
      if (o.version < 1)
        report("", "opset_import of domain '" + d + "' has version " + std::to_string(o.version));
      else if (d == "ai.onnx" && o.version > maxKnownDefaultOpset())
        report("", "opset_import of the default domain has version " + std::to_string(o.version) +
                       ", newer than the newest this tool knows (" + std::to_string(maxKnownDefaultOpset()) + ")");
    }
    if (ir > 0 && ir < 3 && !model_.opsetImport.empty())
      report("", "ir_version " + std::to_string(ir) + " (< 3) cannot have opset_import");
    if (ir >= 3 && model_.opsetImport.empty())
      report("", "ir_version " + std::to_string(ir) + " (>= 3) needs opset_import, and it is empty");
  }

  /// The opset version in effect for `domain` (IR < 3 models have opset 1 of
  /// the default domain implicitly), or -1 when the domain is not imported.
  int64_t opsetFor(const std::string &domain) const {
    int64_t v = model_.opsetVersion(domain);
    if (v < 0 && model_.irVersion > 0 && model_.irVersion < 3 && (domain.empty() || domain == "ai.onnx"))
      return 1;
    return v;
  }

  void checkTypeIrVersion(DataType t, const std::string &where, const std::string &what) {
    int64_t need = irVersionNeededFor(t);
    if (need && model_.irVersion > 0 && model_.irVersion < need && irReported_.insert(t).second)
      report(where, what + " has type " + dataTypeName(t) + ", which needs ir_version >= " + std::to_string(need) +
                        " (the model has " + std::to_string(model_.irVersion) + ")");
  }

  //===--- Tensors ----------------------------------------------------===//

  void checkTensor(const Tensor &t, const std::string &where, const std::string &what) {
    DataType dt = t.dtype();
    if (!isKnownDataType(dt)) {
      report(where, what + " has unknown data type " + std::to_string(static_cast<int32_t>(dt)));
      return;
    }
    checkTypeIrVersion(dt, where, what);
    int64_t count = 1;
    bool overflow = false;
    for (int64_t d : t.dims()) {
      if (d < 0) {
        report(where, what + " has a negative dim: " + dimsText(t.dims()));
        return;
      }
      if (d != 0 && count > INT64_MAX / d)
        overflow = true;
      else
        count *= d;
    }
    if (overflow) {
      bool empty = false;
      for (int64_t d : t.dims())
        empty = empty || d == 0;
      if (!empty) {
        report(where, what + " dims " + dimsText(t.dims()) + " have more elements than int64 can count");
        return;
      }
      count = 0;
    }
    std::string shape = dataTypeName(dt) + " " + dimsText(t.dims());
    if (dt == DataType::String) {
      // A string tensor a pass builds has no bytes and is written as
      // string_data (backend/ProtoExporter); only real raw bytes are wrong.
      if (t.encoding == TensorEncoding::Raw && t.byteSize() != 0)
        report(where, what + " is a string tensor stored as raw_data (strings go in string_data)");
      else if (static_cast<int64_t>(t.strings().size()) != count)
        report(where, what + " has " + std::to_string(t.strings().size()) + " strings but " + shape + " needs " +
                          std::to_string(count));
      return;
    }
    unsigned bits = elementBits(dt);
    // count * bits / 8, rounded up, without overflow.
    uint64_t needBytes = static_cast<uint64_t>(count) / 8 * bits + (static_cast<uint64_t>(count) % 8 * bits + 7) / 8;
    if (static_cast<uint64_t>(count) > UINT64_MAX / 128)
      needBytes = UINT64_MAX;
    uint64_t have = t.byteSize();
    if (have == needBytes)
      return;
    std::string need = std::to_string(needBytes) + " bytes";
    switch (t.encoding) {
    case TensorEncoding::Raw:
      report(where, what + " has " + std::to_string(have) + " bytes of raw_data but " + shape + " needs " + need);
      break;
    case TensorEncoding::Typed:
      if (size_t es = elementSize(dt))
        report(where, what + " has " + std::to_string(have / es) + " elements of typed data but " + shape +
                          " needs " + std::to_string(count));
      else
        report(where, what + " has " + std::to_string(have) + " bytes of typed data but " + shape + " needs " + need);
      break;
    case TensorEncoding::External:
      report(where, what + " has " + std::to_string(have) + " bytes of external data but " + shape + " needs " + need);
      break;
    }
  }

  void checkType(const std::optional<Type> &type, const std::string &where, const std::string &what) {
    if (!type)
      return;
    const Type *t = &*type;
    while (t) {
      if ((t->kind() == Type::Kind::Tensor || t->kind() == Type::Kind::SparseTensor) && t->hasElemType &&
          t->elemType() != DataType::Undefined) {
        if (!isKnownDataType(t->elemType()))
          report(where, what + " has unknown element type " + std::to_string(static_cast<int32_t>(t->elemType())));
        else
          checkTypeIrVersion(t->elemType(), where, what);
      }
      t = t->inner();
    }
  }

  //===--- Graphs -----------------------------------------------------===//

  /// Names defined in this graph and in every enclosing one, innermost last.
  struct Scope {
    std::unordered_set<std::string> names;
    std::unordered_set<const Value *> values;
  };

  bool visible(const Value *v) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->values.count(v))
        return true;
    return false;
  }

  void define(const Value *v, const std::string &where, const std::string &what) {
    if (!v)
      return;
    Scope &scope = scopes_.back();
    scope.values.insert(v);
    if (v->name().empty())
      return;
    if (scope.names.count(v->name())) {
      report(where, what + " '" + v->name() + "' is defined twice (names must be unique: SSA)");
      return;
    }
    for (size_t i = 0; i + 1 < scopes_.size(); ++i)
      if (scopes_[i].names.count(v->name())) {
        report(where, what + " '" + v->name() + "' redefines a name of an enclosing graph (names must be unique: SSA)");
        break;
      }
    scope.names.insert(v->name());
  }

  void checkGraph(const Graph &g, const std::string &path) {
    scopes_.emplace_back();
    for (const Value *v : g.inputs()) {
      define(v, path, "input");
      checkType(v->type(), path, "input '" + v->name() + "'");
    }
    // IR <= 3 wants every initializer listed in graph.input. The writer adds
    // the main graph's (backend/ProtoExporter), so a model about to be
    // written is checked as it will be written: subgraph initializers only.
    bool oldIr = model_.irVersion > 0 && model_.irVersion <= 3 &&
                 !(opts_.forWriting && &g == model_.graph());
    for (const Value *v : g.initializers()) {
      if (v->defKind() != Value::DefKind::GraphInput) {
        define(v, path, "initializer");
        if (oldIr)
          report(path, "initializer '" + v->name() + "' is not listed in graph.input, which ir_version " +
                           std::to_string(model_.irVersion) + " (<= 3) requires");
      }
      if (v->initializer())
        checkTensor(*v->initializer(), path, "initializer '" + v->name() + "'");
    }
    for (const Value *v : g.sparseInitializers()) {
      define(v, path, "sparse initializer");
      if (const auto &sp = v->sparseInitializer()) {
        if (sp->values)
          checkTensor(*sp->values, path, "sparse initializer '" + v->name() + "' values");
        if (sp->indices)
          checkTensor(*sp->indices, path, "sparse initializer '" + v->name() + "' indices");
      }
    }
    size_t index = 0;
    for (const Node *n : g.nodes())
      checkNode(*n, index++, path);
    for (size_t i = 0; i < g.numOutputs(); ++i) {
      const GraphOutput &o = g.outputSlots()[i];
      const Value *v = o.use.get();
      if (!v)
        report(path, "output " + std::to_string(i) + " is produced by nothing");
      else if (!visible(v))
        report(path, "output '" + v->name() + "' is produced by nothing in scope");
      checkType(o.type, path, "output '" + (v ? v->name() : std::to_string(i)) + "'");
    }
    scopes_.pop_back();
  }

  //===--- Declared types ---------------------------------------------===//

  /// The type inferred for `v` (inferTypesFromOps), or null.
  const Type *inferredType(const Value *v) const {
    auto it = inferred_.find(v);
    return it == inferred_.end() ? nullptr : &it->second;
  }

  /// Reports the value_info entries and graph outputs of `g` (and of its
  /// subgraphs) whose declared element type contradicts the inferred one.
  void checkDeclaredTypes(const Graph &g, const std::string &path) {
    auto contradicts = [&](const std::optional<Type> &declared, const Value *v) -> const Type * {
      const Type *inferred = v ? inferredType(v) : nullptr;
      return declared && inferred && elemTypesContradict(*declared, *inferred) ? inferred : nullptr;
    };
    for (const Value *v : g.initializers())
      if (v->defKind() == Value::DefKind::Initializer && v->valueInfoOrder != Value::kNoValueInfo)
        if (const Type *t = contradicts(v->type(), v))
          report(path, "value_info declares '" + v->name() + "' " + typeText(*v->type()) + " but its data is " +
                           typeText(*t));
    size_t index = 0;
    for (const Node *n : g.nodes()) {
      std::string where = path + " / " + describe(n, index++);
      for (const Value *r : n->results())
        if (r && r->valueInfoOrder != Value::kNoValueInfo)
          if (const Type *t = contradicts(r->type(), r))
            report(where, "value_info declares '" + r->name() + "' " + typeText(*r->type()) + " but it is inferred " +
                              typeText(*t));
      for (const Attribute &a : n->attributes())
        for (const Graph *sg : a.subgraphs())
          checkDeclaredTypes(*sg, where + "." + a.name);
    }
    for (size_t i = 0; i < g.numOutputs(); ++i) {
      const GraphOutput &o = g.outputSlots()[i];
      if (const Type *t = contradicts(o.type, o.use.get()))
        report(path, "output '" + o.use.get()->name() + "' is declared " + typeText(*o.type) + " but inferred " +
                         typeText(*t));
    }
  }

  //===--- Nodes ------------------------------------------------------===//

  void checkNode(const Node &n, size_t index, const std::string &path) {
    std::string where = path + " / " + describe(&n, index);
    for (size_t i = 0; i < n.numOperands(); ++i) {
      const Value *v = n.operand(i);
      if (v && !visible(v))
        report(where, "input '" + v->name() + "' names no value defined before it in this graph or an enclosing one");
    }
    for (const Attribute &a : n.attributes()) {
      if (a.t)
        checkTensor(*a.t, where, "attribute '" + a.name + "'");
      for (const TensorPtr &t : a.tensors)
        if (t)
          checkTensor(*t, where, "attribute '" + a.name + "' tensor");
      for (const Graph *sg : a.subgraphs())
        checkGraph(*sg, where + "." + a.name);
    }
    for (size_t i = 0; i < n.numResults(); ++i) {
      define(n.result(i), where, "output");
      if (const Value *r = n.result(i))
        checkType(r->type(), where, "output '" + r->name() + "'");
    }
    checkSchema(n, where);
  }

  void checkSchema(const Node &n, const std::string &where) {
    if (n.opType().empty()) {
      report(where, "node has an empty op_type");
      return;
    }
    int64_t version = opsetFor(n.domain());
    if (version < 0) {
      report(where, "no opset_import for domain '" + std::string(canonicalDomainName(n.domain())) + "'");
      return;
    }
    if (!isKnownSchemaDomain(n.domain()))
      return; // a custom op: not ours to judge
    if (n.isDefaultDomain() && version > maxKnownDefaultOpset())
      return; // reported once at the model level
    const OpSchema *s = findOpSchemaVersion(n.domain(), n.opType(), version);
    std::string opset = "opset " + std::to_string(version) +
                        (n.isDefaultDomain() ? std::string() : " of " + n.domain());
    if (!s) {
      report(where, "op " + n.opType() + " does not exist in " + opset);
      return;
    }
    if (s->deprecated) {
      report(where, "op " + n.opType() + " is deprecated in " + opset + " (since opset " +
                        std::to_string(s->sinceVersion) + "; the spec no longer defines it there)");
      return;
    }
    std::string op = n.opType() + "-" + std::to_string(s->sinceVersion);
    auto range = [](int lo, int hi) {
      return hi == OpSchema::kUnbounded ? std::to_string(lo) + " or more"
             : lo == hi                 ? std::to_string(lo)
                                        : std::to_string(lo) + " to " + std::to_string(hi);
    };
    auto outside = [](size_t k, int lo, int hi) {
      return static_cast<int64_t>(k) < lo || (hi != OpSchema::kUnbounded && static_cast<int64_t>(k) > hi);
    };
    if (outside(n.numOperands(), s->minInputs, s->maxInputs))
      report(where, "has " + std::to_string(n.numOperands()) + " inputs but " + op + " takes " +
                        range(s->minInputs, s->maxInputs));
    if (outside(n.numResults(), s->minOutputs, s->maxOutputs))
      report(where, "has " + std::to_string(n.numResults()) + " outputs but " + op + " gives " +
                        range(s->minOutputs, s->maxOutputs));
    for (const Attribute &a : n.attributes()) {
      const AttrSchema *as = s->attribute(a.name);
      if (!as)
        report(where, "attribute '" + a.name + "' is not an attribute of " + op);
      else if (a.kind != AttrKind::Undefined && a.kind != as->kind)
        report(where, "attribute '" + a.name + "' is " + std::string(attrKindName(a.kind)) + " but " + op +
                          " wants " + std::string(attrKindName(as->kind)));
      else if (as->kind == AttrKind::Int && n.isDefaultDomain() && namesElementType(a.name))
        checkElementTypeAttr(a, op, version, where);
    }
    for (const AttrSchema &as : s->attributes)
      if (as.required && !n.hasAttr(as.name))
        report(where, "required attribute '" + std::string(as.name) + "' of " + op + " is missing");
  }

  /// An attribute naming the element type a node produces: a type the spec
  /// has, that the model's IR version can hold and the node's opset has.
  /// (`output_dtype` 0 means "from the zero point".)
  void checkElementTypeAttr(const Attribute &a, const std::string &op, int64_t version, const std::string &where) {
    if (a.i == 0 && a.name == "output_dtype")
      return;
    auto t = static_cast<DataType>(a.i);
    std::string what = "attribute '" + a.name + "' of " + op;
    if (a.i < INT32_MIN || a.i > INT32_MAX || !isKnownDataType(t)) {
      report(where, what + " is " + std::to_string(a.i) + ", not an element type");
      return;
    }
    if (int64_t need = irVersionNeededFor(t); need && model_.irVersion > 0 && model_.irVersion < need)
      report(where, what + " names " + dataTypeName(t) + ", which needs ir_version >= " + std::to_string(need) +
                        " (the model has " + std::to_string(model_.irVersion) + ")");
    if (int64_t need = defaultOpsetNeededFor(t); need > version)
      report(where, what + " names " + dataTypeName(t) + ", which no op has before opset " + std::to_string(need) +
                        " (the node is in opset " + std::to_string(version) + ")");
  }

  const Model &model_;
  const ValidateOptions &opts_;
  std::vector<std::string> diags_;
  std::vector<Scope> scopes_;
  std::unordered_set<DataType> irReported_;
  std::unordered_map<const Value *, Type> inferred_;
};

} // namespace

std::vector<std::string> validate(const Model &model, const ValidateOptions &options) {
  return Validator(model, options).run();
}

} // namespace onnxslim
