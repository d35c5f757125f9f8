//===- ir/Printer.cpp - The IR as ONNX textual syntax ---------------------===//
//
// Prints the IR in ONNX's textual syntax (onnx/docs/Syntax.md) plus a small,
// uniform extension that makes the text a lossless image of the IR: the
// parser in frontend/TextParser reads it back into an IR that
// ir/Equivalence finds equal, field by field. docs/TextFormat.md has the
// same grammar with examples.
//
// Standard syntax used as is: the model header `<ir_version: .., ...>`,
// graphs `name (inputs) => (outputs) <initializers, value infos> {nodes}`,
// nodes `[name] outs = domain.Op:overload <attrs> (ins)`, typed attributes
// `name: type = value`, reference attributes `= @ref`, tensor constants
// `float[2] {1, 2}`, external data `= ["location": "f", ...]`, functions
// `<domain: .., opset_import: [..]> F <attrs> (ins) => (outs) {nodes}`.
// An initializer that is also a graph input is printed in the `<...>` list
// under the input's name (in proto terms: an initializer named like an input).
//
// Extensions (all optional; an absent extension means the default):
//
//   annotation ::= '@<' (key ':' ann-value (',' key ':' ann-value)*)? '>'
//
// An annotation block describes the construct right before it: a model
// header (or the start of the text), an opset entry, a graph or function
// name, a value declaration `type name`, a graph output, tensor data, a type,
// a dim, an attribute name (with its `: type`, before the `=`), or a whole
// node (after its operand list and any trailing attribute list). It is
// printed only when something in it is non-default. Keys:
//
//   any:       explicit: [field, ...]   ExplicitFields bits, as proto field
//                                       names (or numbers) of that message.
//                                       Written values imply their bit: an
//                                       attribute's own field (`axis = 0`), an
//                                       opset's "" domain and 0 version.
//   model:     training_info: [bytes, ...], configuration: [bytes, ...]
//              (serialized protos), graph: none (a model without a graph)
//   graph:     doc_string: s, metadata_props: [s: s, ...],
//              node_explicit: [field, ...]  (the explicit set of every node
//                  of the graph that has no `explicit:` of its own),
//              quantization_annotation: [<tensor_name: s,
//                  quant_parameter_tensor_names: [s: s, ...], explicit: [..]>, ...]
//   function:  metadata_props, node_explicit, body: <name: s, doc_string, metadata_props,
//                  quantization_annotation, explicit>   (the body graph's fields)
//   node:      doc_string, metadata_props, device_configurations: [bytes, ...],
//              domain: s, overload: s (when not expressible as `dom.Op:ov`)
//   value:     doc_string, metadata_props, order: int | none, orphan: 1
//   output:    doc_string, metadata_props, type: type (function outputs)
//   tensor:    name: s, doc_string, encoding: raw | typed | external,
//              external_data: [s: s, ...], data_location: int,
//              segment: [begin, end], metadata_props
//   attribute: doc_string, has_kind: 0 | 1, and any field outside the kind
//              (i, f, s, t, g, tp, sparse_tensor, ints, floats, strings,
//              tensors, graphs, sparse_tensors, type_protos: value)
//   type:      denotation: s, has_elem_type: 0 | 1
//   dim:       denotation: s
//
// Value declarations in a graph's `<...>` list are value_info entries, in
// value_info order: each gets the previous entry's order + 1 (the first 0)
// unless `order:` says otherwise; `order: none` declares a type (or doc) of a
// value that has no value_info entry; `orphan: 1` keeps an entry that names
// no value of the graph. A declaration sets the value's type exactly (no type
// written: no type).
//
// Smaller extensions:
//   prim-type   ::= name | 'undefined' | 'dtype' '(' int ')'   (unknown numbers)
//   type        ::= ... | 'empty'           (a TypeProto with no value set)
//   value-info  ::= type? quotable-id annotation?   (untyped declarations and
//                                                    outputs, as in functions)
//   tensor-data ::= '{' constants? '}' | '0x' hex-digits | str-str-list | 'none'
//     `0x...` is the raw little-endian bytes, used when the data does not fit
//     the element list: wrong byte size, bool bytes other than 0/1, nonzero
//     padding in a 4-bit tensor, unknown element types.
//   float       ::= ... | nan | -nan | inf | -inf | 'nan' '(' 0x<bits> ')'
//     (NaN with a payload other than the default quiet NaN)
//   sparse      ::= 'sparse' '(' tensor-constant | 'none' ',' tensor-constant | 'none' ')'
//     after a `sparse_tensor(T[dims])` type: values and indices of a sparse
//     initializer or attribute value; dims come from the type.
//   attr-value  ::= ... | 'none'   (kind set, value field absent; typed form)
//   strings     C escapes: \" \\ \n \t \r \xNN (bytes that are not printable
//               or not valid UTF-8); any other escaped character stands for itself.
//   `{...}`     an elided large constant (PrintOptions); the parser rejects it.
//
// Numbers round-trip exactly: floats and doubles print the shortest decimal
// that reads back to the same bits (std::to_chars); float16, bfloat16 and the
// float8 types print their bit patterns as integers, as ONNX's printer does;
// complex types print (real, imaginary) pairs.
//
//===----------------------------------------------------------------------===//
#include "ir/Printer.h"

#include "ir/IR.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>
#include <unordered_map>

