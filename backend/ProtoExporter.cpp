//===- backend/ProtoExporter.cpp - Raise the IR to ONNX protobuf ----------===//
//
// Each optional field is written when it holds a non-default value or when
// the importer saw it present with its default (ExplicitFields). Typed tensor
// data goes back to the repeated field the ONNX spec assigns to its element
// type (int32_data sign-extends int8/int16 and zero-extends the other narrow
// types, as the ONNX helpers write them); string tensors always go to
// string_data. value_info entries are written in their recorded order,
// attached ones and orphans interleaved.
//
//===----------------------------------------------------------------------===//
#include "backend/ProtoExporter.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace onnxslim::backend {

static_assert(std::endian::native == std::endian::little,
              "tensor bytes are kept in little-endian layout; a big-endian host needs byte swaps");

using google::protobuf::RepeatedPtrField;

uint64_t ExternalSink::add(const Buffer &bytes) {
  // Page-align large tensors (mmap-friendly for readers), 64-byte align the rest.
  uint64_t align = bytes.size() >= 65536 ? 4096 : 64;
  uint64_t offset = (size_ + align - 1) / align * align;
  chunks_.push_back(Chunk{bytes, offset});
  size_ = offset + bytes.size();
  return offset;
}

bool ProtoExporter::fail(const std::string &msg) {
  if (error_.empty())
    error_ = msg;
  return false;
}

namespace {

void exportPairs(const StringPairs &pairs, RepeatedPtrField<onnx::StringStringEntryProto> &out) {
  out.Reserve(static_cast<int>(pairs.size()));
  for (const auto &[k, v] : pairs) {
    auto *e = out.Add();
    e->set_key(k);
    e->set_value(v);
  }
}

void exportShape(const Shape &shape, onnx::TensorShapeProto &p) {
  p.mutable_dim()->Reserve(static_cast<int>(shape.size()));
  for (const Dim &d : shape) {
    auto *pd = p.add_dim();
    if (d.isValue())
      pd->set_dim_value(d.getValue());
    else if (d.isSymbol())
      pd->set_dim_param(d.getSymbol());
    if (!d.denotation.empty())
      pd->set_denotation(d.denotation);
  }
}

void exportExtras(const ValueInfoExtras &x, onnx::ValueInfoProto &p) {
  if (!x.docString.empty() || x.explicitFields.has(3))
    p.set_doc_string(x.docString);
  exportPairs(x.metadataProps, *p.mutable_metadata_props());
}

void exportValueInfo(const std::string &name, const std::optional<Type> &type,
                     const ValueInfoExtras &x, onnx::ValueInfoProto &p) {
  if (!name.empty() || x.explicitFields.has(1))
    p.set_name(name);
  if (type)
    exportType(*type, *p.mutable_type());
  exportExtras(x, p);
}

void exportOpset(const OpsetId &o, onnx::OperatorSetIdProto &p) {
  if (!o.domain.empty() || o.explicitFields.has(1))
    p.set_domain(o.domain);
  if (o.version != 0 || o.explicitFields.has(2))
    p.set_version(o.version);
}

/// Which typed repeated field the ONNX spec assigns to a data type.
enum class TypedField { None, Float, Int32, String, Int64, Double, UInt64 };

TypedField canonicalField(int32_t dt) {
  switch (dt) {
  case 1: case 14:
    return TypedField::Float;
  case 2: case 3: case 4: case 5: case 6: case 9: case 10: case 16:
  case 17: case 18: case 19: case 20: case 21: case 22: case 23: case 24: case 25: case 26:
    return TypedField::Int32;
  case 8:
    return TypedField::String;
  case 7:
    return TypedField::Int64;
  case 11: case 15:
    return TypedField::Double;
  case 12: case 13:
    return TypedField::UInt64;
  default:
    return TypedField::None;
  }
}

/// Copies whole elements of `sizeof(T)` bytes into a repeated field.
template <typename T>
void copyElements(const Buffer &b, google::protobuf::RepeatedField<T> &out) {
  size_t n = b.size() / sizeof(T);
  out.Resize(static_cast<int>(n), T{});
  if (n)
    std::memcpy(out.mutable_data(), b.data(), n * sizeof(T));
}

/// Writes typed data back to its repeated field; false when the bytes do not
/// fit the field (then the caller writes raw_data).
bool encodeTyped(const Tensor &t, onnx::TensorProto &p) {
  auto dt = static_cast<int32_t>(t.dtype());
  const Buffer &b = t.buffer();
  switch (canonicalField(dt)) {
  case TypedField::String:
    for (const std::string &s : t.strings())
      p.add_string_data(s);
    return b.size() == 0;
  case TypedField::Float:
    if (b.size() % 4)
      return false;
    copyElements(b, *p.mutable_float_data());
    return true;
  case TypedField::Int64:
    if (b.size() % 8)
      return false;
    copyElements(b, *p.mutable_int64_data());
    return true;
  case TypedField::Double:
    if (b.size() % 8)
      return false;
    copyElements(b, *p.mutable_double_data());
    return true;
  case TypedField::UInt64:
    if (dt == 13) {
      if (b.size() % 8)
        return false;
      copyElements(b, *p.mutable_uint64_data());
    } else {
      if (b.size() % 4)
        return false;
      auto &out = *p.mutable_uint64_data();
      out.Reserve(static_cast<int>(b.size() / 4));
      for (size_t i = 0; i < b.size() / 4; ++i)
        out.Add(t.at<uint32_t>(i));
    }
    return true;
  case TypedField::Int32: {
    auto &out = *p.mutable_int32_data();
    switch (dt) {
    case 6:
      if (b.size() % 4)
        return false;
      copyElements(b, out);
      return true;
    case 5: // int16: sign-extended
    case 4: case 10: case 16: // uint16, float16, bfloat16: zero-extended bit patterns
      if (b.size() % 2)
        return false;
      out.Reserve(static_cast<int>(b.size() / 2));
      for (size_t i = 0; i < b.size() / 2; ++i)
        out.Add(dt == 5 ? int32_t{t.at<int16_t>(i)} : int32_t{t.at<uint16_t>(i)});
      return true;
    default: // one byte per entry; int8 sign-extended, the rest zero-extended
      out.Reserve(static_cast<int>(b.size()));
      for (size_t i = 0; i < b.size(); ++i)
        out.Add(dt == 3 ? int32_t{static_cast<int8_t>(b.data()[i])} : int32_t{b.data()[i]});
      return true;
    }
  }
  case TypedField::None:
    break;
  }
  return b.size() == 0 && t.strings().empty();
}

} // namespace

