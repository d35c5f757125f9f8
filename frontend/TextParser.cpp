//===- frontend/TextParser.cpp - ONNX textual syntax -> IR ----------------===//
//
// A hand-written lexer and recursive-descent parser for ONNX's textual
// syntax plus the annotation extensions described at the top of
// ir/Printer.cpp (and in docs/TextFormat.md). It builds the IR directly:
// values are created where the text defines them (graph inputs, `<...>`
// initializers, node results) and every name in an operand list is resolved
// at once against the scopes open at that point, so operands are real uses
// of the values they name. Graph outputs and value declarations may name
// values defined later in the graph body; they are resolved when the body
// is complete.
//
// Errors are thrown internally as ParseError (an offset and a message) and
// turned into `source:line:col: message` at the API boundary. Nesting
// depth is bounded so hostile input cannot exhaust the stack (and subgraphs
// nest at most frontend::kMaxSubgraphDepth levels, as in binary models), and objects
// under construction are owned by the stack frames that build them, so an
// error half way through tears everything down in a safe order.
//
//===----------------------------------------------------------------------===//
#include "frontend/TextParser.h"

#include "frontend/NestingLimit.h"
#include "ir/IR.h"
#include "ir/Printer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <utility>

namespace onnxslim {

using namespace textsyntax;

namespace {

struct ParseError {
  size_t offset;
  std::string message;
};

enum class Tok : uint8_t { End, Ident, String, Int, Float, Hex, Punct, Arrow, AnnotOpen };

struct Token {
  Tok kind = Tok::End;
  char punct = 0;
  size_t begin = 0;
  size_t end = 0;
};

constexpr size_t kMaxDepth = 200;

bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool equalsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size())
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i])
      return false;
  }
  return true;
}

bool isFloatWord(std::string_view s) {
  return equalsLower(s, "nan") || equalsLower(s, "inf") || equalsLower(s, "infinity");
}

bool isTypeWord(std::string_view s) {
  return parseDataTypeName(s) || s == "undefined" || s == "dtype" || s == "seq" || s == "map" ||
         s == "optional" || s == "sparse_tensor" || s == "empty" || s == "opaque";
}

AttrKind listKindOf(AttrKind k) {
  switch (k) {
  case AttrKind::Float: return AttrKind::Floats;
  case AttrKind::Int: return AttrKind::Ints;
  case AttrKind::String: return AttrKind::Strings;
  case AttrKind::Tensor: return AttrKind::Tensors;
  case AttrKind::Graph: return AttrKind::Graphs;
  case AttrKind::SparseTensor: return AttrKind::SparseTensors;
  case AttrKind::TypeProto: return AttrKind::TypeProtos;
  default: return k;
  }
}

AttrKind elementKindOf(AttrKind k) {
  switch (k) {
  case AttrKind::Floats: return AttrKind::Float;
  case AttrKind::Ints: return AttrKind::Int;
  case AttrKind::Strings: return AttrKind::String;
  case AttrKind::Tensors: return AttrKind::Tensor;
  case AttrKind::Graphs: return AttrKind::Graph;
  case AttrKind::SparseTensors: return AttrKind::SparseTensor;
  case AttrKind::TypeProtos: return AttrKind::TypeProto;
  default: return AttrKind::Undefined;
  }
}

bool isListKind(AttrKind k) { return elementKindOf(k) != AttrKind::Undefined; }

/// Copies field `k` (named by its kind) of `src` into `dst`.
void moveField(Attribute &dst, Attribute &src, AttrKind k) {
  switch (k) {
  case AttrKind::Float: dst.f = src.f; break;
  case AttrKind::Int: dst.i = src.i; break;
  case AttrKind::String: dst.s = std::move(src.s); break;
  case AttrKind::Tensor: dst.t = std::move(src.t); break;
  case AttrKind::Graph: dst.g = std::move(src.g); break;
  case AttrKind::SparseTensor: dst.sparseTensor = std::move(src.sparseTensor); break;
  case AttrKind::TypeProto: dst.tp = std::move(src.tp); break;
  case AttrKind::Floats: dst.floats = std::move(src.floats); break;
  case AttrKind::Ints: dst.ints = std::move(src.ints); break;
  case AttrKind::Strings: dst.strings = std::move(src.strings); break;
  case AttrKind::Tensors: dst.tensors = std::move(src.tensors); break;
  case AttrKind::Graphs: dst.graphs = std::move(src.graphs); break;
  case AttrKind::SparseTensors: dst.sparseTensors = std::move(src.sparseTensors); break;
  case AttrKind::TypeProtos: dst.typeProtos = std::move(src.typeProtos); break;
  default: break;
  }
}

/// Attribute fields by their AttributeProto names (annotation keys).
std::optional<AttrKind> attrFieldKind(std::string_view key) {
  static constexpr std::pair<std::string_view, AttrKind> kFields[] = {
      {"f", AttrKind::Float},         {"i", AttrKind::Int},          {"s", AttrKind::String},
      {"t", AttrKind::Tensor},        {"g", AttrKind::Graph},        {"sparse_tensor", AttrKind::SparseTensor},
      {"tp", AttrKind::TypeProto},    {"floats", AttrKind::Floats},  {"ints", AttrKind::Ints},
      {"strings", AttrKind::Strings}, {"tensors", AttrKind::Tensors}, {"graphs", AttrKind::Graphs},
      {"sparse_tensors", AttrKind::SparseTensors}, {"type_protos", AttrKind::TypeProtos}};
  for (const auto &[name, kind] : kFields)
    if (name == key)
      return kind;
  return std::nullopt;
}

/// The value_info extras an annotation may set, each only when its key is present.
struct InfoKeys {
  std::optional<std::string> doc;
  std::optional<StringPairs> meta;
  std::optional<ExplicitFields> explicitFields;
  void applyTo(ValueInfoExtras &info) {
    if (doc)
      info.docString = std::move(*doc);
    if (meta)
      info.metadataProps = std::move(*meta);
    if (explicitFields)
      info.explicitFields = *explicitFields;
  }
};

/// A graph output, resolved when the graph body is complete.
struct PendingOutput {
  std::string name;
  size_t offset;
  std::optional<Type> type;
  InfoKeys info;
};

/// A value declaration (value_info entry) of the `<...>` list or a typed
/// function parameter, resolved when the graph body is complete.
struct PendingDecl {
  std::string name;
  size_t offset;
  std::optional<Type> type;
  enum class Order { Implicit, Explicit, None } orderKind = Order::Implicit;
  uint32_t order = 0;
  bool orphan = false;
  InfoKeys info;
};

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

class Parser {
public:
  Parser(std::string_view src, const std::string &sourceName) : src_(src), source_(sourceName) {}

  std::unique_ptr<Model> model();
  std::unique_ptr<Graph> standaloneGraph();
  std::string format(const ParseError &e) const;

private:
  //===--- Lexing -----------------------------------------------------===//
  const Token &peek() {
    if (!havePeek_) {
      peeked_ = lex();
      havePeek_ = true;
    }
    return peeked_;
  }
  Token next() {
    Token t = peek();
    havePeek_ = false;
    return t;
  }
  Token lex();
  void skipSpace();
  std::string_view text(const Token &t) const { return src_.substr(t.begin, t.end - t.begin); }
  std::string stringValue(const Token &t) const;