namespace onnxslim {

//===----------------------------------------------------------------------===//
// Shared tables
//===----------------------------------------------------------------------===//

namespace textsyntax {

namespace {
struct FieldName {
  unsigned number;
  std::string_view name;
};

constexpr FieldName kModelFields[] = {
    {1, "ir_version"},     {2, "producer_name"}, {3, "producer_version"}, {4, "domain"},
    {5, "model_version"},  {6, "doc_string"},    {7, "graph"},            {8, "opset_import"},
    {14, "metadata_props"}, {20, "training_info"}, {25, "functions"},     {26, "configuration"}};
constexpr FieldName kOpsetFields[] = {{1, "domain"}, {2, "version"}};
constexpr FieldName kGraphFields[] = {
    {1, "node"},       {2, "name"},    {5, "initializer"}, {10, "doc_string"},
    {11, "input"},     {12, "output"}, {13, "value_info"}, {14, "quantization_annotation"},
    {15, "sparse_initializer"}, {16, "metadata_props"}};
constexpr FieldName kNodeFields[] = {
    {1, "input"},      {2, "output"}, {3, "name"},      {4, "op_type"},         {5, "attribute"},
    {6, "doc_string"}, {7, "domain"}, {8, "overload"},  {9, "metadata_props"}, {10, "device_configurations"}};
constexpr FieldName kValueInfoFields[] = {{1, "name"}, {2, "type"}, {3, "doc_string"}, {4, "metadata_props"}};
constexpr FieldName kTensorFields[] = {
    {1, "dims"},        {2, "data_type"},   {3, "segment"},        {4, "float_data"},
    {5, "int32_data"},  {6, "string_data"}, {7, "int64_data"},     {8, "name"},
    {9, "raw_data"},    {10, "double_data"}, {11, "uint64_data"},  {12, "doc_string"},
    {13, "external_data"}, {14, "data_location"}, {16, "metadata_props"}};
constexpr FieldName kAttributeFields[] = {
    {1, "name"},    {2, "f"},        {3, "i"},       {4, "s"},       {5, "t"},
    {6, "g"},       {7, "floats"},   {8, "ints"},    {9, "strings"}, {10, "tensors"},
    {11, "graphs"}, {13, "doc_string"}, {14, "tp"},  {15, "type_protos"}, {20, "type"},
    {21, "ref_attr_name"}, {22, "sparse_tensor"}, {23, "sparse_tensors"}};
constexpr FieldName kFunctionFields[] = {
    {1, "name"},        {4, "input"},         {5, "output"},  {6, "attribute"},
    {7, "node"},        {8, "doc_string"},    {9, "opset_import"}, {10, "domain"},
    {11, "attribute_proto"}, {12, "value_info"}, {13, "overload"}, {14, "metadata_props"}};
constexpr FieldName kTensorAnnotationFields[] = {{1, "tensor_name"}, {2, "quant_parameter_tensor_names"}};

std::pair<const FieldName *, size_t> fieldsOf(FieldSet set) {
  switch (set) {
  case FieldSet::Model: return {kModelFields, std::size(kModelFields)};
  case FieldSet::OperatorSetId: return {kOpsetFields, std::size(kOpsetFields)};
  case FieldSet::Graph: return {kGraphFields, std::size(kGraphFields)};
  case FieldSet::Node: return {kNodeFields, std::size(kNodeFields)};
  case FieldSet::ValueInfo: return {kValueInfoFields, std::size(kValueInfoFields)};
  case FieldSet::Tensor: return {kTensorFields, std::size(kTensorFields)};
  case FieldSet::Attribute: return {kAttributeFields, std::size(kAttributeFields)};
  case FieldSet::Function: return {kFunctionFields, std::size(kFunctionFields)};
  case FieldSet::TensorAnnotation: return {kTensorAnnotationFields, std::size(kTensorAnnotationFields)};
  }
  return {nullptr, 0};
}

constexpr std::pair<AttrKind, std::string_view> kAttrKinds[] = {
    {AttrKind::Undefined, "undefined"},  {AttrKind::Float, "float"},
    {AttrKind::Int, "int"},              {AttrKind::String, "string"},
    {AttrKind::Tensor, "tensor"},        {AttrKind::Graph, "graph"},
    {AttrKind::SparseTensor, "sparse_tensor"}, {AttrKind::TypeProto, "type_proto"},
    {AttrKind::Floats, "floats"},        {AttrKind::Ints, "ints"},
    {AttrKind::Strings, "strings"},      {AttrKind::Tensors, "tensors"},
    {AttrKind::Graphs, "graphs"},        {AttrKind::SparseTensors, "sparse_tensors"},
    {AttrKind::TypeProtos, "type_protos"}};

constexpr std::string_view kReservedWords[] = {
    "undefined", "dtype", "seq", "map", "optional", "sparse_tensor", "empty", "none",
    "nan", "inf", "infinity", "sparse", "opaque"};
} // namespace

std::string_view explicitFieldName(FieldSet set, unsigned number) {
  auto [table, n] = fieldsOf(set);
  for (size_t i = 0; i < n; ++i)
    if (table[i].number == number)
      return table[i].name;
  return {};
}

std::optional<unsigned> explicitFieldNumber(FieldSet set, std::string_view name) {
  auto [table, n] = fieldsOf(set);
  for (size_t i = 0; i < n; ++i)
    if (table[i].name == name)
      return table[i].number;
  return std::nullopt;
}

ExplicitFields impliedExplicitFields(const Attribute &a) {
  ExplicitFields f;
  if (!a.refAttrName.empty())
    return f;
  uint32_t bits;
  std::memcpy(&bits, &a.f, 4);
  if (a.kind == AttrKind::Float && bits == 0)
    f.set(2);
  else if (a.kind == AttrKind::Int && a.i == 0)
    f.set(3);
  else if (a.kind == AttrKind::String && a.s.empty())
    f.set(4);
  return f;
}

ExplicitFields impliedExplicitFields(const OpsetId &o) {
  ExplicitFields f;
  if (o.domain.empty())
    f.set(1);
  if (o.version == 0)
    f.set(2);
  return f;
}

bool isIdentifier(std::string_view s) {
  if (s.empty())
    return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0]))
    return false;
  for (char c : s.substr(1))
    if (!alpha(c) && !(c >= '0' && c <= '9'))
      return false;
  return true;
}

bool isReservedWord(std::string_view s) {
  if (parseDataTypeName(s))
    return true;
  std::string lower;
  if (s.size() <= 8) {
    for (char c : s)
      lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "nan" || lower == "inf" || lower == "infinity")
      return true;
  }
  return std::find(std::begin(kReservedWords), std::end(kReservedWords), s) != std::end(kReservedWords);
}

std::string attrKindName(AttrKind kind) {
  for (const auto &[k, name] : kAttrKinds)
    if (k == kind)
      return std::string(name);
  return std::to_string(static_cast<int32_t>(kind));
}

std::optional<AttrKind> parseAttrKindName(std::string_view name) {
  for (const auto &[k, n] : kAttrKinds)
    if (n == name)
      return k;
  return std::nullopt;
}