void exportType(const Type &t, onnx::TypeProto &p) {
  switch (t.kind()) {
  case Type::Kind::Empty:
    break;
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor: {
    auto fill = [&](auto *tt) {
      if (t.hasElemType || t.elemType() != DataType::Undefined)
        tt->set_elem_type(static_cast<int32_t>(t.elemType()));
      if (t.shape())
        exportShape(*t.shape(), *tt->mutable_shape());
    };
    if (t.kind() == Type::Kind::Tensor)
      fill(p.mutable_tensor_type());
    else
      fill(p.mutable_sparse_tensor_type());
    break;
  }
  case Type::Kind::Sequence: {
    auto *s = p.mutable_sequence_type();
    if (t.inner())
      exportType(*t.inner(), *s->mutable_elem_type());
    break;
  }
  case Type::Kind::Optional: {
    auto *o = p.mutable_optional_type();
    if (t.inner())
      exportType(*t.inner(), *o->mutable_elem_type());
    break;
  }
  case Type::Kind::Map: {
    auto *m = p.mutable_map_type();
    if (t.hasElemType || t.elemType() != DataType::Undefined)
      m->set_key_type(static_cast<int32_t>(t.elemType()));
    if (t.inner())
      exportType(*t.inner(), *m->mutable_value_type());
    break;
  }
  }
  if (!t.denotation.empty())
    p.set_denotation(t.denotation);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

bool ProtoExporter::exportTensor(const Tensor &t, onnx::TensorProto &p, const std::string *name,
                                 bool isInitializer, bool omitRaw, Buffer *rawOut, bool *hasRaw) {
  if (hasRaw)
    *hasRaw = false;
  const std::string &tname = name ? *name : t.name;
  auto *dims = p.mutable_dims();
  dims->Reserve(static_cast<int>(t.dims().size()));
  for (int64_t d : t.dims())
    dims->Add(d);
  if (t.dtype() != DataType::Undefined || t.explicitFields.has(2))
    p.set_data_type(static_cast<int32_t>(t.dtype()));
  if (t.segment) {
    p.mutable_segment()->set_begin(t.segment->first);
    p.mutable_segment()->set_end(t.segment->second);
  }
  if (!tname.empty() || t.explicitFields.has(8))
    p.set_name(tname);
  if (!t.docString.empty() || t.explicitFields.has(12))
    p.set_doc_string(t.docString);
  exportPairs(t.metadataProps, *p.mutable_metadata_props());

  std::string what = "tensor '" + tname + "'";
  bool wasExternal = t.encoding == TensorEncoding::External;
  if ((wasExternal || opts_.external) && t.dtype() != DataType::String) {
    size_t expected = storageSize(t.dtype(), t.numElements());
    if (wasExternal && !t.buffer().data() && expected > 0)
      return fail(what + ": its external data was not loaded; cannot write it");
  }
  bool toExternal = opts_.external && t.dtype() != DataType::String &&
                    (wasExternal || (opts_.externalizeLarge && isInitializer &&
                                     t.buffer().size() >= opts_.threshold));
  if (toExternal) {
    uint64_t offset = opts_.external->add(t.buffer());
    StringPairs entries = wasExternal ? t.externalData : StringPairs{};
    auto setEntry = [&](const std::string &key, std::string value) {
      for (auto &[k, v] : entries)
        if (k == key) {
          v = std::move(value);
          return;
        }
      entries.emplace_back(key, std::move(value));
    };
    setEntry("location", opts_.external->location());
    setEntry("offset", std::to_string(offset));
    setEntry("length", std::to_string(t.buffer().size()));
    exportPairs(entries, *p.mutable_external_data());
    p.set_data_location(onnx::TensorProto::EXTERNAL);
    return true;
  }

  // Inline data. A tensor read from external data and written inline keeps
  // neither its external_data entries nor its data_location.
  if (!wasExternal) {
    exportPairs(t.externalData, *p.mutable_external_data());
    if (t.dataLocation != 0 || t.explicitFields.has(14))
      p.set_data_location(static_cast<onnx::TensorProto::DataLocation>(t.dataLocation));
  }
  // Strings live in string_data whatever encoding the tensor carries (a
  // tensor a pass builds from strings defaults to Raw): ONNX Runtime and the
  // checker refuse a string tensor with raw_data, even an empty one. Only
  // raw bytes read from the input (an invalid model) are kept as they were.
  bool stringData = t.dtype() == DataType::String && t.buffer().size() == 0;
  bool typed = t.encoding == TensorEncoding::Typed || stringData;
  if (typed && encodeTyped(t, p))
    return true;
  if (typed) {
    // The bytes do not fit the typed field (a pass made an odd tensor):
    // fall back to raw_data, dropping the partial typed data.
    p.clear_float_data();
    p.clear_int32_data();
    p.clear_string_data();
    p.clear_int64_data();
    p.clear_double_data();
    p.clear_uint64_data();
  }
  if (omitRaw) {
    *rawOut = t.buffer();
    *hasRaw = true;
  } else {
    p.set_raw_data(t.buffer().data(), t.buffer().size());
  }
  return true;
}

bool ProtoExporter::exportSparse(const SparseTensor &s, onnx::SparseTensorProto &p,
                                 const std::string *name) {
  if (s.hasValues && s.values &&
      !exportTensor(*s.values, *p.mutable_values(), name, /*isInitializer=*/false, false))
    return false;
  if (s.hasIndices && s.indices &&
      !exportTensor(*s.indices, *p.mutable_indices(), nullptr, false, false))
    return false;
  for (int64_t d : s.dims)
    p.add_dims(d);
  return true;
}

//===----------------------------------------------------------------------===//
// Attributes and nodes
//===----------------------------------------------------------------------===//

bool ProtoExporter::exportAttribute(const Attribute &a, onnx::AttributeProto &p, bool withNested) {
  const ExplicitFields &ef = a.explicitFields;
  if (!a.name.empty() || ef.has(1))
    p.set_name(a.name);
  if (!a.refAttrName.empty() || ef.has(21))
    p.set_ref_attr_name(a.refAttrName);
  if (!a.docString.empty() || ef.has(13))
    p.set_doc_string(a.docString);
  if (a.hasKind || a.kind != AttrKind::Undefined)
    p.set_type(static_cast<onnx::AttributeProto::AttributeType>(a.kind));
  // The field of the attribute's own kind is always written (the ONNX checker
  // requires it), unless the attribute refers to a function attribute.
  bool own = a.refAttrName.empty();
  if (std::bit_cast<uint32_t>(a.f) != 0 || ef.has(2) || (own && a.kind == AttrKind::Float))
    p.set_f(a.f);
  if (a.i != 0 || ef.has(3) || (own && a.kind == AttrKind::Int))
    p.set_i(a.i);
  if (!a.s.empty() || ef.has(4) || (own && a.kind == AttrKind::String))
    p.set_s(a.s);
  if (withNested && a.t && !exportTensor(*a.t, *p.mutable_t(), nullptr, false, false))
    return false;
  if (withNested && a.g && !exportGraph(*a.g, *p.mutable_g()))
    return false;
  if (a.sparseTensor && !exportSparse(*a.sparseTensor, *p.mutable_sparse_tensor(), nullptr))
    return false;
  if (a.tp)
    exportType(*a.tp, *p.mutable_tp());
  p.mutable_floats()->Add(a.floats.begin(), a.floats.end());
  p.mutable_ints()->Add(a.ints.begin(), a.ints.end());
  for (const std::string &s : a.strings)
    p.add_strings(s);
  for (const TensorPtr &t : a.tensors)
    if (withNested && t && !exportTensor(*t, *p.add_tensors(), nullptr, false, false))
      return false;
  for (const auto &g : a.graphs)
    if (withNested && g && !exportGraph(*g, *p.add_graphs()))
      return false;
  for (const auto &s : a.sparseTensors)
    if (s && !exportSparse(*s, *p.add_sparse_tensors(), nullptr))
      return false;
  for (const Type &t : a.typeProtos)
    exportType(t, *p.add_type_protos());
  return true;
}

bool ProtoExporter::exportNode(const Node &n, onnx::NodeProto &p, bool withAttributes) {
  const ExplicitFields &ef = n.explicitFields;
  p.mutable_input()->Reserve(static_cast<int>(n.numOperands()));
  for (const Use &u : n.operandUses())
    p.add_input(u.get() ? u.get()->name() : std::string());
  p.mutable_output()->Reserve(static_cast<int>(n.numResults()));
  for (size_t i = 0; i < n.numResults(); ++i)
    p.add_output(n.result(i) ? n.result(i)->name() : std::string());
  if (!n.name().empty() || ef.has(3))
    p.set_name(n.name());
  if (!n.opType().empty() || ef.has(4))
    p.set_op_type(n.opType());
  if (!n.domain().empty() || ef.has(7))
    p.set_domain(n.domain());
  if (!n.overload.empty() || ef.has(8))
    p.set_overload(n.overload);
  if (!n.docString.empty() || ef.has(6))
    p.set_doc_string(n.docString);
  if (withAttributes) {
    p.mutable_attribute()->Reserve(static_cast<int>(n.attributes().size()));
    for (const Attribute &a : n.attributes())
      if (!exportAttribute(a, *p.add_attribute()))
        return false;
  }
  exportPairs(n.metadataProps, *p.mutable_metadata_props());
  for (const std::string &dc : n.deviceConfigurations)
    if (!p.add_device_configurations()->ParseFromString(dc))
      return fail("node '" + n.name() + "': a device configuration entry is not valid protobuf");
  return true;
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

void ProtoExporter::exportValueInfos(const Graph &g, RepeatedPtrField<onnx::ValueInfoProto> &out) {
  struct Entry {
    uint32_t order;
    const Value *value;
    const OrphanValueInfo *orphan;
  };
  std::vector<Entry> entries;
  auto consider = [&](const Value *v) {
    if (v && v->valueInfoOrder != Value::kNoValueInfo)
      entries.push_back({v->valueInfoOrder, v, nullptr});
  };
  for (const Value *v : g.inputs())
    consider(v);
  if (!initializersAreInputs(g))
    for (const Value *v : g.initializers())
      if (!v->isGraphInput())
        consider(v);
  for (const Value *v : g.sparseInitializers())
    consider(v);
  for (const Node *n : g.nodes())
    for (size_t i = 0; i < n->numResults(); ++i)
      consider(n->result(i));
  for (const OrphanValueInfo &o : g.orphanValueInfos)
    entries.push_back({o.order, nullptr, &o});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry &a, const Entry &b) { return a.order < b.order; });
  out.Reserve(static_cast<int>(entries.size()));
  for (const Entry &e : entries) {
    if (e.value)
      exportValueInfo(e.value->name(), e.value->type(), e.value->info, *out.Add());
    else
      exportValueInfo(e.orphan->name, e.orphan->type, e.orphan->info, *out.Add());
  }
}