  [[noreturn]] void fail(size_t offset, std::string message) { throw ParseError{offset, std::move(message)}; }
  [[noreturn]] void failAt(const Token &t, const std::string &expected);
  bool isPunct(char c) { return peek().kind == Tok::Punct && peek().punct == c; }
  bool accept(char c) {
    if (!isPunct(c))
      return false;
    next();
    return true;
  }
  void expect(char c, const char *context) {
    if (!accept(c))
      failAt(peek(), std::string("'") + c + "' " + context);
  }
  bool isWord(std::string_view w) { return peek().kind == Tok::Ident && text(peek()) == w; }
  bool atAnnotation() { return peek().kind == Tok::AnnotOpen; }
  std::string identifier(const char *what);
  /// An identifier or a quoted string.
  std::string name(const char *what);
  int64_t integer(const char *what);
  uint32_t uint32Value(const char *what);
  std::string string(const char *what);
  StringPairs pairs();
  std::vector<std::string> stringList();
  ExplicitFields explicitList(FieldSet set);

  /// Parses `@<key: value, ...>` (or, with `record`, `<key: value, ...>`),
  /// calling `entry(key)` to parse each value; unknown keys are errors.
  template <typename F> void annotation(const char *entity, F &&entry, bool record = false);

  //===--- Types and constants ----------------------------------------===//
  DataType elemType();
  std::optional<Shape> shapeSuffix();
  Type type();
  bool atType() { return peek().kind == Tok::Ident && isTypeWord(text(peek())); }
  template <typename T> T floatValue();
  void tensorElements(DataType dt, const std::vector<int64_t> &dims, Tensor &t, size_t at);
  std::vector<int64_t> constantDims(const Type &ty, size_t at);
  /// Data after a tensor type (and name): `{...}`, `0x..`, or `[external]`,
  /// then the tensor's annotation.
  std::shared_ptr<Tensor> tensorData(const Type &ty, size_t at, std::string tensorName, const std::string *impliedName,
                                     ExplicitFields implied = {});
  void tensorAnnotation(Tensor &t, bool &explicitGiven);
  /// `T[dims] name? =? data` in attribute position (the type already parsed).
  TensorPtr tensorConstant(const Type &ty, size_t at);
  TensorPtr tensorConstantOrNone();
  std::shared_ptr<const SparseTensor> sparseConstant(const Type &ty, size_t at);

  //===--- Attributes, nodes, graphs ----------------------------------===//
  Attribute attribute(bool allowBare, bool &bare);
  void attributeAnnotation(Attribute &a, bool &explicitGiven);
  void attributeValue(Attribute &a, AttrKind expected, bool typed);
  void singleValue(Attribute &a, AttrKind expected, bool typed);
  std::vector<Attribute> attributeList();
  std::vector<std::pair<std::string, size_t>> idList();
  void node(Graph &g);
  /// `(inputs) => (outputs) <...> {...}` after a graph's name; for a function
  /// body, `nodeDefault` is the function annotation's node_explicit.
  std::unique_ptr<Graph> graphBody(std::string graphName, Function *fn, ExplicitFields nodeDefault = {});
  /// A graph attribute's body: graphBody one nesting level down (bounded).
  std::unique_ptr<Graph> subgraphBody(std::string graphName, size_t at);
  void graphAnnotation(Graph &g, const char *entity, bool allowName, ExplicitFields *nodeDefault);
  void valueKeys(InfoKeys &info, std::string_view key, bool &known);
  void declarations(Graph &g, std::vector<PendingDecl> &decls);
  void resolve(Graph &g, std::vector<PendingOutput> &outputs, std::vector<PendingDecl> &decls);
  std::vector<OpsetId> opsets();
  std::unique_ptr<Function> function();

  //===--- Scopes -----------------------------------------------------===//
  Value *lookup(const std::string &n) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(n); f != it->end())
        return f->second;
    return nullptr;
  }
  void define(const std::string &n, Value *v, size_t at, const Graph &g) {
    if (n.empty())
      return;
    if (!scopes_.back().emplace(n, v).second)
      fail(at, "value '" + n + "' is defined twice in graph '" + g.name + "'");
  }

  struct DepthGuard {
    Parser &p;
    DepthGuard(Parser &parser, size_t at) : p(parser) {
      if (++p.depth_ > kMaxDepth)
        p.fail(at, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard &) = delete;
    DepthGuard &operator=(const DepthGuard &) = delete;
  };

  std::string_view src_;
  std::string source_;
  size_t pos_ = 0;
  Token peeked_;
  bool havePeek_ = false;
  size_t depth_ = 0;
  /// The node and attribute being parsed, and the subgraph levels entered
  /// (outermost first), for frontend/NestingLimit.h.
  std::string nodeName_, opType_, attrName_;
  std::vector<std::string> nestPath_;
  std::vector<std::unordered_map<std::string, Value *>> scopes_;
  /// The `node_explicit` default of each graph being parsed.
  std::vector<ExplicitFields> nodeExplicit_;
};

//===--- Lexer ------------------------------------------------------------===//

void Parser::skipSpace() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n')
        ++pos_;
    } else {
      break;
    }
  }
}

Token Parser::lex() {
  skipSpace();
  Token t;
  t.begin = pos_;
  if (pos_ >= src_.size()) {
    t.kind = Tok::End;
    t.end = pos_;
    return t;
  }
  char c = src_[pos_];
  auto at = [&](size_t i) { return pos_ + i < src_.size() ? src_[pos_ + i] : '\0'; };
  if (isAlpha(c)) {
    while (pos_ < src_.size() && (isAlpha(src_[pos_]) || isDigit(src_[pos_])))
      ++pos_;
    t.kind = Tok::Ident;
  } else if (c == '0' && (at(1) == 'x' || at(1) == 'X')) {
    pos_ += 2;
    while (pos_ < src_.size() && hexValue(src_[pos_]) >= 0)
      ++pos_;
    t.kind = Tok::Hex;
  } else if (isDigit(c) || (c == '.' && isDigit(at(1))) ||
             (c == '-' && (isDigit(at(1)) || (at(1) == '.' && isDigit(at(2)))))) {
    bool isFloat = false;
    if (c == '-')
      ++pos_;
    while (pos_ < src_.size() && isDigit(src_[pos_]))
      ++pos_;
    if (pos_ < src_.size() && src_[pos_] == '.') {
      isFloat = true;
      ++pos_;
      while (pos_ < src_.size() && isDigit(src_[pos_]))
        ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      isFloat = true;
      ++pos_;
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-'))
        ++pos_;
      if (pos_ >= src_.size() || !isDigit(src_[pos_]))
        fail(pos_, "malformed number: digits expected in the exponent");
      while (pos_ < src_.size() && isDigit(src_[pos_]))
        ++pos_;
    }
    t.kind = isFloat ? Tok::Float : Tok::Int;
  } else if (c == '"') {
    ++pos_;
    for (;;) {
      if (pos_ >= src_.size())
        fail(t.begin, "unterminated string literal");
      char d = src_[pos_];
      if (d == '"')
        break;
      if (d == '\\') {
        if (pos_ + 1 >= src_.size())
          fail(t.begin, "unterminated string literal");
        if (src_[pos_ + 1] == 'x') {
          if (pos_ + 3 >= src_.size() || hexValue(src_[pos_ + 2]) < 0 || hexValue(src_[pos_ + 3]) < 0)
            fail(pos_, "\\x escape needs two hex digits");
          pos_ += 4;
          continue;
        }
        pos_ += 2;
        continue;
      }
      ++pos_;
    }
    ++pos_;
    t.kind = Tok::String;
  } else if (c == '=' && at(1) == '>') {
    pos_ += 2;
    t.kind = Tok::Arrow;
  } else if (c == '@' && at(1) == '<') {
    pos_ += 2;
    t.kind = Tok::AnnotOpen;
  } else if (std::strchr("<>()[]{},:=.?@-", c)) {
    ++pos_;
    t.kind = Tok::Punct;
    t.punct = c;
  } else {
    auto u = static_cast<unsigned char>(c);
    std::string shown = u >= 0x20 && u < 0x7F ? std::string("'") + c + "'" : "byte " + std::to_string(u);
    fail(pos_, "unexpected character " + shown);
  }
  t.end = pos_;
  return t;
}