namespace {
/// Length of the valid UTF-8 sequence at s[i] (>= 2), or 0 when invalid.
size_t utf8Length(std::string_view s, size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t cp;
  if (b >= 0xC2 && b <= 0xDF) { len = 2; cp = b & 0x1F; }
  else if (b >= 0xE0 && b <= 0xEF) { len = 3; cp = b & 0x0F; }
  else if (b >= 0xF0 && b <= 0xF4) { len = 4; cp = b & 0x07; }
  else return 0;
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80)
      return 0;
    cp = cp << 6 | (c & 0x3F);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return len;
}
} // namespace

void appendQuoted(std::string &out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') { out += "\\n"; ++i; }
    else if (c == '\t') { out += "\\t"; ++i; }
    else if (c == '\r') { out += "\\r"; ++i; }
    else if (size_t len = c >= 0x80 ? utf8Length(s, i) : 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  out += '"';
}

} // namespace textsyntax

using namespace textsyntax;

//===----------------------------------------------------------------------===//
// Printer
//===----------------------------------------------------------------------===//

namespace {

/// Whether a float attribute value or element is the default (+0.0).
bool isPositiveZero(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits == 0;
}

std::optional<Type> derivedInitializerType(const TensorPtr &t) {
  if (!t)
    return std::nullopt;
  Shape shape;
  for (int64_t d : t->dims())
    shape.push_back(Dim::value(d));
  return Type::tensor(t->dtype(), std::move(shape));
}

constexpr unsigned kTensorNameField = 8;

bool isDefault(const ValueInfoExtras &info) {
  return info.docString.empty() && info.metadataProps.empty() && info.explicitFields == ExplicitFields();
}

class Printer;

/// Opens ` @<` on the first key and closes with `>` when done. A record
/// (`<key: value, ...>`, the value of some annotation keys) always prints.
class Annot {
public:
  explicit Annot(Printer &p, bool record = false) : p_(p), record_(record) {}
  Annot(const Annot &) = delete;
  Annot &operator=(const Annot &) = delete;
  ~Annot() { close(); }
  /// Starts the entry `key: `; the caller prints the value.
  Printer &key(std::string_view k);
  void close();

private:
  Printer &p_;
  bool record_;
  bool open_ = false;
  bool closed_ = false;
};

class Printer {
public:
  Printer(std::ostream &os, const PrintOptions &options) : os_(os), opt_(options) {}
  ~Printer() { flush(); }
  Printer(const Printer &) = delete;
  Printer &operator=(const Printer &) = delete;

  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  void out(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= (1u << 20))
      flush();
  }
  void out(char c) { buf_ += c; }

  void model(const Model &m);
  void graph(const Graph &g, const Function *fn = nullptr);
  void node(const Node &n);
  void type(const Type &t);

private:
  friend class Annot;

  void newline() {
    buf_ += '\n';
    buf_.append(indent_, ' ');
  }
  void quoted(std::string_view s) { appendQuoted(buf_, s); }
  /// A value, graph or function name: bare when it is a plain identifier.
  void id(std::string_view s) {
    if (isIdentifier(s) && !isReservedWord(s))
      out(s);
    else
      quoted(s);
  }
  /// A name where keywords mean nothing (attribute names, node names, dims).
  void label(std::string_view s) {
    if (isIdentifier(s))
      out(s);
    else
      quoted(s);
  }
  template <typename T> void number(T v) {
    std::array<char, 64> b;
    auto r = std::to_chars(b.data(), b.data() + b.size(), v);
    out(std::string_view(b.data(), static_cast<size_t>(r.ptr - b.data())));
  }
  template <typename F, typename Bits> void floating(F v, Bits canonicalNan);
  void floatLiteral(float v, bool forceFloat);
  void doubleLiteral(double v);

  // Annotation pieces.
  /// `explicit: [...]` when `f` differs from what the text implies.
  void explicitFields(Annot &a, FieldSet set, const ExplicitFields &f, const ExplicitFields &implied = {},
                      const char *key = "explicit");
  void docString(Annot &a, const std::string &doc) {
    if (!doc.empty() && opt_.printDocStrings) {
      a.key("doc_string");
      quoted(doc);
    }
  }
  void pairs(const StringPairs &p);
  void metadata(Annot &a, const char *key, const StringPairs &p) {
    if (!p.empty()) {
      a.key(key);
      pairs(p);
    }
  }
  void byteStrings(Annot &a, const char *key, const std::vector<std::string> &list);
  void valueInfoExtras(Annot &a, const ValueInfoExtras &info) {
    docString(a, info.docString);
    metadata(a, "metadata_props", info.metadataProps);
    explicitFields(a, FieldSet::ValueInfo, info.explicitFields);
  }
  void graphFields(Annot &a, const Graph &g);

  // Types and tensors.
  void elemType(DataType t);
  void shape(const std::optional<Shape> &s);
  void tensorType(const Tensor &t);
  void tensorData(const Tensor &t);
  void tensorAnnotation(const Tensor &t, const std::string *impliedName, const ExplicitFields &implied = {});
  void tensorConstant(const TensorPtr &t);
  /// `sparse_tensor(T[dims]) sparse(values, indices)`; with `valueName`, the
  /// initializer form `sparse_tensor(T[dims]) name = sparse(...)`.
  void sparseConstant(const std::shared_ptr<const SparseTensor> &s, const std::string *valueName = nullptr);
  bool elided(const Tensor &t) const {
    size_t n = t.dtype() == DataType::String ? t.strings().size() : static_cast<size_t>(t.numElements());
    return !opt_.printLargeConstants && n > opt_.largeConstantElements;
  }

  // Graph pieces.
  void opsets(const std::vector<OpsetId> &list);
  /// The `<...>` list: initializers, then value declarations in value_info order.
  void declarations(const Graph &g, bool isFunction);
  void attribute(const Attribute &a);
  void attributeValue(const Attribute &a, AttrKind kind);
  void graphValue(const Graph *g);
  void nodeList(const Graph &g);

  std::ostream &os_;
  const PrintOptions &opt_;
  std::string buf_;
  size_t indent_ = 0;
  /// The explicit-field default of the nodes of the graph being printed.
  ExplicitFields nodeExplicit_;
};

Printer &Annot::key(std::string_view k) {
  p_.out(open_ ? ", " : record_ ? "<" : " @<");
  open_ = true;
  p_.out(k);
  p_.out(": ");
  return p_;
}

void Annot::close() {
  if (!closed_ && record_ && !open_)
    p_.out('<');
  if (!closed_ && (open_ || record_))
    p_.out('>');
  closed_ = true;
}

//===--- Numbers ----------------------------------------------------------===//