bool ProtoExporter::exportGraph(const Graph &g, onnx::GraphProto &p, bool withNodes,
                                bool withInitializers) {
  if (withNodes) {
    p.mutable_node()->Reserve(static_cast<int>(g.numNodes()));
    for (const Node *n : g.nodes())
      if (!exportNode(*n, *p.add_node()))
        return false;
  }
  if (!g.name.empty() || g.explicitFields.has(2))
    p.set_name(g.name);
  if (withInitializers)
    for (const Value *v : g.initializers())
      if (v->initializer() &&
          !exportTensor(*v->initializer(), *p.add_initializer(), &v->name(), true, false))
        return false;
  for (const Value *v : g.sparseInitializers())
    if (v->sparseInitializer() &&
        !exportSparse(*v->sparseInitializer(), *p.add_sparse_initializer(), &v->name()))
      return false;
  if (!g.docString.empty() || g.explicitFields.has(10))
    p.set_doc_string(g.docString);
  for (const Value *v : g.inputs())
    exportValueInfo(v->name(), v->type(), v->info, *p.add_input());
  if (initializersAreInputs(g))
    for (const Value *v : g.initializers())
      if (!v->isGraphInput() && v->initializer()) {
        const Tensor &t = *v->initializer();
        Shape shape;
        for (int64_t d : t.dims())
          shape.push_back(Dim::value(d));
        exportValueInfo(v->name(), Type::tensor(t.dtype(), std::move(shape)), v->info, *p.add_input());
      }
  for (size_t i = 0; i < g.numOutputs(); ++i) {
    const GraphOutput &o = g.outputSlots()[i];
    if (!o.use.get())
      return fail("graph '" + g.name + "': output #" + std::to_string(i) + " reads no value");
    exportValueInfo(o.use.get()->name(), o.type, o.info, *p.add_output());
  }
  exportValueInfos(g, *p.mutable_value_info());
  for (const TensorAnnotation &ta : g.quantizationAnnotations) {
    auto *qa = p.add_quantization_annotation();
    if (!ta.tensorName.empty() || ta.explicitFields.has(1))
      qa->set_tensor_name(ta.tensorName);
    exportPairs(ta.quantParameterTensorNames, *qa->mutable_quant_parameter_tensor_names());
  }
  exportPairs(g.metadataProps, *p.mutable_metadata_props());
  return true;
}