std::string Parser::stringValue(const Token &t) const {
  std::string_view body = src_.substr(t.begin + 1, t.end - t.begin - 2);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case 'x':
      out += static_cast<char>(hexValue(body[i + 1]) * 16 + hexValue(body[i + 2]));
      i += 2;
      break;
    default: out += e; break;
    }
  }
  return out;
}

std::string Parser::format(const ParseError &e) const {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < e.offset && i < src_.size(); ++i) {
    if (src_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return source_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + e.message;
}

void Parser::failAt(const Token &t, const std::string &expected) {
  std::string found;
  switch (t.kind) {
  case Tok::End: found = "end of input"; break;
  case Tok::String: found = "a string"; break;
  case Tok::Arrow: found = "'=>'"; break;
  case Tok::AnnotOpen: found = "'@<'"; break;
  default: {
    std::string_view s = text(t);
    found = "'" + std::string(s.substr(0, 40)) + (s.size() > 40 ? "...'" : "'");
  }
  }
  fail(t.begin, "expected " + expected + ", found " + found);
}

std::string Parser::identifier(const char *what) {
  if (peek().kind != Tok::Ident)
    failAt(peek(), what);
  return std::string(text(next()));
}

std::string Parser::name(const char *what) {
  if (peek().kind == Tok::String)
    return stringValue(next());
  if (peek().kind != Tok::Ident)
    failAt(peek(), what);
  return std::string(text(next()));
}

int64_t Parser::integer(const char *what) {
  if (peek().kind != Tok::Int)
    failAt(peek(), what);
  Token t = next();
  std::string_view s = text(t);
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    fail(t.begin, "integer out of range: " + std::string(s));
  return v;
}

uint32_t Parser::uint32Value(const char *what) {
  size_t at = peek().begin;
  int64_t v = integer(what);
  if (v < 0 || v >= static_cast<int64_t>(UINT32_MAX))
    fail(at, std::string(what) + " out of range");
  return static_cast<uint32_t>(v);
}

std::string Parser::string(const char *what) {
  if (peek().kind != Tok::String)
    failAt(peek(), what);
  return stringValue(next());
}

StringPairs Parser::pairs() {
  StringPairs out;
  expect('[', "to open a list of \"key\": \"value\" pairs");
  if (accept(']'))
    return out;
  do {
    std::string k = string("a string key");
    expect(':', "after a key");
    out.emplace_back(std::move(k), string("a string value"));
  } while (accept(','));
  expect(']', "to close the list");
  return out;
}

std::vector<std::string> Parser::stringList() {
  std::vector<std::string> out;
  expect('[', "to open a list of strings");
  if (accept(']'))
    return out;
  do
    out.push_back(string("a string"));
  while (accept(','));
  expect(']', "to close the list");
  return out;
}

ExplicitFields Parser::explicitList(FieldSet set) {
  ExplicitFields f;
  expect('[', "to open the list of explicit fields");
  if (accept(']'))
    return f;
  do {
    if (peek().kind == Tok::Int) {
      size_t at = peek().begin;
      int64_t n = integer("a field number");
      if (n < 0 || n >= 64)
        fail(at, "field number out of range");
      f.set(static_cast<unsigned>(n));
    } else {
      size_t at = peek().begin;
      std::string n = identifier("a field name");
      auto num = explicitFieldNumber(set, n);
      if (!num)
        fail(at, "'" + n + "' is not a field of this message");
      f.set(*num);
    }
  } while (accept(','));
  expect(']', "to close the list");
  return f;
}

template <typename F> void Parser::annotation(const char *entity, F &&entry, bool record) {
  if (record)
    expect('<', (std::string("to open the ") + entity + " record").c_str());
  else if (peek().kind == Tok::AnnotOpen)
    next();
  else
    failAt(peek(), "'@<'");
  if (accept('>'))
    return;
  do {
    Token keyTok = peek();
    std::string key = identifier("an annotation key");
    expect(':', "after an annotation key");
    if (!entry(std::string_view(key)))
      fail(keyTok.begin, "unknown key '" + key + "' in " + entity + " annotation");
  } while (accept(','));
  expect('>', "to close the annotation");
}

//===--- Types ------------------------------------------------------------===//

DataType Parser::elemType() {
  Token t = peek();
  std::string n = identifier("an element type");
  if (n == "undefined")
    return DataType::Undefined;
  if (n == "dtype") {
    expect('(', "after 'dtype'");
    size_t at = peek().begin;
    int64_t v = integer("an element type number");
    if (v < INT32_MIN || v > INT32_MAX)
      fail(at, "element type number out of range");
    expect(')', "to close 'dtype('");
    return static_cast<DataType>(v);
  }
  if (auto dt = parseDataTypeName(n))
    return *dt;
  fail(t.begin, "unknown element type '" + n + "'");
}

std::optional<Shape> Parser::shapeSuffix() {
  if (!accept('['))
    return Shape{};
  if (accept(']'))
    return std::nullopt;
  Shape s;
  do {
    Dim d;
    if (accept('?'))
      d = Dim::unknown();
    else if (peek().kind == Tok::Int)
      d = Dim::value(integer("a dimension"));
    else if (peek().kind == Tok::Ident || peek().kind == Tok::String)
      d = Dim::symbol(name("a dimension"));
    else
      failAt(peek(), "a dimension (a number, a symbol or '?')");
    if (atAnnotation())
      annotation("dimension", [&](std::string_view key) {
        if (key != "denotation")
          return false;
        d.denotation = string("a string");
        return true;
      });
    s.push_back(std::move(d));
  } while (accept(','));
  expect(']', "to close the shape");
  return s;
}

Type Parser::type() {
  DepthGuard guard(*this, peek().begin);
  Token t = peek();
  if (t.kind != Tok::Ident)
    failAt(t, "a type");
  std::string_view w = text(t);
  Type ty;
  bool tensorLike = false;
  if (w == "seq" || w == "optional") {
    next();
    expect('(', "after 'seq'/'optional'");
    Type inner = type();
    expect(')', "to close the type");
    ty = w == "seq" ? Type::sequence(std::move(inner)) : Type::optional(std::move(inner));
  } else if (w == "map") {
    next();
    expect('(', "after 'map'");
    DataType key = elemType();
    expect(',', "after the map key type");
    Type value = type();
    expect(')', "to close the map type");
    ty = Type::map(key, std::move(value));
  } else if (w == "sparse_tensor") {
    next();
    expect('(', "after 'sparse_tensor'");
    DataType dt = elemType();
    std::optional<Shape> shape = shapeSuffix();
    expect(')', "to close the sparse_tensor type");
    ty = Type::sparseTensor(dt, std::move(shape));
    tensorLike = true;
  } else if (w == "empty") {
    next();
  } else if (w == "opaque") {
    fail(t.begin, "opaque types are not supported");
  } else {
    DataType dt = elemType();
    ty = Type::tensor(dt, shapeSuffix());
    tensorLike = true;
  }
  if (tensorLike)
    ty.hasElemType = ty.elemType() != DataType::Undefined;
  if (atAnnotation())
    annotation("type", [&](std::string_view key) {
      if (key == "denotation")
        ty.denotation = string("a string");
      else if (key == "has_elem_type")
        ty.hasElemType = integer("0 or 1") != 0;
      else
        return false;
      return true;
    });
  return ty;
}

//===--- Tensor constants -------------------------------------------------===//

template <typename T> T Parser::floatValue() {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kNan = sizeof(T) == 4 ? Bits(0x7FC00000u) : Bits(0x7FF8000000000000ull);
  constexpr Bits kSign = Bits(1) << (sizeof(Bits) * 8 - 1);
  auto fromBits = [](Bits b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
  };
  Token t = peek();
  if (t.kind == Tok::Int || t.kind == Tok::Float) {
    next();
    std::string_view s = text(t);
    T v{};
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail(t.begin, "number out of range for " + std::string(sizeof(T) == 4 ? "float" : "double") + ": " +
                        std::string(s));
    return v;
  }
  bool negative = false;
  if (isPunct('-')) {
    next();
    negative = true;
    t = peek();
  }
  if (t.kind == Tok::Ident && isFloatWord(text(t))) {
    next();
    if (equalsLower(text(t), "nan")) {
      if (!negative && accept('(')) {
        Token h = peek();
        if (h.kind != Tok::Hex)
          failAt(h, "the bits of a NaN as 0x...");
        next();
        std::string_view digits = text(h).substr(2);
        Bits bits = 0;
        auto r = std::from_chars(digits.data(), digits.data() + digits.size(), bits, 16);
        if (digits.empty())
          fail(h.begin, "expected the bits of a NaN as 0x<hex digits>");
        if (r.ec != std::errc() || r.ptr != digits.data() + digits.size())
          fail(h.begin, "NaN bits out of range");
        expect(')', "to close 'nan('");
        return fromBits(bits);
      }
      return fromBits(negative ? kNan | kSign : kNan);
    }
    T inf = std::numeric_limits<T>::infinity();
    return negative ? -inf : inf;
  }
  failAt(t, "a number");
}

void Parser::tensorElements(DataType dt, const std::vector<int64_t> &dims, Tensor &t, size_t at) {
  std::string bytes;
  std::vector<std::string> strings;
  size_t count = 0;
  auto append = [&](const void *p, size_t n) { bytes.append(static_cast<const char *>(p), n); };
  auto intIn = [&](int64_t lo, int64_t hi) {
    size_t where = peek().begin;
    int64_t v = integer("an integer element");
    if (v < lo || v > hi)
      fail(where, "element " + std::to_string(v) + " out of range for " + dataTypeName(dt));
    return v;
  };
  expect('{', "to open the tensor data");
  if (isPunct('.'))
    fail(peek().begin, "elided constant data ({...}) cannot be parsed; print with large constants");
  if (!isPunct('}')) {
    do {
      switch (dt) {
      case DataType::Float: case DataType::Complex64: {
        float v = floatValue<float>();
        append(&v, 4);
        break;
      }
      case DataType::Double: case DataType::Complex128: {
        double v = floatValue<double>();
        append(&v, 8);
        break;
      }
      case DataType::Int8: { auto v = static_cast<int8_t>(intIn(INT8_MIN, INT8_MAX)); append(&v, 1); break; }
      case DataType::Int16: { auto v = static_cast<int16_t>(intIn(INT16_MIN, INT16_MAX)); append(&v, 2); break; }
      case DataType::Int32: { auto v = static_cast<int32_t>(intIn(INT32_MIN, INT32_MAX)); append(&v, 4); break; }
      case DataType::Int64: { int64_t v = integer("an integer element"); append(&v, 8); break; }
      case DataType::UInt8: case DataType::Bool: case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ:
      case DataType::Float8E5M2: case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: {
        auto v = static_cast<uint8_t>(intIn(0, 255));
        append(&v, 1);
        break;
      }
      case DataType::UInt16: case DataType::Float16: case DataType::BFloat16: {
        auto v = static_cast<uint16_t>(intIn(0, 65535));
        append(&v, 2);
        break;
      }
      case DataType::UInt32: { auto v = static_cast<uint32_t>(intIn(0, UINT32_MAX)); append(&v, 4); break; }
      case DataType::UInt64: {
        Token tok = peek();
        if (tok.kind != Tok::Int || text(tok)[0] == '-')
          failAt(tok, "an unsigned integer element");
        next();
        uint64_t v = 0;
        std::string_view s = text(tok);
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size())
          fail(tok.begin, "element out of range for uint64");
        append(&v, 8);
        break;
      }
      case DataType::Int4: case DataType::UInt4: case DataType::Float4E2M1: {
        int64_t v = dt == DataType::Int4 ? intIn(-8, 7) : intIn(0, 15);
        auto nib = static_cast<uint8_t>(v & 15);
        if (count % 2 == 0)
          bytes += static_cast<char>(nib);
        else
          bytes.back() = static_cast<char>(static_cast<uint8_t>(bytes.back()) | nib << 4);
        break;
      }
      case DataType::String:
        strings.push_back(string("a string element"));
        break;
      default:
        fail(at, "element lists are not supported for element type " + dataTypeName(dt) + "; use 0x... bytes");
      }
      ++count;
    } while (accept(','));
  }
  expect('}', "to close the tensor data");
  if (dt == DataType::String) {
    t.setStrings(std::move(strings));
    return;
  }
  int64_t n = 1;
  for (int64_t d : dims)
    n = d <= 0 || n > INT64_MAX / d ? 0 : n * d;
  size_t expected = static_cast<size_t>(n) * (dt == DataType::Complex64 || dt == DataType::Complex128 ? 2 : 1);
  if (count != expected)
    fail(at, "tensor has " + std::to_string(expected) + " elements but " + std::to_string(count) + " are listed");
  t.setBuffer(Buffer::fromString(std::move(bytes)));
}