template <typename F, typename Bits> void Printer::floating(F v, Bits canonicalNan) {
  if (std::isnan(v)) {
    Bits bits;
    std::memcpy(&bits, &v, sizeof(F));
    constexpr Bits sign = Bits(1) << (sizeof(Bits) * 8 - 1);
    if (bits == canonicalNan)
      out("nan");
    else if (bits == (canonicalNan | sign))
      out("-nan");
    else {
      std::array<char, 32> b;
      auto r = std::to_chars(b.data(), b.data() + b.size(), bits, 16);
      out("nan(0x");
      out(std::string_view(b.data(), static_cast<size_t>(r.ptr - b.data())));
      out(')');
    }
  } else if (std::isinf(v)) {
    out(v < 0 ? "-inf" : "inf");
  } else {
    number(v);
  }
}

void Printer::floatLiteral(float v, bool forceFloat) {
  size_t start = buf_.size();
  floating(v, uint32_t{0x7FC00000});
  if (forceFloat && buf_.find_first_of(".eni", start) == std::string::npos)
    out(".0");
}

void Printer::doubleLiteral(double v) { floating(v, uint64_t{0x7FF8000000000000}); }

//===--- Annotation pieces ------------------------------------------------===//

void Printer::explicitFields(Annot &a, FieldSet set, const ExplicitFields &f, const ExplicitFields &implied,
                             const char *key) {
  if (f == implied)
    return;
  a.key(key);
  out('[');
  const char *sep = "";
  for (unsigned i = 0; i < 64; ++i) {
    if (!f.has(i))
      continue;
    out(sep);
    sep = ", ";
    std::string_view name = explicitFieldName(set, i);
    if (name.empty())
      number(i);
    else
      out(name);
  }
  out(']');
}

void Printer::pairs(const StringPairs &p) {
  out('[');
  const char *sep = "";
  for (const auto &[k, v] : p) {
    out(sep);
    sep = ", ";
    quoted(k);
    out(": ");
    quoted(v);
  }
  out(']');
}

void Printer::byteStrings(Annot &a, const char *key, const std::vector<std::string> &list) {
  if (list.empty())
    return;
  a.key(key);
  out('[');
  const char *sep = "";
  for (const std::string &s : list) {
    out(sep);
    sep = ", ";
    quoted(s);
  }
  out(']');
}

void Printer::graphFields(Annot &a, const Graph &g) {
  docString(a, g.docString);
  metadata(a, "metadata_props", g.metadataProps);
  if (!g.quantizationAnnotations.empty()) {
    a.key("quantization_annotation");
    out('[');
    const char *sep = "";
    for (const TensorAnnotation &t : g.quantizationAnnotations) {
      out(sep);
      sep = ", ";
      Annot rec(*this, /*record=*/true);
      rec.key("tensor_name");
      quoted(t.tensorName);
      if (!t.quantParameterTensorNames.empty()) {
        rec.key("quant_parameter_tensor_names");
        pairs(t.quantParameterTensorNames);
      }
      explicitFields(rec, FieldSet::TensorAnnotation, t.explicitFields);
    }
    out(']');
  }
  explicitFields(a, FieldSet::Graph, g.explicitFields);
}

//===--- Types ------------------------------------------------------------===//

void Printer::elemType(DataType t) {
  std::string name = dataTypeName(t);
  if (t == DataType::Undefined || parseDataTypeName(name) == t) {
    out(name);
  } else {
    out("dtype(");
    number(static_cast<int32_t>(t));
    out(')');
  }
}

void Printer::shape(const std::optional<Shape> &s) {
  if (!s) {
    out("[]");
    return;
  }
  if (s->empty())
    return;
  out('[');
  for (size_t i = 0; i < s->size(); ++i) {
    if (i)
      out(',');
    const Dim &d = (*s)[i];
    if (d.isValue())
      number(d.getValue());
    else if (d.isSymbol())
      label(d.getSymbol());
    else
      out('?');
    if (!d.denotation.empty()) {
      Annot a(*this);
      a.key("denotation");
      quoted(d.denotation);
    }
  }
  out(']');
}

void Printer::type(const Type &t) {
  bool tensorLike = false;
  switch (t.kind()) {
  case Type::Kind::Empty:
    out("empty");
    break;
  case Type::Kind::Tensor:
    tensorLike = true;
    elemType(t.elemType());
    shape(t.shape());
    break;
  case Type::Kind::SparseTensor:
    tensorLike = true;
    out("sparse_tensor(");
    elemType(t.elemType());
    shape(t.shape());
    out(')');
    break;
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    out(t.kind() == Type::Kind::Sequence ? "seq(" : "optional(");
    if (t.inner())
      type(*t.inner());
    else
      out("empty");
    out(')');
    break;
  case Type::Kind::Map:
    out("map(");
    elemType(t.elemType());
    out(", ");
    if (t.inner())
      type(*t.inner());
    else
      out("empty");
    out(')');
    break;
  }
  bool defaultHasElem = tensorLike ? t.elemType() != DataType::Undefined : true;
  if (!t.denotation.empty() || t.hasElemType != defaultHasElem) {
    Annot a(*this);
    if (!t.denotation.empty()) {
      a.key("denotation");
      quoted(t.denotation);
    }
    if (t.hasElemType != defaultHasElem)
      a.key("has_elem_type").out(t.hasElemType ? '1' : '0');
  }
}

//===--- Tensors ----------------------------------------------------------===//

void Printer::tensorType(const Tensor &t) {
  elemType(t.dtype());
  if (!t.dims().empty()) {
    out('[');
    for (size_t i = 0; i < t.dims().size(); ++i) {
      if (i)
        out(',');
      number(t.dims()[i]);
    }
    out(']');
  }
}

namespace {
/// Whether the data can be printed as an element list that reads back to the same bytes.
bool listable(const Tensor &t) {
  if (t.dtype() == DataType::String)
    return true;
  if (!t.isConsistent())
    return false;
  switch (t.dtype()) {
  case DataType::Bool:
    for (uint8_t b : t.buffer().bytes())
      if (b > 1)
        return false;
    return true;
  case DataType::Int4:
  case DataType::UInt4:
  case DataType::Float4E2M1:
    return t.numElements() % 2 == 0 || t.byteSize() == 0 || (t.rawData()[t.byteSize() - 1] >> 4) == 0;
  case DataType::Float: case DataType::Double: case DataType::Complex64: case DataType::Complex128:
  case DataType::Int8: case DataType::Int16: case DataType::Int32: case DataType::Int64:
  case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64:
  case DataType::Float16: case DataType::BFloat16: case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2: case DataType::Float8E5M2FNUZ:
  case DataType::Float8E8M0:
    return true;
  default:
    return false;
  }
}
} // namespace

