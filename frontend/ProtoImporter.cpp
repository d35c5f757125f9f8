//===- frontend/ProtoImporter.cpp - Lower ONNX protobuf messages to IR ----===//
//
// Name resolution: each graph has a Scope mapping names to the Values defined
// so far; lookups walk outward through the enclosing graphs' scopes, so a
// subgraph's reference to an outer name becomes a real use of the outer Value.
// Nodes are created in topological order (the file's order unless it is not
// topological, then a stable sort); value_info entries attach to the values
// they name, and entries that name nothing are kept as orphans.
//
// Lossless conversion: a field present in the file with its default value is
// recorded in the owner's ExplicitFields (bit = the proto field number), and
// typed tensor fields (float_data, int32_data, ...) become canonical element
// bytes with encoding Typed; backend/ProtoExporter reverses both exactly
// (but for a bool int32_data entry beyond a byte, true, which reads as 1).
//
//===----------------------------------------------------------------------===//
#include "frontend/ProtoImporter.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <queue>
#include <string_view>
#include <unordered_set>

#include <limits.h>
#include <stdlib.h>

namespace onnxslim::frontend {

static_assert(std::endian::native == std::endian::little,
              "tensor bytes are kept in little-endian layout; a big-endian host needs byte swaps");

using google::protobuf::RepeatedPtrField;

namespace {

StringPairs importPairs(const RepeatedPtrField<onnx::StringStringEntryProto> &entries) {
  StringPairs out;
  out.reserve(static_cast<size_t>(entries.size()));
  for (const auto &e : entries)
    out.emplace_back(e.key(), e.value());
  return out;
}

std::string quoted(const std::string &s) { return "'" + s + "'"; }

std::string describeNode(const onnx::NodeProto &np, size_t index) {
  std::string who = np.name().empty() ? "node #" + std::to_string(index) : "node " + quoted(np.name());
  return who + " (" + np.op_type() + ")";
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

const char *fieldName(TypedField f) {
  switch (f) {
  case TypedField::Float: return "float_data";
  case TypedField::Int32: return "int32_data";
  case TypedField::String: return "string_data";
  case TypedField::Int64: return "int64_data";
  case TypedField::Double: return "double_data";
  case TypedField::UInt64: return "uint64_data";
  case TypedField::None: break;
  }
  return "no field";
}

/// Bytes per element stored in one int32_data entry (packed 4/2-bit types:
/// one byte holding several elements).
size_t int32Width(int32_t dt) {
  switch (dt) {
  case 6: return 4;
  case 4: case 5: case 10: case 16: return 2;
  default: return 1;
  }
}

/// Copies each repeated element, truncated to `width` little-endian bytes.
template <typename T>
Buffer packElements(const google::protobuf::RepeatedField<T> &values, size_t width) {
  std::string bytes(static_cast<size_t>(values.size()) * width, '\0');
  char *out = bytes.data();
  if (width == sizeof(T)) {
    if (!values.empty())
      std::memcpy(out, values.data(), bytes.size());
  } else {
    for (const T &v : values) {
      std::memcpy(out, &v, width); // little-endian: the low bytes come first
      out += width;
    }
  }
  return Buffer::fromString(std::move(bytes));
}

} // namespace

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

struct ProtoImporter::Scope {
  Scope *parent = nullptr;
  /// Keys view the Values' own names, which do not move during the import.
  std::unordered_map<std::string_view, Value *> values;

  Value *lookup(std::string_view name) const {
    for (const Scope *s = this; s; s = s->parent)
      if (auto it = s->values.find(name); it != s->values.end())
        return it->second;
    return nullptr;
  }
  Value *local(std::string_view name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second;
  }
  void define(Value *v) {
    if (!v->name().empty())
      values.emplace(v->name(), v);
  }
};

bool ProtoImporter::fail(const std::string &msg) {
  if (!error_.empty())
    return false;
  // Names come from the file: escape control characters so the message stays one line.
  error_ = ctx_.displayName + ": ";
  static const char hex[] = "0123456789abcdef";
  for (char c : msg) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7F) {
      error_ += c;
    } else {
      error_ += "\\x";
      error_ += hex[u >> 4];
      error_ += hex[u & 15];
    }
  }
  return false;
}