std::vector<int64_t> Parser::constantDims(const Type &ty, size_t at) {
  if (ty.kind() != Type::Kind::Tensor && ty.kind() != Type::Kind::SparseTensor)
    fail(at, "a constant needs a tensor type");
  if (!ty.shape())
    fail(at, "a constant needs a shape (use 'T' for a scalar, 'T[2,3]' otherwise), not 'T[]'");
  std::vector<int64_t> dims;
  for (const Dim &d : *ty.shape()) {
    if (!d.isValue())
      fail(at, "a constant's dimensions must be numbers");
    dims.push_back(d.getValue());
  }
  return dims;
}

std::shared_ptr<Tensor> Parser::tensorData(const Type &ty, size_t at, std::string tensorName,
                                           const std::string *impliedName, ExplicitFields implied) {
  std::vector<int64_t> dims = constantDims(ty, at);
  auto t = std::make_shared<Tensor>(ty.elemType(), dims, Buffer());
  t->name = impliedName ? *impliedName : std::move(tensorName);
  Token d = peek();
  if (d.kind == Tok::Hex) {
    next();
    std::string_view digits = text(d).substr(2);
    if (digits.size() % 2)
      fail(d.begin, "hex data needs an even number of digits");
    if (ty.elemType() == DataType::String)
      fail(d.begin, "string tensors cannot take hex data");
    std::string bytes(digits.size() / 2, '\0');
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<char>(hexValue(digits[2 * i]) * 16 + hexValue(digits[2 * i + 1]));
    t->setBuffer(Buffer::fromString(std::move(bytes)));
  } else if (isPunct('[')) {
    t->encoding = TensorEncoding::External;
    t->dataLocation = 1;
    t->externalData = pairs();
  } else if (isPunct('{')) {
    tensorElements(ty.elemType(), dims, *t, at);
  } else {
    failAt(d, "tensor data ('{...}', '0x...' or an external-data list)");
  }
  bool explicitGiven = false;
  if (atAnnotation())
    tensorAnnotation(*t, explicitGiven);
  if (!explicitGiven)
    t->explicitFields = implied;
  return t;
}

