//===- ir/Equivalence.cpp - Structural equality of IR models --------------===//
//
// Walks two models in lockstep. Each value of `a` is mapped to the value of
// `b` defined at the same place (input, initializer, sparse initializer or
// node result, by position); an operand or graph output must then read the
// mapped value. Use counts are compared at the end, once every definition
// and use has been matched, so the first difference reported is the
// structural one rather than its echo in a use list.
//
//===----------------------------------------------------------------------===//
#include "ir/Equivalence.h"

#include "ir/IR.h"
#include "ir/Printer.h"

#include <cstring>
#include <sstream>
#include <unordered_map>

namespace onnxslim {

namespace {

std::string show(std::string_view s) {
  std::string out;
  if (s.size() > 80) {
    textsyntax::appendQuoted(out, s.substr(0, 80));
    out += "...(" + std::to_string(s.size()) + " bytes)";
  } else {
    textsyntax::appendQuoted(out, s);
  }
  return out;
}

std::string show(const std::optional<Type> &t) { return t ? typeToText(*t) : std::string("(no type)"); }

std::string show(const ExplicitFields &f) {
  std::string s = "{";
  for (unsigned i = 0; i < 64; ++i)
    if (f.has(i))
      s += (s.size() > 1 ? "," : "") + std::to_string(i);
  return s + "}";
}

std::string show(const StringPairs &p) {
  std::string s = "[";
  for (const auto &[k, v] : p)
    s += (s.size() > 1 ? ", " : "") + show(k) + ": " + show(v);
  return s + "]";
}

std::string describe(const Node &n) {
  std::string s = n.opType();
  if (!n.name().empty())
    s += " '" + n.name() + "'";
  return "(" + s + ")";
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

class Comparer {
public:
  std::optional<std::string> difference;

  bool model(const Model &a, const Model &b);
  bool graph(const Graph &a, const Graph &b, const std::string &path);
  /// Compares the use counts of every matched value (call after the walk).
  bool useCounts();

private:
  bool fail(const std::string &path, const std::string &msg) {
    if (!difference)
      difference = path + ": " + msg;
    return false;
  }
  template <typename T> bool same(const std::string &path, const char *field, const T &a, const T &b) {
    if (a == b)
      return true;
    std::ostringstream os;
    os << field << " differs: ";
    if constexpr (std::is_same_v<T, std::string>)
      os << show(a) << " vs " << show(b);
    else if constexpr (std::is_same_v<T, StringPairs> || std::is_same_v<T, ExplicitFields> ||
                       std::is_same_v<T, std::optional<Type>>)
      os << show(a) << " vs " << show(b);
    else if constexpr (std::is_arithmetic_v<T>)
      os << a << " vs " << b;
    else
      os << "(values differ)";
    return fail(path, os.str());
  }

  bool opsets(const std::string &path, const std::vector<OpsetId> &a, const std::vector<OpsetId> &b);
  bool byteList(const std::string &path, const char *field, const std::vector<std::string> &a,
                const std::vector<std::string> &b);
  bool info(const std::string &path, const ValueInfoExtras &a, const ValueInfoExtras &b);
  bool tensor(const std::string &path, const TensorPtr &a, const TensorPtr &b);
  bool sparse(const std::string &path, const std::shared_ptr<const SparseTensor> &a,
              const std::shared_ptr<const SparseTensor> &b);
  bool attribute(const std::string &path, const Attribute &a, const Attribute &b);
  bool node(const std::string &path, const Node &a, const Node &b);
  /// Matches two definitions and compares their fields.
  bool define(const std::string &path, const Value *a, const Value *b);
  /// Checks that `b` is the value matched with `a`.
  bool reads(const std::string &path, const Value *a, const Value *b);

  std::unordered_map<const Value *, const Value *> map_;
  std::unordered_map<const Value *, std::string> whereA_, whereB_;
  std::vector<std::pair<const Value *, const Value *>> matched_;
};

bool Comparer::opsets(const std::string &path, const std::vector<OpsetId> &a, const std::vector<OpsetId> &b) {
  if (!same(path, "opset_import count", a.size(), b.size()))
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    std::string p = path + " / opset_import[" + std::to_string(i) + "]";
    if (!same(p, "domain", a[i].domain, b[i].domain) || !same(p, "version", a[i].version, b[i].version) ||
        !same(p, "explicit fields", a[i].explicitFields, b[i].explicitFields))
      return false;
  }
  return true;
}

bool Comparer::byteList(const std::string &path, const char *field, const std::vector<std::string> &a,
                        const std::vector<std::string> &b) {
  if (!same(path, (std::string(field) + " count").c_str(), a.size(), b.size()))
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same(path, (std::string(field) + "[" + std::to_string(i) + "]").c_str(), a[i], b[i]))
      return false;
  return true;
}

bool Comparer::info(const std::string &path, const ValueInfoExtras &a, const ValueInfoExtras &b) {
  return same(path, "value_info doc_string", a.docString, b.docString) &&
         same(path, "value_info metadata_props", a.metadataProps, b.metadataProps) &&
         same(path, "value_info explicit fields", a.explicitFields, b.explicitFields);
}

bool Comparer::tensor(const std::string &path, const TensorPtr &a, const TensorPtr &b) {
  if (!a || !b)
    return (!a && !b) || fail(path, a ? "tensor missing on the right" : "tensor missing on the left");
  const Tensor &x = *a, &y = *b;
  if (!same(path, "tensor data type", static_cast<int32_t>(x.dtype()), static_cast<int32_t>(y.dtype())))
    return false;
  if (x.dims() != y.dims()) {
    auto dims = [](const std::vector<int64_t> &d) {
      std::string s = "[";
      for (size_t i = 0; i < d.size(); ++i)
        s += (i ? "," : "") + std::to_string(d[i]);
      return s + "]";
    };
    return fail(path, "tensor dims differ: " + dims(x.dims()) + " vs " + dims(y.dims()));
  }
  if (!same(path, "tensor byte size", x.byteSize(), y.byteSize()))
    return false;
  if (x.byteSize() && std::memcmp(x.rawData(), y.rawData(), x.byteSize()) != 0) {
    size_t i = 0;
    while (x.rawData()[i] == y.rawData()[i])
      ++i;
    size_t elem = elementSize(x.dtype());
    std::string where = "byte " + std::to_string(i);
    if (elem)
      where += " (element " + std::to_string(i / elem) + ")";
    return fail(path, "tensor data differs at " + where);
  }
  if (!same(path, "string element count", x.strings().size(), y.strings().size()))
    return false;
  for (size_t i = 0; i < x.strings().size(); ++i)
    if (!same(path, ("string element " + std::to_string(i)).c_str(), x.strings()[i], y.strings()[i]))
      return false;
  return same(path, "tensor name", x.name, y.name) && same(path, "tensor doc_string", x.docString, y.docString) &&
         same(path, "tensor encoding", static_cast<int>(x.encoding), static_cast<int>(y.encoding)) &&
         same(path, "tensor external_data", x.externalData, y.externalData) &&
         same(path, "tensor data_location", x.dataLocation, y.dataLocation) &&
         (x.segment == y.segment || fail(path, "tensor segment differs")) &&
         same(path, "tensor metadata_props", x.metadataProps, y.metadataProps) &&
         same(path, "tensor explicit fields", x.explicitFields, y.explicitFields);
}

bool Comparer::sparse(const std::string &path, const std::shared_ptr<const SparseTensor> &a,
                      const std::shared_ptr<const SparseTensor> &b) {
  if (!a || !b)
    return (!a && !b) || fail(path, a ? "sparse tensor missing on the right" : "sparse tensor missing on the left");
  return same(path, "sparse has values", a->hasValues, b->hasValues) &&
         same(path, "sparse has indices", a->hasIndices, b->hasIndices) &&
         (a->dims == b->dims || fail(path, "sparse dims differ")) && tensor(path + " / values", a->values, b->values) &&
         tensor(path + " / indices", a->indices, b->indices);
}

bool Comparer::attribute(const std::string &path, const Attribute &a, const Attribute &b) {
  if (!same(path, "name", a.name, b.name) ||
      !same(path, "kind", static_cast<int>(a.kind), static_cast<int>(b.kind)) ||
      !same(path, "ref_attr_name", a.refAttrName, b.refAttrName) || !same(path, "doc_string", a.docString, b.docString) ||
      !same(path, "has_kind", a.hasKind, b.hasKind) || !same(path, "explicit fields", a.explicitFields, b.explicitFields))
    return false;
  if (!sameBits(a.f, b.f))
    return fail(path, "f differs: " + std::to_string(a.f) + " vs " + std::to_string(b.f));
  if (!same(path, "i", a.i, b.i) || !same(path, "s", a.s, b.s) || !tensor(path + " / t", a.t, b.t) ||
      !sparse(path + " / sparse_tensor", a.sparseTensor, b.sparseTensor) || !same(path, "tp", a.tp, b.tp))
    return false;
  if (!a.g != !b.g)
    return fail(path, "graph present on one side only");
  if (a.g && !graph(*a.g, *b.g, path + " / graph '" + a.g->name + "'"))
    return false;
  if (!same(path, "floats count", a.floats.size(), b.floats.size()))
    return false;
  for (size_t i = 0; i < a.floats.size(); ++i)
    if (!sameBits(a.floats[i], b.floats[i]))
      return fail(path, "floats[" + std::to_string(i) + "] differs");
  if (a.ints != b.ints)
    return fail(path, "ints differ");
  if (!byteList(path, "strings", a.strings, b.strings) || !same(path, "tensors count", a.tensors.size(), b.tensors.size()))
    return false;
  for (size_t i = 0; i < a.tensors.size(); ++i)
    if (!tensor(path + " / tensors[" + std::to_string(i) + "]", a.tensors[i], b.tensors[i]))
      return false;
  if (!same(path, "graphs count", a.graphs.size(), b.graphs.size()))
    return false;
  for (size_t i = 0; i < a.graphs.size(); ++i) {
    if (!a.graphs[i] != !b.graphs[i])
      return fail(path, "graphs[" + std::to_string(i) + "] present on one side only");
    if (a.graphs[i] && !graph(*a.graphs[i], *b.graphs[i], path + " / graphs[" + std::to_string(i) + "]"))
      return false;
  }
  if (!same(path, "sparse_tensors count", a.sparseTensors.size(), b.sparseTensors.size()))
    return false;
  for (size_t i = 0; i < a.sparseTensors.size(); ++i)
    if (!sparse(path + " / sparse_tensors[" + std::to_string(i) + "]", a.sparseTensors[i], b.sparseTensors[i]))
      return false;
  if (!same(path, "type_protos count", a.typeProtos.size(), b.typeProtos.size()))
    return false;
  for (size_t i = 0; i < a.typeProtos.size(); ++i)
    if (a.typeProtos[i] != b.typeProtos[i])
      return fail(path, "type_protos[" + std::to_string(i) + "] differs: " + typeToText(a.typeProtos[i]) + " vs " +
                            typeToText(b.typeProtos[i]));
  return true;
}

bool Comparer::define(const std::string &path, const Value *a, const Value *b) {
  map_[a] = b;
  whereA_[a] = path;
  whereB_[b] = path;
  matched_.emplace_back(a, b);
  return same(path, "name", a->name(), b->name()) &&
         same(path, "definition kind", static_cast<int>(a->defKind()), static_cast<int>(b->defKind())) &&
         same(path, "type", a->type(), b->type()) &&
         same(path, "value_info order", a->valueInfoOrder, b->valueInfoOrder) && info(path, a->info, b->info) &&
         tensor(path + " / initializer", a->initializer(), b->initializer()) &&
         sparse(path + " / sparse initializer", a->sparseInitializer(), b->sparseInitializer());
}

bool Comparer::reads(const std::string &path, const Value *a, const Value *b) {
  if (!a || !b)
    return (!a && !b) || fail(path, a ? "reads '" + a->name() + "' vs nothing" : "reads nothing vs '" + b->name() + "'");
  auto it = map_.find(a);
  if (it == map_.end()) {
    // A value defined outside the compared graphs is fine when both sides share it.
    if (a == b)
      return true;
    return fail(path, "reads '" + a->name() + "', which is not defined before it in scope");
  }
  if (it->second == b)
    return true;
  auto where = [](const std::unordered_map<const Value *, std::string> &m, const Value *v) {
    auto w = m.find(v);
    return w == m.end() ? std::string("not defined in scope") : w->second;
  };
  return fail(path, "reads '" + a->name() + "' (" + whereA_[a] + ") vs '" + b->name() + "' (" + where(whereB_, b) + ")");
}

bool Comparer::node(const std::string &path, const Node &a, const Node &b) {
  if (!same(path, "op_type", a.opType(), b.opType()) || !same(path, "domain", a.domain(), b.domain()) ||
      !same(path, "name", a.name(), b.name()) || !same(path, "doc_string", a.docString, b.docString) ||
      !same(path, "overload", a.overload, b.overload) ||
      !same(path, "metadata_props", a.metadataProps, b.metadataProps) ||
      !byteList(path, "device_configurations", a.deviceConfigurations, b.deviceConfigurations) ||
      !same(path, "explicit fields", a.explicitFields, b.explicitFields))
    return false;
  if (!same(path, "operand count", a.numOperands(), b.numOperands()))
    return false;
  for (size_t i = 0; i < a.numOperands(); ++i)
    if (!reads(path + " / operand[" + std::to_string(i) + "]", a.operand(i), b.operand(i)))
      return false;
  if (!same(path, "attribute count", a.attributes().size(), b.attributes().size()))
    return false;
  for (size_t i = 0; i < a.attributes().size(); ++i)
    if (!attribute(path + " / attribute '" + a.attributes()[i].name + "'", a.attributes()[i], b.attributes()[i]))
      return false;
  if (!same(path, "result count", a.numResults(), b.numResults()))
    return false;
  for (size_t i = 0; i < a.numResults(); ++i) {
    std::string p = path + " / result[" + std::to_string(i) + "]";
    if (!a.result(i) != !b.result(i))
      return fail(p, "omitted on one side only");
    if (a.result(i) && !define(p, a.result(i), b.result(i)))
      return false;
  }
  return true;
}

bool Comparer::graph(const Graph &a, const Graph &b, const std::string &path) {
  if (!same(path, "graph name", a.name, b.name) || !same(path, "doc_string", a.docString, b.docString) ||
      !same(path, "metadata_props", a.metadataProps, b.metadataProps) ||
      !same(path, "explicit fields", a.explicitFields, b.explicitFields) ||
      !same(path, "quantization_annotation count", a.quantizationAnnotations.size(), b.quantizationAnnotations.size()))
    return false;
  for (size_t i = 0; i < a.quantizationAnnotations.size(); ++i) {
    const TensorAnnotation &x = a.quantizationAnnotations[i], &y = b.quantizationAnnotations[i];
    std::string p = path + " / quantization_annotation[" + std::to_string(i) + "]";
    if (!same(p, "tensor_name", x.tensorName, y.tensorName) ||
        !same(p, "quant_parameter_tensor_names", x.quantParameterTensorNames, y.quantParameterTensorNames) ||
        !same(p, "explicit fields", x.explicitFields, y.explicitFields))
      return false;
  }
  if (!same(path, "input count", a.inputs().size(), b.inputs().size()))
    return false;
  for (size_t i = 0; i < a.inputs().size(); ++i)
    if (!define(path + " / input[" + std::to_string(i) + "] '" + a.inputs()[i]->name() + "'", a.inputs()[i],
                b.inputs()[i]))
      return false;
  if (!same(path, "initializer count", a.initializers().size(), b.initializers().size()))
    return false;
  for (size_t i = 0; i < a.initializers().size(); ++i) {
    const Value *x = a.initializers()[i], *y = b.initializers()[i];
    std::string p = path + " / initializer[" + std::to_string(i) + "] '" + x->name() + "'";
    bool xIn = x->defKind() == Value::DefKind::GraphInput, yIn = y->defKind() == Value::DefKind::GraphInput;
    if (xIn != yIn)
      return fail(p, xIn ? "is a graph input on the left only" : "is a graph input on the right only");
    if (xIn ? !reads(p, x, y) : !define(p, x, y))
      return false;
  }
  if (!same(path, "sparse initializer count", a.sparseInitializers().size(), b.sparseInitializers().size()))
    return false;
  for (size_t i = 0; i < a.sparseInitializers().size(); ++i) {
    const Value *x = a.sparseInitializers()[i], *y = b.sparseInitializers()[i];
    std::string p = path + " / sparse_initializer[" + std::to_string(i) + "] '" + x->name() + "'";
    if (map_.count(x) ? !reads(p, x, y) : !define(p, x, y))
      return false;
  }
  if (!same(path, "orphan value_info count", a.orphanValueInfos.size(), b.orphanValueInfos.size()))
    return false;
  for (size_t i = 0; i < a.orphanValueInfos.size(); ++i) {
    const OrphanValueInfo &x = a.orphanValueInfos[i], &y = b.orphanValueInfos[i];
    std::string p = path + " / orphan value_info[" + std::to_string(i) + "] '" + x.name + "'";
    if (!same(p, "order", x.order, y.order) || !same(p, "name", x.name, y.name) || !same(p, "type", x.type, y.type) ||
        !info(p, x.info, y.info))
      return false;
  }
  if (!same(path, "node count", a.numNodes(), b.numNodes()))
    return false;
  size_t i = 0;
  for (Node *x = a.firstNode(), *y = b.firstNode(); x && y; x = x->next(), y = y->next(), ++i)
    if (!node(path + " / node[" + std::to_string(i) + "] " + describe(*x), *x, *y))
      return false;
  if (!same(path, "output count", a.numOutputs(), b.numOutputs()))
    return false;
  for (size_t k = 0; k < a.numOutputs(); ++k) {
    const GraphOutput &x = a.outputSlots()[k], &y = b.outputSlots()[k];
    std::string p = path + " / output[" + std::to_string(k) + "]";
    if (!reads(p, x.use.get(), y.use.get()) || !same(p, "type", x.type, y.type) || !info(p, x.info, y.info))
      return false;
  }
  return true;
}

bool Comparer::useCounts() {
  for (const auto &[a, b] : matched_)
    if (a->useCount() != b->useCount())
      return fail(whereA_[a], "use count differs: " + std::to_string(a->useCount()) + " vs " +
                                  std::to_string(b->useCount()));
  return true;
}

bool Comparer::model(const Model &a, const Model &b) {
  std::string p = "model";
  if (!same(p, "ir_version", a.irVersion, b.irVersion) || !same(p, "producer_name", a.producerName, b.producerName) ||
      !same(p, "producer_version", a.producerVersion, b.producerVersion) || !same(p, "domain", a.domain, b.domain) ||
      !same(p, "model_version", a.modelVersion, b.modelVersion) || !same(p, "doc_string", a.docString, b.docString) ||
      !opsets(p, a.opsetImport, b.opsetImport) || !same(p, "metadata_props", a.metadataProps, b.metadataProps) ||
      !byteList(p, "training_info", a.trainingInfo, b.trainingInfo) ||
      !byteList(p, "configuration", a.configuration, b.configuration) ||
      !same(p, "explicit fields", a.explicitFields, b.explicitFields))
    return false;
  if (!a.graph() != !b.graph())
    return fail(p, a.graph() ? "graph missing on the right" : "graph missing on the left");
  if (a.graph() && !graph(*a.graph(), *b.graph(), "graph '" + a.graph()->name + "'"))
    return false;
  if (!same(p, "function count", a.functions.size(), b.functions.size()))
    return false;
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const Function &x = *a.functions[i], &y = *b.functions[i];
    std::string f = "function[" + std::to_string(i) + "] '" + x.name + "'";
    if (!same(f, "name", x.name, y.name) || !same(f, "domain", x.domain, y.domain) ||
        !same(f, "overload", x.overload, y.overload) || !same(f, "doc_string", x.docString, y.docString) ||
        !byteList(f, "attribute", x.attributeNames, y.attributeNames) || !opsets(f, x.opsetImport, y.opsetImport) ||
        !same(f, "metadata_props", x.metadataProps, y.metadataProps) ||
        !same(f, "explicit fields", x.explicitFields, y.explicitFields) ||
        !same(f, "attribute_proto count", x.attributeProtos.size(), y.attributeProtos.size()))
      return false;
    for (size_t k = 0; k < x.attributeProtos.size(); ++k)
      if (!attribute(f + " / attribute_proto '" + x.attributeProtos[k].name + "'", x.attributeProtos[k],
                     y.attributeProtos[k]))
        return false;
    if (!x.body != !y.body)
      return fail(f, "body present on one side only");
    if (x.body && !graph(*x.body, *y.body, f + " / body"))
      return false;
  }
  return true;
}

} // namespace

std::optional<std::string> firstDifference(const Model &a, const Model &b) {
  Comparer c;
  if (c.model(a, b))
    c.useCounts();
  return c.difference;
}

std::optional<std::string> firstDifference(const Graph &a, const Graph &b) {
  Comparer c;
  if (c.graph(a, b, "graph '" + a.name + "'"))
    c.useCounts();
  return c.difference;
}

} // namespace onnxslim