void Printer::tensorData(const Tensor &t) {
  if (elided(t)) {
    out("{...}");
    return;
  }
  if (!listable(t)) {
    static constexpr char kHex[] = "0123456789abcdef";
    out("0x");
    for (uint8_t b : t.buffer().bytes()) {
      buf_ += kHex[b >> 4];
      buf_ += kHex[b & 15];
    }
    if (buf_.size() >= (1u << 20))
      flush();
    return;
  }
  out('{');
  size_t n = t.dtype() == DataType::String ? t.strings().size() : static_cast<size_t>(t.numElements());
  auto each = [&](size_t count, auto &&fn) {
    for (size_t i = 0; i < count; ++i) {
      if (i)
        out(", ");
      fn(i);
    }
  };
  switch (t.dtype()) {
  case DataType::String: each(n, [&](size_t i) { quoted(t.strings()[i]); }); break;
  case DataType::Float: each(n, [&](size_t i) { floatLiteral(t.at<float>(i), false); }); break;
  case DataType::Complex64: each(2 * n, [&](size_t i) { floatLiteral(t.at<float>(i), false); }); break;
  case DataType::Double: each(n, [&](size_t i) { doubleLiteral(t.at<double>(i)); }); break;
  case DataType::Complex128: each(2 * n, [&](size_t i) { doubleLiteral(t.at<double>(i)); }); break;
  case DataType::Int8: each(n, [&](size_t i) { number(int{t.at<int8_t>(i)}); }); break;
  case DataType::Int16: each(n, [&](size_t i) { number(int{t.at<int16_t>(i)}); }); break;
  case DataType::Int32: each(n, [&](size_t i) { number(t.at<int32_t>(i)); }); break;
  case DataType::Int64: each(n, [&](size_t i) { number(t.at<int64_t>(i)); }); break;
  case DataType::UInt8: case DataType::Bool: case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2: case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0:
    each(n, [&](size_t i) { number(unsigned{t.at<uint8_t>(i)}); });
    break;
  case DataType::UInt16: case DataType::Float16: case DataType::BFloat16:
    each(n, [&](size_t i) { number(unsigned{t.at<uint16_t>(i)}); });
    break;
  case DataType::UInt32: each(n, [&](size_t i) { number(t.at<uint32_t>(i)); }); break;
  case DataType::UInt64: each(n, [&](size_t i) { number(t.at<uint64_t>(i)); }); break;
  case DataType::Int4:
    each(n, [&](size_t i) {
      int nib = (t.rawData()[i / 2] >> (i % 2 * 4)) & 15;
      number(nib >= 8 ? nib - 16 : nib);
    });
    break;
  case DataType::UInt4: case DataType::Float4E2M1:
    each(n, [&](size_t i) { number((t.rawData()[i / 2] >> (i % 2 * 4)) & 15); });
    break;
  default:
    break;
  }
  out('}');
}

void Printer::tensorAnnotation(const Tensor &t, const std::string *impliedName, const ExplicitFields &implied) {
  Annot a(*this);
  if (impliedName && t.name != *impliedName) {
    a.key("name");
    quoted(t.name);
  }
  docString(a, t.docString);
  if (t.encoding != TensorEncoding::Raw)
    a.key("encoding").out(t.encoding == TensorEncoding::Typed ? "typed" : "external");
  if (!t.externalData.empty()) {
    a.key("external_data");
    pairs(t.externalData);
  }
  if (t.dataLocation != 0)
    a.key("data_location").number(t.dataLocation);
  if (t.segment) {
    a.key("segment").out('[');
    number(t.segment->first);
    out(", ");
    number(t.segment->second);
    out(']');
  }
  metadata(a, "metadata_props", t.metadataProps);
  explicitFields(a, FieldSet::Tensor, t.explicitFields, implied);
}

void Printer::tensorConstant(const TensorPtr &t) {
  if (!t) {
    out("none");
    return;
  }
  tensorType(*t);
  out(' ');
  // A written name is a present one: `""` stands for an explicit empty name.
  ExplicitFields implied;
  if (!t->name.empty() || t->explicitFields.has(kTensorNameField)) {
    id(t->name);
    out(' ');
    if (t->name.empty())
      implied.set(kTensorNameField);
  }
  tensorData(*t);
  tensorAnnotation(*t, nullptr, implied);
}

void Printer::sparseConstant(const std::shared_ptr<const SparseTensor> &s, const std::string *valueName) {
  if (!s) {
    if (valueName) {
      out("undefined ");
      id(*valueName);
      out(" = ");
    }
    out("none");
    return;
  }
  out("sparse_tensor(");
  elemType(s->values ? s->values->dtype() : DataType::Undefined);
  if (!s->dims.empty()) {
    out('[');
    for (size_t i = 0; i < s->dims.size(); ++i) {
      if (i)
        out(',');
      number(s->dims[i]);
    }
    out(']');
  }
  out(')');
  if (valueName) {
    out(' ');
    id(*valueName);
    out(" =");
  }
  out(" sparse(");
  if (s->hasValues)
    tensorConstant(s->values);
  else
    out("none");
  out(", ");
  if (s->hasIndices)
    tensorConstant(s->indices);
  else
    out("none");
  out(')');
}

//===--- Model ------------------------------------------------------------===//

void Printer::opsets(const std::vector<OpsetId> &list) {
  out('[');
  const char *sep = "";
  for (const OpsetId &o : list) {
    out(sep);
    sep = ", ";
    quoted(o.domain);
    out(" : ");
    number(o.version);
    Annot a(*this);
    explicitFields(a, FieldSet::OperatorSetId, o.explicitFields, impliedExplicitFields(o));
  }
  out(']');
}