void Parser::tensorAnnotation(Tensor &t, bool &explicitGiven) {
  annotation("tensor", [&](std::string_view key) {
    if (key == "name") {
      t.name = string("a string");
    } else if (key == "doc_string") {
      t.docString = string("a string");
    } else if (key == "encoding") {
      Token e = peek();
      std::string v = identifier("raw, typed or external");
      if (v == "raw")
        t.encoding = TensorEncoding::Raw;
      else if (v == "typed")
        t.encoding = TensorEncoding::Typed;
      else if (v == "external")
        t.encoding = TensorEncoding::External;
      else
        fail(e.begin, "unknown encoding '" + v + "' (raw, typed or external)");
    } else if (key == "external_data") {
      t.externalData = pairs();
    } else if (key == "data_location") {
      size_t at = peek().begin;
      int64_t v = integer("an integer");
      if (v < INT32_MIN || v > INT32_MAX)
        fail(at, "data_location out of range");
      t.dataLocation = static_cast<int32_t>(v);
    } else if (key == "segment") {
      expect('[', "to open the segment");
      int64_t b = integer("the segment begin");
      expect(',', "between segment begin and end");
      int64_t e = integer("the segment end");
      expect(']', "to close the segment");
      t.segment = std::make_pair(b, e);
    } else if (key == "metadata_props") {
      t.metadataProps = pairs();
    } else if (key == "explicit") {
      t.explicitFields = explicitList(FieldSet::Tensor);
      explicitGiven = true;
    } else {
      return false;
    }
    return true;
  });
}

TensorPtr Parser::tensorConstant(const Type &ty, size_t at) {
  std::string tensorName;
  ExplicitFields implied;
  if (peek().kind == Tok::String || (peek().kind == Tok::Ident && !isWord("none"))) {
    tensorName = name("a tensor name");
    if (tensorName.empty())
      implied.set(8); // A written "" is an explicitly empty name.
  }
  accept('=');
  return tensorData(ty, at, std::move(tensorName), nullptr, implied);
}

TensorPtr Parser::tensorConstantOrNone() {
  if (isWord("none")) {
    next();
    return nullptr;
  }
  size_t at = peek().begin;
  Type ty = type();
  return tensorConstant(ty, at);
}

std::shared_ptr<const SparseTensor> Parser::sparseConstant(const Type &ty, size_t at) {
  auto s = std::make_shared<SparseTensor>();
  s->dims = constantDims(ty, at);
  if (!isWord("sparse"))
    failAt(peek(), "'sparse(values, indices)'");
  next();
  expect('(', "after 'sparse'");
  s->hasValues = !isWord("none");
  s->values = tensorConstantOrNone();
  expect(',', "between sparse values and indices");
  s->hasIndices = !isWord("none");
  s->indices = tensorConstantOrNone();
  expect(')', "to close 'sparse('");
  return s;
}

//===--- Attributes -------------------------------------------------------===//

void Parser::attributeAnnotation(Attribute &a, bool &explicitGiven) {
  annotation("attribute", [&](std::string_view key) {
    if (key == "doc_string") {
      a.docString = string("a string");
    } else if (key == "has_kind") {
      a.hasKind = integer("0 or 1") != 0;
    } else if (key == "explicit") {
      a.explicitFields = explicitList(FieldSet::Attribute);
      explicitGiven = true;
    } else if (auto kind = attrFieldKind(key)) {
      Attribute tmp;
      attributeValue(tmp, *kind, /*typed=*/true);
      moveField(a, tmp, *kind);
    } else {
      return false;
    }
    return true;
  });
}

void Parser::singleValue(Attribute &a, AttrKind expected, bool typed) {
  Token t = peek();
  switch (t.kind) {
  case Tok::Ident: {
    std::string_view w = text(t);
    if (isTypeWord(w)) {
      Type ty = type();
      Token n = peek();
      if (ty.kind() == Type::Kind::SparseTensor && isWord("sparse")) {
        a.kind = AttrKind::SparseTensor;
        a.sparseTensor = sparseConstant(ty, t.begin);
      } else if (n.kind == Tok::Hex || n.kind == Tok::String || (n.kind == Tok::Ident && !isWord("none")) ||
                 (n.kind == Tok::Punct && (n.punct == '{' || n.punct == '='))) {
        a.kind = AttrKind::Tensor;
        a.t = tensorConstant(ty, t.begin);
      } else {
        a.kind = AttrKind::TypeProto;
        a.tp = std::move(ty);
      }
    } else if (isFloatWord(w)) {
      a.kind = AttrKind::Float;
      a.f = floatValue<float>();
    } else if (w == "none") {
      fail(t.begin, "'none' needs a typed attribute (name: kind = none)");
    } else {
      next();
      a.kind = AttrKind::Graph;
      a.g = subgraphBody(std::string(w), t.begin);
    }
    break;
  }
  case Tok::String:
    next();
    if (expected == AttrKind::Graph) {
      a.kind = AttrKind::Graph;
      a.g = subgraphBody(stringValue(t), t.begin);
    } else {
      a.kind = AttrKind::String;
      a.s = stringValue(t);
    }
    break;
  case Tok::Int:
    if (expected == AttrKind::Float) {
      a.kind = AttrKind::Float;
      a.f = floatValue<float>();
    } else {
      a.kind = AttrKind::Int;
      a.i = integer("an integer");
    }
    break;
  case Tok::Float:
    a.kind = AttrKind::Float;
    a.f = floatValue<float>();
    break;
  case Tok::Punct:
    if (t.punct == '-') {
      a.kind = AttrKind::Float;
      a.f = floatValue<float>();
      break;
    }
    [[fallthrough]];
  default:
    failAt(t, "an attribute value");
  }
  if (typed && expected != AttrKind::Undefined && a.kind != expected)
    fail(t.begin, "a value of kind '" + attrKindName(a.kind) + "' where '" + attrKindName(expected) +
                      "' is declared");
}

void Parser::attributeValue(Attribute &a, AttrKind expected, bool typed) {
  DepthGuard guard(*this, peek().begin);
  if (!isPunct('[')) {
    if (typed && isListKind(expected))
      failAt(peek(), "a '[' list for kind '" + attrKindName(expected) + "'");
    if (typed && isWord("none")) {
      next();
      a.kind = expected;
      return;
    }
    singleValue(a, expected, typed);
    return;
  }
  size_t open = next().begin;
  if (typed && !isListKind(expected))
    fail(open, "kind '" + attrKindName(expected) + "' cannot take a list");
  AttrKind elem = typed ? elementKindOf(expected) : AttrKind::Undefined;
  if (accept(']')) {
    if (!typed)
      fail(open, "an empty list needs a declared kind (name: ints = [])");
    a.kind = expected;
    return;
  }
  do {
    Attribute e;
    if (elem != AttrKind::Undefined && isWord("none")) {
      next();
      e.kind = elem;
    } else {
      singleValue(e, elem, elem != AttrKind::Undefined);
    }
    elem = e.kind;
    switch (elem) {
    case AttrKind::Float: a.floats.push_back(e.f); break;
    case AttrKind::Int: a.ints.push_back(e.i); break;
    case AttrKind::String: a.strings.push_back(std::move(e.s)); break;
    case AttrKind::Tensor: a.tensors.push_back(std::move(e.t)); break;
    case AttrKind::Graph: a.graphs.push_back(std::move(e.g)); break;
    case AttrKind::SparseTensor: a.sparseTensors.push_back(std::move(e.sparseTensor)); break;
    case AttrKind::TypeProto:
      if (!e.tp)
        fail(open, "'none' cannot stand for a type in a list");
      a.typeProtos.push_back(std::move(*e.tp));
      break;
    default:
      fail(open, "unsupported list element");
    }
  } while (accept(','));
  expect(']', "to close the list");
  a.kind = listKindOf(elem);
}