//===----------------------------------------------------------------------===//
// Functions and the model
//===----------------------------------------------------------------------===//

bool ProtoExporter::exportFunction(const Function &f, onnx::FunctionProto &p) {
  const ExplicitFields &ef = f.explicitFields;
  if (!f.name.empty() || ef.has(1))
    p.set_name(f.name);
  if (f.body) {
    for (const Value *v : f.body->inputs())
      p.add_input(v->name());
    for (const Value *v : f.body->outputs())
      p.add_output(v ? v->name() : std::string());
  }
  for (const std::string &a : f.attributeNames)
    p.add_attribute(a);
  for (const Attribute &a : f.attributeProtos)
    if (!exportAttribute(a, *p.add_attribute_proto()))
      return false;
  if (f.body)
    for (const Node *n : f.body->nodes())
      if (!exportNode(*n, *p.add_node()))
        return false;
  if (!f.docString.empty() || ef.has(8))
    p.set_doc_string(f.docString);
  for (const OpsetId &o : f.opsetImport)
    exportOpset(o, *p.add_opset_import());
  if (!f.domain.empty() || ef.has(10))
    p.set_domain(f.domain);
  if (!f.overload.empty() || ef.has(13))
    p.set_overload(f.overload);
  if (f.body)
    exportValueInfos(*f.body, *p.mutable_value_info());
  exportPairs(f.metadataProps, *p.mutable_metadata_props());
  return true;
}