void Printer::model(const Model &m) {
  std::vector<std::pair<const char *, std::function<void()>>> header;
  if (m.irVersion != 0)
    header.emplace_back("ir_version", [&] { number(m.irVersion); });
  if (!m.opsetImport.empty())
    header.emplace_back("opset_import", [&] { opsets(m.opsetImport); });
  if (!m.producerName.empty())
    header.emplace_back("producer_name", [&] { quoted(m.producerName); });
  if (!m.producerVersion.empty())
    header.emplace_back("producer_version", [&] { quoted(m.producerVersion); });
  if (!m.domain.empty())
    header.emplace_back("domain", [&] { quoted(m.domain); });
  if (m.modelVersion != 0)
    header.emplace_back("model_version", [&] { number(m.modelVersion); });
  if (!m.docString.empty() && opt_.printDocStrings)
    header.emplace_back("doc_string", [&] { quoted(m.docString); });
  if (!m.metadataProps.empty())
    header.emplace_back("metadata_props", [&] { pairs(m.metadataProps); });
  if (!header.empty()) {
    out('<');
    for (size_t i = 0; i < header.size(); ++i) {
      out(i ? ",\n  " : "\n  ");
      out(header[i].first);
      out(": ");
      header[i].second();
    }
    out("\n>");
  }
  {
    Annot a(*this);
    explicitFields(a, FieldSet::Model, m.explicitFields);
    byteStrings(a, "training_info", m.trainingInfo);
    byteStrings(a, "configuration", m.configuration);
    if (!m.graph())
      a.key("graph").out("none");
  }
  if (!header.empty() || m.explicitFields != ExplicitFields() || !m.trainingInfo.empty() ||
      !m.configuration.empty() || !m.graph())
    out('\n');
  if (m.graph()) {
    graph(*m.graph());
    out('\n');
  }
  for (const auto &f : m.functions) {
    out('\n');
    header.clear();
    if (!f->domain.empty())
      header.emplace_back("domain", [&] { quoted(f->domain); });
    if (!f->overload.empty())
      header.emplace_back("overload", [&] { quoted(f->overload); });
    if (!f->opsetImport.empty())
      header.emplace_back("opset_import", [&] { opsets(f->opsetImport); });
    if (!f->docString.empty() && opt_.printDocStrings)
      header.emplace_back("doc_string", [&] { quoted(f->docString); });
    if (!header.empty()) {
      out('<');
      for (size_t i = 0; i < header.size(); ++i) {
        out(i ? ",\n  " : "\n  ");
        out(header[i].first);
        out(": ");
        header[i].second();
      }
      out("\n>\n");
    }
    if (f->body) {
      graph(*f->body, f.get());
    } else {
      // A function without a body cannot come from the loader; print its shell.
      Graph empty;
      graph(empty, f.get());
    }
    out('\n');
  }
}

//===--- Graphs -----------------------------------------------------------===//

namespace {
/// The most common explicit-field set among the graph's own nodes: printed
/// once as the graph's `node_explicit` so that nodes need no annotation.
ExplicitFields commonNodeExplicit(const Graph &g) {
  std::unordered_map<uint64_t, size_t> counts;
  uint64_t best = 0;
  size_t bestCount = 0;
  for (const Node *n : g.nodes()) {
    uint64_t key = 0;
    for (unsigned i = 0; i < 64; ++i)
      if (n->explicitFields.has(i))
        key |= uint64_t{1} << i;
    size_t c = ++counts[key];
    if (c > bestCount || (c == bestCount && key < best)) {
      best = key;
      bestCount = c;
    }
  }
  ExplicitFields f;
  for (unsigned i = 0; i < 64; ++i)
    if (best >> i & 1)
      f.set(i);
  return f;
}
} // namespace

void Printer::graph(const Graph &g, const Function *fn) {
  id(fn ? fn->name : g.name);
  ExplicitFields nodeDefault = commonNodeExplicit(g);
  {
    Annot a(*this);
    explicitFields(a, FieldSet::Node, nodeDefault, {}, "node_explicit");
    if (fn) {
      metadata(a, "metadata_props", fn->metadataProps);
      explicitFields(a, FieldSet::Function, fn->explicitFields);
      bool bodyDefault = g.name.empty() && g.docString.empty() && g.metadataProps.empty() &&
                         g.quantizationAnnotations.empty() && g.explicitFields == ExplicitFields();
      if (!bodyDefault) {
        a.key("body");
        Annot rec(*this, /*record=*/true);
        if (!g.name.empty()) {
          rec.key("name");
          quoted(g.name);
        }
        graphFields(rec, g);
      }
    } else {
      graphFields(a, g);
    }
  }
  if (fn && (!fn->attributeNames.empty() || !fn->attributeProtos.empty())) {
    out(" <");
    const char *sep = "";
    for (const std::string &name : fn->attributeNames) {
      out(sep);
      sep = ", ";
      label(name);
    }
    for (const Attribute &a : fn->attributeProtos) {
      out(sep);
      sep = ", ";
      attribute(a);
    }
    out('>');
  }
  out(" (");
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value *v = g.inputs()[i];
    if (i)
      out(", ");
    if (v->type() && !fn) {
      type(*v->type());
      out(' ');
    }
    id(v->name());
    if (!fn) {
      Annot a(*this);
      valueInfoExtras(a, v->info);
    }
  }
  out(") => (");
  for (size_t i = 0; i < g.numOutputs(); ++i) {
    const GraphOutput &o = g.outputSlots()[i];
    if (i)
      out(", ");
    if (o.type && !fn) {
      type(*o.type);
      out(' ');
    }
    id(o.use.get() ? o.use.get()->name() : std::string());
    Annot a(*this);
    if (o.type && fn) {
      a.key("type");
      type(*o.type);
    }
    valueInfoExtras(a, o.info);
  }
  out(')');
  declarations(g, fn != nullptr);
  out(" {");
  ExplicitFields saved = nodeExplicit_;
  nodeExplicit_ = nodeDefault;
  nodeList(g);
  nodeExplicit_ = saved;
  out('}');
}