Attribute Parser::attribute(bool allowBare, bool &bare) {
  bare = false;
  Attribute a(name("an attribute name"));
  // Restored on return: a subgraph in this attribute parses attributes of its own.
  struct Restore {
    std::string &slot, saved;
    ~Restore() { slot = std::move(saved); }
  } restoreAttr{attrName_, std::exchange(attrName_, a.name)};
  if (allowBare && (isPunct(',') || isPunct('>'))) {
    bare = true;
    return a;
  }
  AttrKind kind = AttrKind::Undefined;
  bool typed = false;
  if (accept(':')) {
    Token k = peek();
    if (k.kind == Tok::Int) {
      int64_t v = integer("an attribute kind");
      if (v < INT32_MIN || v > INT32_MAX)
        fail(k.begin, "attribute kind out of range");
      kind = static_cast<AttrKind>(v);
    } else {
      std::string n = identifier("an attribute kind (int, float, ints, tensor, graph...)");
      auto parsed = parseAttrKindName(n);
      if (!parsed)
        fail(k.begin, "unknown attribute kind '" + n + "'");
      kind = *parsed;
    }
    typed = true;
  }
  bool explicitGiven = false;
  if (atAnnotation())
    attributeAnnotation(a, explicitGiven);
  expect('=', ("after attribute '" + a.name + "'").c_str());
  if (accept('@')) {
    a.kind = kind;
    a.refAttrName = name("the name of the referenced attribute");
  } else if (typed && (kind == AttrKind::Undefined || !isListKind(kind)) && isWord("none")) {
    next();
    a.kind = kind;
  } else {
    if (typed && kind != AttrKind::Undefined && !isListKind(kind) && elementKindOf(listKindOf(kind)) != kind)
      fail(peek().begin, "attribute kind '" + attrKindName(kind) + "' takes only 'none'");
    attributeValue(a, kind, typed && kind != AttrKind::Undefined);
  }
  if (!explicitGiven)
    a.explicitFields = impliedExplicitFields(a);
  return a;
}

std::vector<Attribute> Parser::attributeList() {
  std::vector<Attribute> out;
  expect('<', "to open the attribute list");
  do {
    bool bare;
    out.push_back(attribute(false, bare));
  } while (accept(','));
  expect('>', "to close the attribute list");
  return out;
}

//===--- Nodes ------------------------------------------------------------===//

std::vector<std::pair<std::string, size_t>> Parser::idList() {
  std::vector<std::pair<std::string, size_t>> out;
  for (;;) {
    Token t = peek();
    if (t.kind == Tok::Ident || t.kind == Tok::String) {
      out.emplace_back(name("a name"), t.begin);
    } else if (isPunct(',')) {
      out.emplace_back(std::string(), t.begin); // An empty slot before a comma.
      next();
      continue;
    } else {
      break;
    }
    if (!accept(','))
      break;
  }
  return out;
}

void Parser::node(Graph &g) {
  std::string nodeName;
  if (accept('[')) {
    if (!isPunct(']'))
      nodeName = name("a node name");
    expect(']', "to close the node name");
  }
  auto outputs = idList();
  expect('=', "between a node's outputs and its op");
  std::string opType, domain;
  if (peek().kind == Tok::String) {
    opType = stringValue(next());
  } else {
    opType = identifier("an op type");
    while (accept('.')) {
      if (!domain.empty())
        domain += '.';
      domain += opType;
      opType = identifier("an op type after '.'");
    }
  }
  std::string overload;
  if (accept(':'))
    overload = identifier("an overload name");
  struct Restore {
    std::string &slot, saved;
    ~Restore() { slot = std::move(saved); }
  } restoreName{nodeName_, std::exchange(nodeName_, nodeName)},
      restoreOp{opType_, std::exchange(opType_, domain.empty() ? opType : domain + "." + opType)};
  std::vector<Attribute> attrs;
  bool haveAttrs = false;
  if (isPunct('<')) {
    attrs = attributeList();
    haveAttrs = true;
  }
  expect('(', ("to open the operands of " + opType).c_str());
  auto inputs = idList();
  expect(')', ("to close the operands of " + opType).c_str());
  if (!haveAttrs && isPunct('<'))
    attrs = attributeList();

  std::optional<std::string> doc, annotDomain, annotOverload;
  std::optional<StringPairs> meta;
  std::optional<std::vector<std::string>> devices;
  std::optional<ExplicitFields> explicitFields;
  if (atAnnotation())
    annotation("node", [&](std::string_view key) {
      if (key == "doc_string") doc = string("a string");
      else if (key == "domain") annotDomain = string("a string");
      else if (key == "overload") annotOverload = string("a string");
      else if (key == "metadata_props") meta = pairs();
      else if (key == "device_configurations") devices = stringList();
      else if (key == "explicit") explicitFields = explicitList(FieldSet::Node);
      else return false;
      return true;
    });

  auto describe = [&] {
    std::string s = "node ";
    if (!nodeName.empty())
      s += "'" + nodeName + "' ";
    return s + "(" + (domain.empty() ? "" : domain + ".") + opType + ")";
  };
  std::vector<Value *> operands;
  for (const auto &[n, at] : inputs) {
    if (n.empty()) {
      operands.push_back(nullptr);
      continue;
    }
    Value *v = lookup(n);
    if (!v)
      fail(at, describe() + ": input '" + n + "' names no value defined before it");
    operands.push_back(v);
  }
  std::vector<std::string> resultNames;
  for (const auto &out : outputs)
    resultNames.push_back(out.first);
  if (annotDomain)
    domain = *annotDomain;
  if (annotOverload)
    overload = *annotOverload;
  Node *n = g.append(g.createNode(opType, operands, resultNames, domain));
  n->setName(std::move(nodeName));
  n->overload = std::move(overload);
  for (Attribute &a : attrs) {
    for (Graph *sg : a.subgraphs())
      sg->setParentNode(n);
    n->attributes().push_back(std::move(a));
  }
  if (doc)
    n->docString = std::move(*doc);
  if (meta)
    n->metadataProps = std::move(*meta);
  if (devices)
    n->deviceConfigurations = std::move(*devices);
  n->explicitFields = explicitFields ? *explicitFields : nodeExplicit_.back();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (Value *r = n->result(i))
      define(r->name(), r, outputs[i].second, g);
}

//===--- Graphs -----------------------------------------------------------===//

void Parser::valueKeys(InfoKeys &info, std::string_view key, bool &known) {
  known = true;
  if (key == "doc_string")
    info.doc = string("a string");
  else if (key == "metadata_props")
    info.meta = pairs();
  else if (key == "explicit")
    info.explicitFields = explicitList(FieldSet::ValueInfo);
  else
    known = false;
}