bool ProtoExporter::initializersAreInputs(const Graph &g) const {
  return &g == mainGraph_ && irVersion_ >= 1 && irVersion_ < 4;
}

bool ProtoExporter::exportModelFields(const Model &m, onnx::ModelProto &p) {
  mainGraph_ = m.graph();
  irVersion_ = m.irVersion;
  const ExplicitFields &ef = m.explicitFields;
  if (m.irVersion != 0 || ef.has(1))
    p.set_ir_version(m.irVersion);
  for (const OpsetId &o : m.opsetImport)
    exportOpset(o, *p.add_opset_import());
  if (!m.producerName.empty() || ef.has(2))
    p.set_producer_name(m.producerName);
  if (!m.producerVersion.empty() || ef.has(3))
    p.set_producer_version(m.producerVersion);
  if (!m.domain.empty() || ef.has(4))
    p.set_domain(m.domain);
  if (m.modelVersion != 0 || ef.has(5))
    p.set_model_version(m.modelVersion);
  if (!m.docString.empty() || ef.has(6))
    p.set_doc_string(m.docString);
  exportPairs(m.metadataProps, *p.mutable_metadata_props());
  for (const std::string &ti : m.trainingInfo)
    if (!p.add_training_info()->ParseFromString(ti))
      return fail("a training_info entry is not valid protobuf");
  for (const auto &f : m.functions)
    if (!exportFunction(*f, *p.add_functions()))
      return false;
  for (const std::string &c : m.configuration)
    if (!p.add_configuration()->ParseFromString(c))
      return fail("a configuration entry is not valid protobuf");
  return true;
}

} // namespace onnxslim::backend