void Printer::declarations(const Graph &g, bool isFunction) {
  struct Decl {
    uint32_t order;
    const Value *value;
    const OrphanValueInfo *orphan;
    bool input;
  };
  std::vector<Decl> decls;
  auto consider = [&](const Value *v, bool input, bool needsEntry) {
    if (v->valueInfoOrder != Value::kNoValueInfo || needsEntry)
      decls.push_back({v->valueInfoOrder, v, nullptr, input});
  };
  // A graph input's type and doc live in the input list; a function's
  // signature has names only, so its inputs are declared here.
  for (const Value *v : g.inputs())
    consider(v, !isFunction, isFunction && (v->type().has_value() || !isDefault(v->info)));
  for (const Value *v : g.initializers())
    if (v->defKind() != Value::DefKind::GraphInput)
      consider(v, false, v->type() != derivedInitializerType(v->initializer()) || !isDefault(v->info));
  for (const Value *v : g.sparseInitializers())
    consider(v, false, v->type().has_value() || !isDefault(v->info));
  for (const Node *n : g.nodes())
    for (size_t i = 0; i < n->numResults(); ++i)
      if (const Value *v = n->result(i))
        consider(v, false, v->type().has_value() || !isDefault(v->info));
  for (const OrphanValueInfo &o : g.orphanValueInfos)
    decls.push_back({o.order, nullptr, &o, false});
  std::stable_sort(decls.begin(), decls.end(), [](const Decl &a, const Decl &b) { return a.order < b.order; });

  size_t entries = g.initializers().size() + g.sparseInitializers().size() + decls.size();
  if (entries == 0)
    return;
  out(" <");
  indent_ += 2;
  const char *sep = "";
  auto begin = [&] {
    out(sep);
    sep = ",";
    newline();
  };
  for (const Value *v : g.initializers()) {
    begin();
    const TensorPtr &t = v->initializer();
    if (t)
      tensorType(*t);
    else
      out("undefined");
    out(' ');
    id(v->name());
    out(" = ");
    if (!t) {
      out("none");
      continue;
    }
    tensorData(*t);
    tensorAnnotation(*t, &v->name());
  }
  for (const Value *v : g.sparseInitializers()) {
    begin();
    sparseConstant(v->sparseInitializer(), &v->name());
  }
  uint32_t expected = 0;
  for (const Decl &d : decls) {
    begin();
    const std::optional<Type> &ty = d.value ? d.value->type() : d.orphan->type;
    if (ty) {
      type(*ty);
      out(' ');
    }
    id(d.value ? d.value->name() : d.orphan->name);
    Annot a(*this);
    if (d.order == Value::kNoValueInfo) {
      a.key("order").out("none");
    } else {
      if (d.order != expected)
        a.key("order").number(d.order);
      expected = d.order + 1;
    }
    if (d.orphan) {
      a.key("orphan").out('1');
      valueInfoExtras(a, d.orphan->info);
    } else if (!d.input) {
      valueInfoExtras(a, d.value->info);
    }
  }
  indent_ -= 2;
  newline();
  out('>');
}

void Printer::nodeList(const Graph &g) {
  indent_ += 2;
  for (const Node *n : g.nodes()) {
    newline();
    node(*n);
  }
  indent_ -= 2;
  newline();
}

//===--- Nodes and attributes ---------------------------------------------===//