void Parser::graphAnnotation(Graph &g, const char *entity, bool allowName, ExplicitFields *nodeDefault) {
  auto entry = [&](std::string_view key) {
    if (nodeDefault && key == "node_explicit") {
      *nodeDefault = explicitList(FieldSet::Node);
    } else if (allowName && key == "name") {
      g.name = string("a string");
    } else if (key == "doc_string") {
      g.docString = string("a string");
    } else if (key == "metadata_props") {
      g.metadataProps = pairs();
    } else if (key == "explicit") {
      g.explicitFields = explicitList(FieldSet::Graph);
    } else if (key == "quantization_annotation") {
      expect('[', "to open the quantization annotations");
      if (!accept(']')) {
        do {
          TensorAnnotation t;
          annotation("quantization_annotation", [&](std::string_view k) {
            if (k == "tensor_name") t.tensorName = string("a string");
            else if (k == "quant_parameter_tensor_names") t.quantParameterTensorNames = pairs();
            else if (k == "explicit") t.explicitFields = explicitList(FieldSet::TensorAnnotation);
            else return false;
            return true;
          }, /*record=*/true);
          g.quantizationAnnotations.push_back(std::move(t));
        } while (accept(','));
        expect(']', "to close the quantization annotations");
      }
    } else {
      return false;
    }
    return true;
  };
  annotation(entity, entry, /*record=*/allowName);
}

void Parser::declarations(Graph &g, std::vector<PendingDecl> &decls) {
  if (accept('>'))
    return;
  do {
    size_t at = peek().begin;
    std::optional<Type> ty;
    if (atType())
      ty = type();
    size_t nameAt = peek().begin;
    std::string n = name("a value name");
    if (accept('=')) {
      // An initializer (dense or sparse); it may give an input its default.
      if (!ty)
        fail(at, "an initializer needs a type");
      if (isWord("none")) {
        next();
        if (ty->kind() == Type::Kind::SparseTensor)
          define(n, g.addSparseInitializer(n, nullptr), nameAt, g);
        else
          define(n, g.addInitializer(n, nullptr), nameAt, g);
        continue;
      }
      if (ty->kind() == Type::Kind::SparseTensor) {
        define(n, g.addSparseInitializer(n, sparseConstant(*ty, at)), nameAt, g);
        continue;
      }
      std::shared_ptr<Tensor> t = tensorData(*ty, at, std::string(), &n);
      auto it = scopes_.back().find(n);
      if (it != scopes_.back().end() && it->second->defKind() == Value::DefKind::GraphInput &&
          !it->second->initializer()) {
        g.addInitializerToInput(it->second, std::move(t));
        continue;
      }
      define(n, g.addInitializer(n, std::move(t)), nameAt, g);
      continue;
    }
    PendingDecl d;
    d.name = std::move(n);
    d.offset = nameAt;
    d.type = std::move(ty);
    if (atAnnotation())
      annotation("value", [&](std::string_view key) {
        bool known;
        valueKeys(d.info, key, known);
        if (known)
          return true;
        if (key == "order") {
          if (isWord("none")) {
            next();
            d.orderKind = PendingDecl::Order::None;
          } else {
            d.order = uint32Value("a value_info order");
            d.orderKind = PendingDecl::Order::Explicit;
          }
        } else if (key == "orphan") {
          d.orphan = integer("0 or 1") != 0;
        } else {
          return false;
        }
        return true;
      });
    decls.push_back(std::move(d));
  } while (accept(','));
  expect('>', "to close the initializer and value_info list");
}

void Parser::resolve(Graph &g, std::vector<PendingOutput> &outputs, std::vector<PendingDecl> &decls) {
  for (PendingOutput &o : outputs) {
    Value *v = o.name.empty() ? nullptr : lookup(o.name);
    if (!v)
      fail(o.offset, "graph '" + g.name + "': output '" + o.name + "' names no value of the graph or its scope");
    size_t i = g.addOutput(v, std::move(o.type));
    o.info.applyTo(g.outputSlot(i).info);
  }
  uint32_t next = 0;
  for (PendingDecl &d : decls) {
    uint32_t order = Value::kNoValueInfo;
    if (d.orderKind == PendingDecl::Order::Explicit)
      order = d.order;
    else if (d.orderKind == PendingDecl::Order::Implicit)
      order = next;
    if (order != Value::kNoValueInfo) {
      if (order == Value::kNoValueInfo - 1)
        fail(d.offset, "value_info order out of range");
      next = order + 1;
      g.noteValueInfoOrder(order);
    }
    auto it = scopes_.back().find(d.name);
    Value *v = it == scopes_.back().end() ? nullptr : it->second;
    bool orphan = d.orphan || !v || (order != Value::kNoValueInfo && v->valueInfoOrder != Value::kNoValueInfo);
    if (orphan) {
      if (order == Value::kNoValueInfo)
        fail(d.offset, "declaration of '" + d.name + "', which names no value of graph '" + g.name + "'");
      OrphanValueInfo o;
      o.order = order;
      o.name = std::move(d.name);
      o.type = std::move(d.type);
      d.info.applyTo(o.info);
      g.orphanValueInfos.push_back(std::move(o));
      continue;
    }
    v->setType(std::move(d.type));
    if (order != Value::kNoValueInfo)
      v->valueInfoOrder = order;
    d.info.applyTo(v->info);
  }
}

std::unique_ptr<Graph> Parser::subgraphBody(std::string graphName, size_t at) {
  nestPath_.push_back(frontend::nestingLevel(nodeName_, opType_, attrName_));
  if (nestPath_.size() > frontend::kMaxSubgraphDepth)
    fail(at, frontend::nestingTooDeep(nestPath_));
  auto g = graphBody(std::move(graphName), nullptr);
  nestPath_.pop_back();
  return g;
}

std::unique_ptr<Graph> Parser::graphBody(std::string graphName, Function *fn, ExplicitFields nodeDefault) {
  DepthGuard guard(*this, peek().begin);
  auto g = std::make_unique<Graph>();
  g->name = std::move(graphName);
  if (!fn && atAnnotation())
    graphAnnotation(*g, "graph", false, &nodeDefault);
  scopes_.emplace_back();
  nodeExplicit_.push_back(nodeDefault);
  std::vector<PendingDecl> decls;
  std::vector<PendingOutput> outputs;

  // A typed function parameter is a value_info entry, as in ONNX's parser.
  auto signatureDecl = [&](const std::string &n, size_t at, std::optional<Type> &ty) {
    PendingDecl d;
    d.name = n;
    d.offset = at;
    d.type = std::move(ty);
    decls.push_back(std::move(d));
  };

  expect('(', "to open the graph inputs");
  if (!accept(')')) {
    do {
      std::optional<Type> ty;
      if (atType())
        ty = type();
      size_t at = peek().begin;
      std::string n = name("an input name");
      Value *v = g->addInput(n, fn ? std::nullopt : ty);
      define(n, v, at, *g);
      if (fn && ty)
        signatureDecl(n, at, ty);
      if (accept('=')) {
        if (!ty || fn)
          fail(at, "only a typed graph input can have a default value");
        g->addInitializerToInput(v, tensorData(*v->type(), at, std::string(), &n));
      }
      if (atAnnotation()) {
        InfoKeys info;
        annotation("input", [&](std::string_view key) {
          bool known;
          valueKeys(info, key, known);
          return known;
        });
        info.applyTo(v->info);
      }
    } while (accept(','));
    expect(')', "to close the graph inputs");
  }
  if (peek().kind != Tok::Arrow)
    failAt(peek(), "'=>' between graph inputs and outputs");
  next();
  expect('(', "to open the graph outputs");
  if (!accept(')')) {
    do {
      PendingOutput o;
      std::optional<Type> ty;
      if (atType())
        ty = type();
      o.offset = peek().begin;
      o.name = name("an output name");
      if (fn && ty)
        signatureDecl(o.name, o.offset, ty);
      else
        o.type = std::move(ty);
      if (atAnnotation())
        annotation("output", [&](std::string_view key) {
          bool known;
          valueKeys(o.info, key, known);
          if (!known && key == "type") {
            o.type = type();
            known = true;
          }
          return known;
        });
      outputs.push_back(std::move(o));
    } while (accept(','));
    expect(')', "to close the graph outputs");
  }
  if (accept('<'))
    declarations(*g, decls);
  expect('{', "to open the graph body");
  while (!accept('}')) {
    if (peek().kind == Tok::End)
      failAt(peek(), "'}' to close graph '" + g->name + "'");
    node(*g);
  }
  resolve(*g, outputs, decls);
  scopes_.pop_back();
  nodeExplicit_.pop_back();
  return g;
}