void ProtoImporter::reserve(const std::string &name) {
  if (model_)
    model_->names().reserve(name);
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

namespace {

std::optional<Shape> importShape(const onnx::TensorShapeProto &sp) {
  Shape shape;
  shape.reserve(static_cast<size_t>(sp.dim_size()));
  for (const auto &d : sp.dim()) {
    Dim dim;
    if (d.value_case() == onnx::TensorShapeProto::Dimension::kDimValue)
      dim = Dim::value(d.dim_value());
    else if (d.value_case() == onnx::TensorShapeProto::Dimension::kDimParam)
      dim = Dim::symbol(d.dim_param());
    dim.denotation = d.denotation();
    shape.push_back(std::move(dim));
  }
  return shape;
}

} // namespace

std::optional<Type> importType(const onnx::TypeProto &tp, std::string &error) {
  Type t;
  switch (tp.value_case()) {
  case onnx::TypeProto::kTensorType: {
    const auto &tt = tp.tensor_type();
    t = Type::tensor(static_cast<DataType>(tt.elem_type()),
                     tt.has_shape() ? importShape(tt.shape()) : std::nullopt);
    t.hasElemType = tt.has_elem_type();
    break;
  }
  case onnx::TypeProto::kSparseTensorType: {
    const auto &st = tp.sparse_tensor_type();
    t = Type::sparseTensor(static_cast<DataType>(st.elem_type()),
                           st.has_shape() ? importShape(st.shape()) : std::nullopt);
    t.hasElemType = st.has_elem_type();
    break;
  }
  case onnx::TypeProto::kSequenceType: {
    auto inner = importType(tp.sequence_type().elem_type(), error);
    if (!inner)
      return std::nullopt;
    t = Type::sequence(std::move(*inner));
    break;
  }
  case onnx::TypeProto::kOptionalType: {
    auto inner = importType(tp.optional_type().elem_type(), error);
    if (!inner)
      return std::nullopt;
    t = Type::optional(std::move(*inner));
    break;
  }
  case onnx::TypeProto::kMapType: {
    auto inner = importType(tp.map_type().value_type(), error);
    if (!inner)
      return std::nullopt;
    t = Type::map(static_cast<DataType>(tp.map_type().key_type()), std::move(*inner));
    t.hasElemType = tp.map_type().has_key_type();
    break;
  }
  case onnx::TypeProto::kOpaqueType:
    error = "opaque types are not supported";
    return std::nullopt;
  case onnx::TypeProto::VALUE_NOT_SET:
    break;
  }
  t.denotation = tp.denotation();
  return t;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

bool ProtoImporter::decodeTyped(onnx::TensorProto &tp, Tensor &t, const Where &where) {
  int32_t dt = tp.data_type();
  TypedField present = TypedField::None;
  unsigned count = 0;
  auto note = [&](bool has, TypedField f) {
    if (has) {
      present = f;
      ++count;
    }
  };
  note(tp.float_data_size() > 0, TypedField::Float);
  note(tp.int32_data_size() > 0, TypedField::Int32);
  note(tp.string_data_size() > 0, TypedField::String);
  note(tp.int64_data_size() > 0, TypedField::Int64);
  note(tp.double_data_size() > 0, TypedField::Double);
  note(tp.uint64_data_size() > 0, TypedField::UInt64);
  t.encoding = TensorEncoding::Typed;
  if (count == 0)
    return true;
  if (count > 1)
    return fail(where() + ": data is stored in more than one typed field");
  if (present != canonicalField(dt))
    return fail(where() + ": " + fieldName(present) + " cannot hold data of type " +
                dataTypeName(static_cast<DataType>(dt)));
  switch (present) {
  case TypedField::Float:
    t.setBuffer(packElements(tp.float_data(), 4));
    break;
  case TypedField::Int32:
    if (dt == static_cast<int32_t>(DataType::Bool)) {
      // A bool is true when not 0: an entry beyond a byte (256, -1) is
      // byte 1, not its low byte (which may be 0); 0..255 keep their byte.
      std::string bytes;
      bytes.reserve(static_cast<size_t>(tp.int32_data_size()));
      for (int32_t v : tp.int32_data())
        bytes.push_back(static_cast<char>(v >= 0 && v <= 255 ? v : 1));
      t.setBuffer(Buffer::fromString(std::move(bytes)));
      break;
    }
    t.setBuffer(packElements(tp.int32_data(), int32Width(dt)));
    break;
  case TypedField::Int64:
    t.setBuffer(packElements(tp.int64_data(), 8));
    break;
  case TypedField::Double:
    t.setBuffer(packElements(tp.double_data(), 8));
    break;
  case TypedField::UInt64:
    t.setBuffer(packElements(tp.uint64_data(), dt == 12 ? 4 : 8));
    break;
  case TypedField::String: {
    std::vector<std::string> strings;
    strings.reserve(static_cast<size_t>(tp.string_data_size()));
    for (auto &s : *tp.mutable_string_data())
      strings.push_back(std::move(s));
    t.setStrings(std::move(strings));
    break;
  }
  case TypedField::None:
    break;
  }
  return true;
}

namespace {

bool parseUnsigned(const std::string &s, uint64_t &out) {
  if (s.empty() || s.size() > 20)
    return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

std::string realPath(const std::string &path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf))
    return {};
  return buf;
}

} // namespace

bool ProtoImporter::resolveExternal(Tensor &t, const Where &where) {
  std::string location;
  bool hasLocation = false, hasOffset = false, hasLength = false;
  uint64_t offset = 0, length = 0;
  for (const auto &[key, value] : t.externalData) {
    if (key == "location") {
      location = value;
      hasLocation = true;
    } else if (key == "offset") {
      if (!parseUnsigned(value, offset))
        return fail(where() + ": external data offset '" + value + "' is not a non-negative integer");
      hasOffset = true;
    } else if (key == "length") {
      if (!parseUnsigned(value, length))
        return fail(where() + ": external data length '" + value + "' is not a non-negative integer");
      hasLength = true;
    }
  }
  (void)hasOffset;
  std::string what = where() + ": external data location '" + location + "'";
  if (!hasLocation || location.empty())
    return fail(where() + ": data_location is EXTERNAL but external_data has no location");
  if (location.front() == '/')
    return fail(what + " is an absolute path; it must be relative to the model's directory");
  for (size_t start = 0; start <= location.size();) {
    size_t slash = location.find('/', start);
    if (slash == std::string::npos)
      slash = location.size();
    if (location.compare(start, slash - start, "..") == 0 && slash - start == 2)
      return fail(what + " leaves the model's directory ('..')");
    start = slash + 1;
  }
  std::string dir = ctx_.baseDir.empty() ? "." : ctx_.baseDir;
  std::string path = dir + "/" + location;
  std::string realDir = realPath(dir);
  std::string real = realPath(path);
  if (real.empty())
    return fail(what + ": cannot open " + path + ": " + std::strerror(errno));
  if (realDir.empty() || real.compare(0, realDir.size() + 1, realDir + "/") != 0)
    return fail(what + " resolves (through a symbolic link) outside the model's directory");

  std::shared_ptr<MappedFile> &file = ctx_.externalFiles[real];
  if (!file) {
    std::string err;
    file = MappedFile::open(real, err);
    if (!file)
      return fail(what + ": " + path + ": " + err);
  }
  uint64_t size = file->size();
  if (offset > size)
    return fail(what + ": offset " + std::to_string(offset) + " is past the end of the file (" +
                std::to_string(size) + " bytes)");
  if (!hasLength)
    length = size - offset;
  if (length > size - offset)
    return fail(what + ": offset " + std::to_string(offset) + " + length " + std::to_string(length) +
                " is past the end of the file (" + std::to_string(size) + " bytes)");
  t.setBuffer(file->view(file, static_cast<size_t>(offset), static_cast<size_t>(length)));
  return true;
}

TensorPtr ProtoImporter::importTensor(onnx::TensorProto &tp, std::optional<Buffer> raw,
                                      const Where &where) {
  auto t = std::make_shared<Tensor>();
  t->setDims(std::vector<int64_t>(tp.dims().begin(), tp.dims().end()));
  t->setDataType(static_cast<DataType>(tp.data_type()));
  if (tp.has_data_type() && tp.data_type() == 0)
    t->explicitFields.set(2);
  if (tp.has_segment())
    t->segment = std::make_pair(tp.segment().begin(), tp.segment().end());
  t->name = tp.name();
  if (tp.has_name() && tp.name().empty())
    t->explicitFields.set(8);
  t->docString = tp.doc_string();
  if (tp.has_doc_string() && tp.doc_string().empty())
    t->explicitFields.set(12);
  t->dataLocation = tp.data_location();
  if (tp.has_data_location() && tp.data_location() == 0)
    t->explicitFields.set(14);
  t->externalData = importPairs(tp.external_data());
  t->metadataProps = importPairs(tp.metadata_props());

  if (!raw) {
    if (auto it = ctx_.rawViews.find(&tp); it != ctx_.rawViews.end())
      raw = std::move(it->second);
    else if (tp.has_raw_data())
      raw = Buffer::fromString(std::move(*tp.mutable_raw_data()));
  }
  bool hasTyped = tp.float_data_size() || tp.int32_data_size() || tp.string_data_size() ||
                  tp.int64_data_size() || tp.double_data_size() || tp.uint64_data_size();

  if (t->dataLocation == onnx::TensorProto::EXTERNAL) {
    if (raw || hasTyped)
      return fail(where() + ": data_location is EXTERNAL but the tensor also has inline data"), nullptr;
    t->encoding = TensorEncoding::External;
    if (ctx_.options.loadExternalData && !resolveExternal(*t, where))
      return nullptr;
  } else if (raw) {
    if (hasTyped)
      return fail(where() + ": data is stored both in raw_data and in a typed field"), nullptr;
    t->encoding = TensorEncoding::Raw;
    t->setBuffer(std::move(*raw));
  } else if (!decodeTyped(tp, *t, where)) {
    return nullptr;
  }
  return t;
}

std::shared_ptr<const SparseTensor> ProtoImporter::importSparse(onnx::SparseTensorProto &sp,
                                                                const Where &where) {
  auto s = std::make_shared<SparseTensor>();
  s->hasValues = sp.has_values();
  s->hasIndices = sp.has_indices();
  auto values = [&] { return where() + " values"; };
  auto indices = [&] { return where() + " indices"; };
  if (s->hasValues && !(s->values = importTensor(*sp.mutable_values(), std::nullopt, values)))
    return nullptr;
  if (s->hasIndices && !(s->indices = importTensor(*sp.mutable_indices(), std::nullopt, indices)))
    return nullptr;
  s->dims.assign(sp.dims().begin(), sp.dims().end());
  return s;
}

//===----------------------------------------------------------------------===//
// Value infos
//===----------------------------------------------------------------------===//

namespace {

ValueInfoExtras importExtras(const onnx::ValueInfoProto &vi) {
  ValueInfoExtras x;
  x.docString = vi.doc_string();
  x.metadataProps = importPairs(vi.metadata_props());
  if (vi.has_name() && vi.name().empty())
    x.explicitFields.set(1);
  if (vi.has_doc_string() && vi.doc_string().empty())
    x.explicitFields.set(3);
  return x;
}

} // namespace

void ProtoImporter::importValueInfos(RepeatedPtrField<onnx::ValueInfoProto> &infos, Graph &g,
                                     Scope &scope) {
  uint32_t order = 0;
  for (auto &vi : infos) {
    std::string typeError;
    std::optional<Type> type;
    if (vi.has_type())
      type = importType(vi.type(), typeError);
    Value *v = scope.local(vi.name());
    // Attach to the value it names, unless that would lose something: graph
    // inputs carry their own declaration, a second entry for the same value,
    // an untyped entry for an initializer (whose type comes from its data),
    // or a type the IR cannot model.
    bool attach = v && !v->isGraphInput() && v->valueInfoOrder == Value::kNoValueInfo &&
                  typeError.empty() && (vi.has_type() || v->defKind() == Value::DefKind::NodeResult);
    if (attach) {
      v->valueInfoOrder = order;
      v->setType(std::move(type));
      v->info = importExtras(vi);
    } else {
      OrphanValueInfo o;
      o.order = order;
      o.name = vi.name();
      o.type = std::move(type);
      o.info = importExtras(vi);
      if (!typeError.empty())
        o.type.reset();
      g.orphanValueInfos.push_back(std::move(o));
    }
    g.noteValueInfoOrder(order);
    ++order;
  }
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

bool ProtoImporter::importSubgraph(onnx::GraphProto &gp, Node *owner, Scope *scope,
                                   const std::string &path, std::unique_ptr<Graph> &out) {
  out = std::make_unique<Graph>();
  if (owner)
    out->setParentNode(owner);
  return importGraph(gp, *out, scope, path);
}

bool ProtoImporter::importAttribute(onnx::AttributeProto &ap, Node *owner, Scope *scope,
                                    const Where &nodePath, Attribute &a) {
  a.name = ap.name();
  if (ap.has_name() && ap.name().empty())
    a.explicitFields.set(1);
  a.refAttrName = ap.ref_attr_name();
  if (ap.has_ref_attr_name() && ap.ref_attr_name().empty())
    a.explicitFields.set(21);
  a.docString = ap.doc_string();
  if (ap.has_doc_string() && ap.doc_string().empty())
    a.explicitFields.set(13);
  a.hasKind = ap.has_type();
  a.kind = static_cast<AttrKind>(ap.type());
  auto where = [&] { return nodePath() + " attribute '" + a.name + "'"; };

  if (ap.has_f()) {
    a.f = ap.f();
    if (std::bit_cast<uint32_t>(a.f) == 0)
      a.explicitFields.set(2);
  }
  if (ap.has_i()) {
    a.i = ap.i();
    if (a.i == 0)
      a.explicitFields.set(3);
  }
  if (ap.has_s()) {
    a.s = std::move(*ap.mutable_s());
    if (a.s.empty())
      a.explicitFields.set(4);
  }
  if (ap.has_t() && !(a.t = importTensor(*ap.mutable_t(), std::nullopt, where)))
    return false;
  if (ap.has_g() && !importSubgraph(*ap.mutable_g(), owner, scope, nodePath() + "." + a.name, a.g))
    return false;
  if (ap.has_sparse_tensor() &&
      !(a.sparseTensor = importSparse(*ap.mutable_sparse_tensor(), where)))
    return false;
  if (ap.has_tp()) {
    std::string err;
    a.tp = importType(ap.tp(), err);
    if (!a.tp)
      return fail(where() + ": " + err);
  }
  a.floats.assign(ap.floats().begin(), ap.floats().end());
  a.ints.assign(ap.ints().begin(), ap.ints().end());
  a.strings.reserve(static_cast<size_t>(ap.strings_size()));
  for (auto &s : *ap.mutable_strings())
    a.strings.push_back(std::move(s));
  for (int i = 0; i < ap.tensors_size(); ++i) {
    auto tensorWhere = [&] { return where() + " tensor #" + std::to_string(i); };
    TensorPtr t = importTensor(*ap.mutable_tensors(i), std::nullopt, tensorWhere);
    if (!t)
      return false;
    a.tensors.push_back(std::move(t));
  }
  for (int i = 0; i < ap.graphs_size(); ++i) {
    std::unique_ptr<Graph> g;
    if (!importSubgraph(*ap.mutable_graphs(i), owner, scope,
                        nodePath() + "." + a.name + "[" + std::to_string(i) + "]", g))
      return false;
    a.graphs.push_back(std::move(g));
  }
  for (int i = 0; i < ap.sparse_tensors_size(); ++i) {
    auto sparseWhere = [&] { return where() + " sparse tensor #" + std::to_string(i); };
    auto s = importSparse(*ap.mutable_sparse_tensors(i), sparseWhere);
    if (!s)
      return false;
    a.sparseTensors.push_back(std::move(s));
  }
  for (const auto &tp : ap.type_protos()) {
    std::string err;
    auto t = importType(tp, err);
    if (!t)
      return fail(where() + ": " + err);
    a.typeProtos.push_back(std::move(*t));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

bool ProtoImporter::sortNodes(const RepeatedPtrField<onnx::NodeProto> &nodes, const Scope &scope,
                              const std::string &path, std::vector<int> &order) {
  const int n = nodes.size();
  // Which node defines each local name.
  std::unordered_map<std::string_view, int> producer;
  producer.reserve(static_cast<size_t>(n) * 2);
  for (int i = 0; i < n; ++i)
    for (const auto &o : nodes[i].output()) {
      if (o.empty())
        continue;
      if (scope.local(o))
        return fail(path + " / " + describeNode(nodes[i], static_cast<size_t>(i)) + ": output '" + o +
                    "' redefines a graph input or initializer");
      auto [it, fresh] = producer.emplace(o, i);
      if (!fresh)
        return fail(path + " / " + describeNode(nodes[i], static_cast<size_t>(i)) + ": output '" + o +
                    "' is already defined by " +
                    describeNode(nodes[it->second], static_cast<size_t>(it->second)));
    }

  // Each node's local dependencies: its inputs and the names its subgraphs
  // capture. The first pass only checks the order (the common case).
  auto forEachDependency = [&](int i, auto &&fn) {
    for (const auto &in : nodes[i].input())
      if (!in.empty())
        if (auto it = producer.find(in); it != producer.end())
          fn(it->second);
    for (const auto &a : nodes[i].attribute()) {
      if (a.has_g())
        for (const std::string &name : freeNames(a.g()))
          if (auto it = producer.find(name); it != producer.end())
            fn(it->second);
      for (const auto &sg : a.graphs())
        for (const std::string &name : freeNames(sg))
          if (auto it = producer.find(name); it != producer.end())
            fn(it->second);
    }
  };
  bool sorted = true;
  for (int i = 0; i < n && sorted; ++i)
    forEachDependency(i, [&](int d) { sorted = sorted && d < i; });
  order.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    order[static_cast<size_t>(i)] = i;
  if (sorted)
    return true;

  std::vector<std::vector<int>> deps(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    forEachDependency(i, [&](int d) { deps[static_cast<size_t>(i)].push_back(d); });

  // The file's node list is not in topological order (ONNX requires it, but
  // some exporters and hand-edited models get it wrong): sort it stably,
  // always taking the ready node that came first in the file.
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    for (int d : deps[static_cast<size_t>(i)]) {
      ++pending[static_cast<size_t>(i)];
      users[static_cast<size_t>(d)].push_back(i);
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[static_cast<size_t>(i)] == 0)
      ready.push(i);
  order.clear();
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(u)] == 0)
        ready.push(u);
  }
  if (static_cast<int>(order.size()) == n)
    return true;

  // A cycle: walk dependencies among the unplaced nodes until one repeats.
  std::vector<char> placed(static_cast<size_t>(n), 0), seen(static_cast<size_t>(n), 0);
  for (int i : order)
    placed[static_cast<size_t>(i)] = 1;
  int cur = 0;
  while (placed[static_cast<size_t>(cur)])
    ++cur;
  while (!seen[static_cast<size_t>(cur)]) {
    seen[static_cast<size_t>(cur)] = 1;
    for (int d : deps[static_cast<size_t>(cur)])
      if (!placed[static_cast<size_t>(d)]) {
        cur = d;
        break;
      }
  }
  return fail(path + " / " + describeNode(nodes[cur], static_cast<size_t>(cur)) +
              ": the graph has a cycle through this node");
}

const std::vector<std::string> &ProtoImporter::freeNames(const onnx::GraphProto &g) {
  if (auto it = freeNames_.find(&g); it != freeNames_.end())
    return it->second;
  std::unordered_set<std::string_view> defined;
  for (const auto &vi : g.input())
    defined.insert(vi.name());
  for (const auto &t : g.initializer())
    defined.insert(t.name());
  for (const auto &sp : g.sparse_initializer())
    defined.insert(sp.values().name());
  for (const auto &n : g.node())
    for (const auto &o : n.output())
      defined.insert(o);
  // Views into the protos and into inner graphs' memoized lists, both stable.
  std::unordered_set<std::string_view> seen;
  std::vector<std::string> out;
  auto use = [&](const std::string &name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second)
      out.push_back(name);
  };
  for (const auto &n : g.node()) {
    for (const auto &i : n.input())
      use(i);
    for (const auto &a : n.attribute()) {
      if (a.has_g())
        for (const std::string &name : freeNames(a.g()))
          use(name);
      for (const auto &sg : a.graphs())
        for (const std::string &name : freeNames(sg))
          use(name);
    }
  }
  for (const auto &o : g.output())
    use(o.name());
  return freeNames_[&g] = std::move(out);
}

bool ProtoImporter::importNode(onnx::NodeProto &np, size_t index, Graph &g, Scope &scope,
                               const std::string &path) {
  std::vector<Value *> operands;
  operands.reserve(static_cast<size_t>(np.input_size()));
  for (const auto &name : np.input()) {
    if (name.empty()) {
      operands.push_back(nullptr);
      continue;
    }
    Value *v = scope.lookup(name);
    if (!v)
      return fail(path + " / " + describeNode(np, index) + ": input '" + name +
                  "' names no value in scope");
    operands.push_back(v);
  }
  Node *n = g.createNode(np.op_type(), operands, {}, np.domain());
  n->setName(np.name());
  reserve(np.name());
  ExplicitFields &ef = n->explicitFields;
  if (np.has_name() && np.name().empty())
    ef.set(3);
  if (np.has_op_type() && np.op_type().empty())
    ef.set(4);
  if (np.has_domain() && np.domain().empty())
    ef.set(7);
  n->overload = np.overload();
  if (np.has_overload() && np.overload().empty())
    ef.set(8);
  n->docString = np.doc_string();
  if (np.has_doc_string() && np.doc_string().empty())
    ef.set(6);
  n->metadataProps = importPairs(np.metadata_props());
  for (const auto &dc : np.device_configurations())
    n->deviceConfigurations.push_back(dc.SerializeAsString());

  auto nodePath = [&] { return path + " / " + np.op_type() + " '" + np.name() + "'"; };
  n->attributes().reserve(static_cast<size_t>(np.attribute_size()));
  for (auto &ap : *np.mutable_attribute()) {
    Attribute a;
    if (!importAttribute(ap, n, &scope, nodePath, a)) {
      n->erase();
      return false;
    }
    n->attributes().push_back(std::move(a));
  }

  for (const auto &name : np.output()) {
    if (name.empty())
      n->addAbsentResult();
    else
      n->addResult(name);
  }
  g.append(n);
  for (Value *r : n->results())
    if (r)
      scope.define(r);
  return true;
}

bool ProtoImporter::importNodes(RepeatedPtrField<onnx::NodeProto> &nodes, Graph &g, Scope &scope,
                                const std::string &path) {
  std::vector<int> order;
  if (!sortNodes(nodes, scope, path, order))
    return false;
  scope.values.reserve(scope.values.size() + static_cast<size_t>(nodes.size()) * 2);
  for (int i : order)
    if (!importNode(nodes[i], static_cast<size_t>(i), g, scope, path))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

bool ProtoImporter::importInitializer(onnx::TensorProto &tp, Graph &g, Scope &scope,
                                      const std::string &path, size_t index) {
  auto where = [&] {
    return path + " / initializer " + (tp.name().empty() ? "#" + std::to_string(index) : quoted(tp.name()));
  };
  TensorPtr t = importTensor(tp, std::nullopt, where);
  if (!t)
    return false;
  if (Value *prev = scope.local(t->name)) {
    if (prev->isGraphInput() && !prev->initializer() && !prev->sparseInitializer()) {
      g.addInitializerToInput(prev, std::move(t));
      return true;
    }
    return fail(where() + ": the name is defined twice");
  }
  std::string name = t->name;
  scope.define(g.addInitializer(std::move(name), std::move(t)));
  return true;
}

bool ProtoImporter::importOutputs(RepeatedPtrField<onnx::ValueInfoProto> &outputs, Graph &g,
                                  Scope &scope, const std::string &path) {
  for (auto &vi : outputs) {
    Value *v = scope.lookup(vi.name());
    if (!v)
      return fail(path + ": output '" + vi.name() + "' names no value in scope");
    std::optional<Type> type;
    if (vi.has_type()) {
      std::string err;
      if (!(type = importType(vi.type(), err)))
        return fail(path + ": output '" + vi.name() + "': " + err);
    }
    size_t slot = g.addOutput(v, std::move(type));
    g.outputSlot(slot).info = importExtras(vi);
  }
  return true;
}

bool ProtoImporter::importGraph(onnx::GraphProto &gp, Graph &g, Scope *parent,
                                const std::string &path) {
  Scope scope;
  scope.parent = parent;
  g.name = gp.name();
  if (gp.has_name() && gp.name().empty())
    g.explicitFields.set(2);
  reserve(g.name);
  g.docString = gp.doc_string();
  if (gp.has_doc_string() && gp.doc_string().empty())
    g.explicitFields.set(10);
  g.metadataProps = importPairs(gp.metadata_props());

  for (auto &vi : gp.input()) {
    if (!vi.name().empty() && scope.local(vi.name()))
      return fail(path + ": input '" + vi.name() + "' is declared twice");
    std::optional<Type> type;
    if (vi.has_type()) {
      std::string err;
      if (!(type = importType(vi.type(), err)))
        return fail(path + ": input '" + vi.name() + "': " + err);
    }
    Value *v = g.addInput(vi.name(), std::move(type));
    v->info = importExtras(vi);
    scope.define(v);
  }

  for (int i = 0; i < gp.initializer_size(); ++i)
    if (!importInitializer(*gp.mutable_initializer(i), g, scope, path, static_cast<size_t>(i)))
      return false;
  for (int i = 0; i < gp.sparse_initializer_size(); ++i) {
    auto &sp = *gp.mutable_sparse_initializer(i);
    std::string name = sp.values().name();
    auto where = [&] { return path + " / sparse initializer '" + name + "'"; };
    if (scope.local(name))
      return fail(where() + ": the name is already defined (sparse defaults for graph inputs are not supported)");
    auto s = importSparse(sp, where);
    if (!s)
      return false;
    scope.define(g.addSparseInitializer(std::move(name), std::move(s)));
  }

  if (!importNodes(*gp.mutable_node(), g, scope, path) ||
      !importOutputs(*gp.mutable_output(), g, scope, path))
    return false;
  importValueInfos(*gp.mutable_value_info(), g, scope);

  for (const auto &qa : gp.quantization_annotation()) {
    TensorAnnotation ta;
    ta.tensorName = qa.tensor_name();
    if (qa.has_tensor_name() && qa.tensor_name().empty())
      ta.explicitFields.set(1);
    ta.quantParameterTensorNames = importPairs(qa.quant_parameter_tensor_names());
    g.quantizationAnnotations.push_back(std::move(ta));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Functions and the model
//===----------------------------------------------------------------------===//

namespace {

OpsetId importOpset(const onnx::OperatorSetIdProto &op) {
  OpsetId o;
  o.domain = op.domain();
  o.version = op.version();
  if (op.has_domain() && op.domain().empty())
    o.explicitFields.set(1);
  if (op.has_version() && op.version() == 0)
    o.explicitFields.set(2);
  return o;
}

} // namespace

bool ProtoImporter::importFunction(onnx::FunctionProto &fp, Function &f) {
  f.name = fp.name();
  f.domain = fp.domain();
  f.overload = fp.overload();
  f.docString = fp.doc_string();
  ExplicitFields &ef = f.explicitFields;
  if (fp.has_name() && fp.name().empty())
    ef.set(1);
  if (fp.has_doc_string() && fp.doc_string().empty())
    ef.set(8);
  if (fp.has_domain() && fp.domain().empty())
    ef.set(10);
  if (fp.has_overload() && fp.overload().empty())
    ef.set(13);
  f.attributeNames.assign(fp.attribute().begin(), fp.attribute().end());
  for (const auto &op : fp.opset_import())
    f.opsetImport.push_back(importOpset(op));
  f.metadataProps = importPairs(fp.metadata_props());

  std::string path = "function '" + (f.domain.empty() ? f.name : f.domain + "." + f.name) + "'";
  for (auto &ap : *fp.mutable_attribute_proto()) {
    Attribute a;
    if (!importAttribute(ap, nullptr, nullptr, [&] { return path; }, a))
      return false;
    f.attributeProtos.push_back(std::move(a));
  }

  f.body = std::make_unique<Graph>();
  Graph &g = *f.body;
  Scope scope;
  for (const auto &name : fp.input()) {
    if (!name.empty() && scope.local(name))
      return fail(path + ": input '" + name + "' is declared twice");
    Value *v = g.addInput(name);
    reserve(name);
    scope.define(v);
  }
  if (!importNodes(*fp.mutable_node(), g, scope, path))
    return false;
  for (const auto &name : fp.output()) {
    Value *v = scope.lookup(name);
    if (!v)
      return fail(path + ": output '" + name + "' names no value in scope");
    g.addOutput(v);
  }
  importValueInfos(*fp.mutable_value_info(), g, scope);
  // Function bodies have no model link (their names are not the model's), but
  // reserving them keeps fresh names from ever colliding with them.
  g.walk([&](Node *n) {
    for (Value *r : n->results())
      if (r)
        reserve(r->name());
  });
  return true;
}

std::unique_ptr<Model> ProtoImporter::importModel(onnx::ModelProto &mp, onnx::GraphProto *graph,
                                                  std::vector<std::string> trainingInfo,
                                                  std::vector<std::string> configuration) {
  auto model = std::make_unique<Model>();
  model_ = model.get();
  Model &m = *model;
  ExplicitFields &ef = m.explicitFields;
  m.irVersion = mp.ir_version();
  if (mp.has_ir_version() && mp.ir_version() == 0)
    ef.set(1);
  m.producerName = mp.producer_name();
  if (mp.has_producer_name() && mp.producer_name().empty())
    ef.set(2);
  m.producerVersion = mp.producer_version();
  if (mp.has_producer_version() && mp.producer_version().empty())
    ef.set(3);
  m.domain = mp.domain();
  if (mp.has_domain() && mp.domain().empty())
    ef.set(4);
  m.modelVersion = mp.model_version();
  if (mp.has_model_version() && mp.model_version() == 0)
    ef.set(5);
  m.docString = mp.doc_string();
  if (mp.has_doc_string() && mp.doc_string().empty())
    ef.set(6);
  for (const auto &op : mp.opset_import())
    m.opsetImport.push_back(importOpset(op));
  m.metadataProps = importPairs(mp.metadata_props());
  m.trainingInfo = std::move(trainingInfo);
  m.configuration = std::move(configuration);

  if (graph) {
    m.setGraph(std::make_unique<Graph>());
    std::string path = "graph '" + graph->name() + "'";
    if (!importGraph(*graph, *m.graph(), nullptr, path))
      return nullptr;
  }
  for (auto &fp : *mp.mutable_functions()) {
    auto f = std::make_unique<Function>();
    if (!importFunction(fp, *f))
      return nullptr;
    m.functions.push_back(std::move(f));
  }
  model_ = nullptr;
  return model;
}

} // namespace onnxslim::frontend