namespace {
bool isPlainDomain(std::string_view d) {
  if (d.empty())
    return true;
  size_t start = 0;
  for (;;) {
    size_t dot = d.find('.', start);
    if (!isIdentifier(d.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

bool hasSubgraph(const Node &n) {
  for (const Attribute &a : n.attributes())
    if (a.g || !a.graphs.empty())
      return true;
  return false;
}

bool plainGraphName(const Graph *g) { return g && isIdentifier(g->name) && !isReservedWord(g->name); }

bool isListKind(AttrKind k) {
  switch (k) {
  case AttrKind::Floats: case AttrKind::Ints: case AttrKind::Strings: case AttrKind::Tensors:
  case AttrKind::Graphs: case AttrKind::SparseTensors: case AttrKind::TypeProtos:
    return true;
  default:
    return false;
  }
}

/// Whether the kind's own field holds a value (the attribute is not `= none`).
bool primaryPresent(const Attribute &a) {
  switch (a.kind) {
  case AttrKind::Float: case AttrKind::Int: case AttrKind::String:
    return true;
  case AttrKind::Tensor: return a.t != nullptr;
  case AttrKind::Graph: return a.g != nullptr;
  case AttrKind::SparseTensor: return a.sparseTensor != nullptr;
  case AttrKind::TypeProto: return a.tp.has_value();
  case AttrKind::Floats: return !a.floats.empty();
  case AttrKind::Ints: return !a.ints.empty();
  case AttrKind::Strings: return !a.strings.empty();
  case AttrKind::Tensors:
    return !a.tensors.empty() && std::all_of(a.tensors.begin(), a.tensors.end(), [](auto &t) { return t != nullptr; });
  case AttrKind::Graphs:
    return !a.graphs.empty() && std::all_of(a.graphs.begin(), a.graphs.end(), [](auto &g) { return g != nullptr; });
  case AttrKind::SparseTensors:
    return !a.sparseTensors.empty() &&
           std::all_of(a.sparseTensors.begin(), a.sparseTensors.end(), [](auto &s) { return s != nullptr; });
  case AttrKind::TypeProtos: return !a.typeProtos.empty();
  default:
    return false;
  }
}

/// Whether the value alone would not tell the parser the attribute's kind.
bool needsTypedForm(const Attribute &a) {
  if (!a.refAttrName.empty() || !primaryPresent(a))
    return true;
  if (a.kind == AttrKind::Graph)
    return !plainGraphName(a.g.get());
  if (a.kind == AttrKind::Graphs)
    return !std::all_of(a.graphs.begin(), a.graphs.end(), [](auto &g) { return plainGraphName(g.get()); });
  return false;
}

/// Whether field `kind` (named as its kind) holds a non-default value.
bool fieldSet(const Attribute &a, AttrKind kind) {
  switch (kind) {
  case AttrKind::Float: return !isPositiveZero(a.f);
  case AttrKind::Int: return a.i != 0;
  case AttrKind::String: return !a.s.empty();
  case AttrKind::Tensor: return a.t != nullptr;
  case AttrKind::Graph: return a.g != nullptr;
  case AttrKind::SparseTensor: return a.sparseTensor != nullptr;
  case AttrKind::TypeProto: return a.tp.has_value();
  case AttrKind::Floats: return !a.floats.empty();
  case AttrKind::Ints: return !a.ints.empty();
  case AttrKind::Strings: return !a.strings.empty();
  case AttrKind::Tensors: return !a.tensors.empty();
  case AttrKind::Graphs: return !a.graphs.empty();
  case AttrKind::SparseTensors: return !a.sparseTensors.empty();
  case AttrKind::TypeProtos: return !a.typeProtos.empty();
  default: return false;
  }
}

/// The attribute fields in proto order, named as in AttributeProto.
constexpr std::pair<AttrKind, const char *> kAttrFields[] = {
    {AttrKind::Float, "f"},        {AttrKind::Int, "i"},          {AttrKind::String, "s"},
    {AttrKind::Tensor, "t"},       {AttrKind::Graph, "g"},        {AttrKind::SparseTensor, "sparse_tensor"},
    {AttrKind::TypeProto, "tp"},   {AttrKind::Floats, "floats"},  {AttrKind::Ints, "ints"},
    {AttrKind::Strings, "strings"}, {AttrKind::Tensors, "tensors"}, {AttrKind::Graphs, "graphs"},
    {AttrKind::SparseTensors, "sparse_tensors"}, {AttrKind::TypeProtos, "type_protos"}};
} // namespace

void Printer::graphValue(const Graph *g) {
  if (!g) {
    out("none");
    return;
  }
  graph(*g);
}

void Printer::attributeValue(const Attribute &a, AttrKind kind) {
  auto list = [&](size_t n, auto &&fn) {
    out('[');
    for (size_t i = 0; i < n; ++i) {
      if (i)
        out(", ");
      fn(i);
    }
    out(']');
  };
  switch (kind) {
  case AttrKind::Float: floatLiteral(a.f, true); break;
  case AttrKind::Int: number(a.i); break;
  case AttrKind::String: quoted(a.s); break;
  case AttrKind::Tensor: tensorConstant(a.t); break;
  case AttrKind::Graph: graphValue(a.g.get()); break;
  case AttrKind::SparseTensor: sparseConstant(a.sparseTensor); break;
  case AttrKind::TypeProto:
    if (a.tp)
      type(*a.tp);
    else
      out("none");
    break;
  case AttrKind::Floats: list(a.floats.size(), [&](size_t i) { floatLiteral(a.floats[i], true); }); break;
  case AttrKind::Ints: list(a.ints.size(), [&](size_t i) { number(a.ints[i]); }); break;
  case AttrKind::Strings: list(a.strings.size(), [&](size_t i) { quoted(a.strings[i]); }); break;
  case AttrKind::Tensors: list(a.tensors.size(), [&](size_t i) { tensorConstant(a.tensors[i]); }); break;
  case AttrKind::Graphs: list(a.graphs.size(), [&](size_t i) { graphValue(a.graphs[i].get()); }); break;
  case AttrKind::SparseTensors:
    list(a.sparseTensors.size(), [&](size_t i) { sparseConstant(a.sparseTensors[i]); });
    break;
  case AttrKind::TypeProtos: list(a.typeProtos.size(), [&](size_t i) { type(a.typeProtos[i]); }); break;
  default:
    out("none");
    break;
  }
}

void Printer::attribute(const Attribute &a) {
  label(a.name);
  if (needsTypedForm(a)) {
    out(": ");
    out(attrKindName(a.kind));
  }
  {
    Annot ann(*this);
    docString(ann, a.docString);
    if (!a.hasKind)
      ann.key("has_kind").out('0');
    for (const auto &[kind, field] : kAttrFields)
      if (kind != a.kind && fieldSet(a, kind)) {
        ann.key(field);
        attributeValue(a, kind);
      }
    explicitFields(ann, FieldSet::Attribute, a.explicitFields, impliedExplicitFields(a));
  }
  out(" = ");
  if (!a.refAttrName.empty()) {
    out('@');
    label(a.refAttrName);
  } else if (!primaryPresent(a) && !isListKind(a.kind)) {
    out("none");
  } else {
    attributeValue(a, a.kind);
  }
}

void Printer::node(const Node &n) {
  if (!n.name().empty()) {
    out('[');
    label(n.name());
    out("] ");
  }
  for (size_t i = 0; i < n.numResults(); ++i) {
    if (i)
      out(", ");
    const Value *v = n.result(i);
    if (v)
      id(v->name());
    else
      out("\"\"");
  }
  out(n.numResults() ? " = " : "= ");
  bool standardOp = isIdentifier(n.opType()) && isPlainDomain(n.domain());
  if (standardOp && !n.domain().empty()) {
    out(n.domain());
    out('.');
  }
  label(n.opType());
  bool plainOverload = n.overload.empty() || isIdentifier(n.overload);
  if (!n.overload.empty() && plainOverload) {
    out(':');
    out(n.overload);
  }
  bool attrsAfter = hasSubgraph(n);
  auto attrs = [&] {
    if (n.attributes().empty())
      return;
    out(" <");
    for (size_t i = 0; i < n.attributes().size(); ++i) {
      if (i)
        out(", ");
      attribute(n.attributes()[i]);
    }
    out('>');
  };
  if (!attrsAfter)
    attrs();
  out(!attrsAfter && !n.attributes().empty() ? " (" : "(");
  for (size_t i = 0; i < n.numOperands(); ++i) {
    if (i)
      out(", ");
    const Value *v = n.operand(i);
    if (v)
      id(v->name());
    else
      out("\"\"");
  }
  out(')');
  if (attrsAfter)
    attrs();
  Annot a(*this);
  if (!standardOp && !n.domain().empty()) {
    a.key("domain");
    quoted(n.domain());
  }
  if (!plainOverload) {
    a.key("overload");
    quoted(n.overload);
  }
  docString(a, n.docString);
  metadata(a, "metadata_props", n.metadataProps);
  byteStrings(a, "device_configurations", n.deviceConfigurations);
  explicitFields(a, FieldSet::Node, n.explicitFields, nodeExplicit_);
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

void printModel(std::ostream &os, const Model &model, const PrintOptions &options) {
  Printer p(os, options);
  p.model(model);
}

std::string toText(const Model &model, const PrintOptions &options) {
  std::ostringstream os;
  printModel(os, model, options);
  return os.str();
}

void printGraph(std::ostream &os, const Graph &graph, const PrintOptions &options) {
  Printer p(os, options);
  p.graph(graph);
}

void printNode(std::ostream &os, const Node &node, const PrintOptions &options) {
  Printer p(os, options);
  p.node(node);
}

void printType(std::ostream &os, const Type &type) {
  PrintOptions options;
  Printer p(os, options);
  p.type(type);
}

std::string typeToText(const Type &type) {
  std::ostringstream os;
  printType(os, type);
  return os.str();
}

} // namespace onnxslim