//===--- Model and functions ----------------------------------------------===//

std::vector<OpsetId> Parser::opsets() {
  std::vector<OpsetId> out;
  expect('[', "to open the opset list");
  if (accept(']'))
    return out;
  do {
    OpsetId o;
    o.domain = string("an opset domain string");
    expect(':', "after the opset domain");
    o.version = integer("an opset version");
    o.explicitFields = impliedExplicitFields(o);
    if (atAnnotation())
      annotation("opset", [&](std::string_view key) {
        if (key != "explicit")
          return false;
        o.explicitFields = explicitList(FieldSet::OperatorSetId);
        return true;
      });
    out.push_back(std::move(o));
  } while (accept(','));
  expect(']', "to close the opset list");
  return out;
}

std::unique_ptr<Function> Parser::function() {
  auto f = std::make_unique<Function>();
  if (accept('<')) {
    do {
      Token k = peek();
      std::string key = identifier("a function header key");
      expect(':', "after a header key");
      if (key == "domain") f->domain = string("a string");
      else if (key == "overload") f->overload = string("a string");
      else if (key == "opset_import") f->opsetImport = opsets();
      else if (key == "doc_string") f->docString = string("a string");
      else fail(k.begin, "unknown function header key '" + key + "'");
    } while (accept(','));
    expect('>', "to close the function header");
  }
  f->name = name("a function name");
  std::optional<std::unique_ptr<Graph>> bodyFields;
  ExplicitFields nodeDefault;
  if (atAnnotation())
    annotation("function", [&](std::string_view key) {
      if (key == "node_explicit") {
        nodeDefault = explicitList(FieldSet::Node);
      } else if (key == "metadata_props") {
        f->metadataProps = pairs();
      } else if (key == "explicit") {
        f->explicitFields = explicitList(FieldSet::Function);
      } else if (key == "body") {
        bodyFields = std::make_unique<Graph>();
        graphAnnotation(**bodyFields, "function body", true, nullptr);
      } else {
        return false;
      }
      return true;
    });
  if (accept('<')) {
    do {
      bool bare;
      Attribute a = attribute(true, bare);
      if (bare)
        f->attributeNames.push_back(std::move(a.name));
      else
        f->attributeProtos.push_back(std::move(a));
    } while (accept(','));
    expect('>', "to close the function attributes");
  }
  f->body = graphBody(std::string(), f.get(), nodeDefault);
  if (bodyFields) {
    Graph &src = **bodyFields;
    f->body->name = std::move(src.name);
    f->body->docString = std::move(src.docString);
    f->body->metadataProps = std::move(src.metadataProps);
    f->body->quantizationAnnotations = std::move(src.quantizationAnnotations);
    f->body->explicitFields = src.explicitFields;
  }
  return f;
}

void reserveNames(NameTable &names, const Graph &g) {
  auto leaf = [&](const std::vector<Value *> &vs) {
    for (const Value *v : vs)
      names.reserve(v->name());
  };
  leaf(g.inputs());
  leaf(g.initializers());
  leaf(g.sparseInitializers());
  for (const Node *n : g.nodes()) {
    names.reserve(n->name());
    for (size_t i = 0; i < n->numResults(); ++i)
      if (const Value *r = n->result(i))
        names.reserve(r->name());
    for (const Graph *sg : n->subgraphs())
      reserveNames(names, *sg);
  }
}

std::unique_ptr<Model> Parser::model() {
  auto m = std::make_unique<Model>();
  if (accept('<')) {
    do {
      Token k = peek();
      std::string key = identifier("a model header key");
      expect(':', "after a header key");
      if (key == "ir_version") m->irVersion = integer("an integer");
      else if (key == "opset_import") m->opsetImport = opsets();
      else if (key == "producer_name") m->producerName = string("a string");
      else if (key == "producer_version") m->producerVersion = string("a string");
      else if (key == "domain") m->domain = string("a string");
      else if (key == "model_version") m->modelVersion = integer("an integer");
      else if (key == "doc_string") m->docString = string("a string");
      else if (key == "metadata_props") m->metadataProps = pairs();
      else fail(k.begin, "unknown model header key '" + key + "'");
    } while (accept(','));
    expect('>', "to close the model header");
  }
  bool hasGraph = true;
  if (atAnnotation())
    annotation("model", [&](std::string_view key) {
      if (key == "explicit") {
        m->explicitFields = explicitList(FieldSet::Model);
      } else if (key == "training_info") {
        m->trainingInfo = stringList();
      } else if (key == "configuration") {
        m->configuration = stringList();
      } else if (key == "graph") {
        if (!isWord("none"))
          failAt(peek(), "'none'");
        next();
        hasGraph = false;
      } else {
        return false;
      }
      return true;
    });
  if (hasGraph) {
    std::string graphName = name("a graph name");
    m->setGraph(graphBody(std::move(graphName), nullptr));
  }
  while (peek().kind != Tok::End)
    m->functions.push_back(function());
  if (m->graph())
    reserveNames(m->names(), *m->graph());
  // Function bodies are not the model's scope, but reserving their names
  // keeps fresh names from colliding with them (as the binary loader does).
  for (const auto &f : m->functions)
    reserveNames(m->names(), *f->body);
  return m;
}

std::unique_ptr<Graph> Parser::standaloneGraph() {
  std::string graphName = name("a graph name");
  auto g = graphBody(std::move(graphName), nullptr);
  if (peek().kind != Tok::End)
    failAt(peek(), "end of input after the graph");
  return g;
}

} // namespace

std::unique_ptr<Model> parseModelText(std::string_view text, std::string &error, const std::string &sourceName) {
  Parser p(text, sourceName);
  try {
    return p.model();
  } catch (const ParseError &e) {
    error = p.format(e);
  } catch (const std::bad_alloc &) {
    error = sourceName + ": out of memory while parsing";
  }
  return nullptr;
}

std::unique_ptr<Graph> parseGraphText(std::string_view text, std::string &error, const std::string &sourceName) {
  Parser p(text, sourceName);
  try {
    return p.standaloneGraph();
  } catch (const ParseError &e) {
    error = p.format(e);
  } catch (const std::bad_alloc &) {
    error = sourceName + ": out of memory while parsing";
  }
  return nullptr;
}

} // namespace onnxslim
