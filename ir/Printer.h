//===- ir/Printer.h - The IR as ONNX textual syntax ------------*- C++ -*-===//
//
// Prints a Model (or one graph, node or type) in ONNX's textual syntax
// (onnx/docs/Syntax.md). Wherever the standard syntax has a slot for a piece
// of data it is used; everything else the IR keeps for a lossless round trip
// (doc strings, metadata, explicit-default fields, tensor encodings, value_info
// order, orphan value infos, opaque training data...) goes into annotation
// blocks `@<key: value, ...>` that are printed only when non-default. The
// grammar of the extensions is at the top of Printer.cpp and in
// docs/TextFormat.md; frontend/TextParser reads the same text back into an
// IR that ir/Equivalence finds equal to the printed one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Attribute.h"

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace onnxslim {

class Graph;
class Model;
class Node;
class Type;
struct OpsetId;

struct PrintOptions {
  /// Print the data of every constant; otherwise tensors with more than
  /// `largeConstantElements` elements print as `{...}` (not parseable back).
  bool printLargeConstants = false;
  size_t largeConstantElements = 16;
  /// Print doc_string fields (dropping them makes the text lossy).
  bool printDocStrings = true;
};

/// Given a model, Execute: writes it as ONNX text (header, main graph,
/// functions) to `os`.
void printModel(std::ostream &os, const Model &model, const PrintOptions &options = {});
/// The text printModel writes.
std::string toText(const Model &model, const PrintOptions &options = {});
/// Given a graph, Execute: writes it as `name (inputs) => (outputs) <...> {...}`.
void printGraph(std::ostream &os, const Graph &graph, const PrintOptions &options = {});
/// Given a node, Execute: writes it as one statement, e.g. `[n] y = Op <a = 1> (x)`
/// (subgraph attributes span several lines). No trailing newline.
void printNode(std::ostream &os, const Node &node, const PrintOptions &options = {});
/// Given a type, Execute: writes it as `float[N,3]`, `seq(int64)`...
void printType(std::ostream &os, const Type &type);
std::string typeToText(const Type &type);

/// Tables shared by the printer and frontend/TextParser.
namespace textsyntax {

/// The message whose field numbers an ExplicitFields set uses.
enum class FieldSet { Model, OperatorSetId, Graph, Node, ValueInfo, Tensor, Attribute, Function, TensorAnnotation };

/// The proto field name of `number` in `set`, or "" when the number is not a field.
std::string_view explicitFieldName(FieldSet set, unsigned number);
/// Inverse of explicitFieldName.
std::optional<unsigned> explicitFieldNumber(FieldSet set, std::string_view name);

/// ExplicitFields bits that the text implies because the field is written:
/// an attribute's own value field when it holds the default (`axis = 0`), an
/// opset entry's domain when "" and version when 0. An `explicit:` key is
/// printed only when the bits differ from these.
ExplicitFields impliedExplicitFields(const Attribute &a);
ExplicitFields impliedExplicitFields(const OpsetId &o);

/// Whether `s` is an identifier: [A-Za-z_][A-Za-z0-9_]*.
bool isIdentifier(std::string_view s);
/// Words with a meaning in type or value position (type names, `nan`, `none`...);
/// a value named like one is printed quoted.
bool isReservedWord(std::string_view s);

/// `int`, `floats`, `graph`... (the attribute-type names of the syntax); a number for unknown kinds.
std::string attrKindName(AttrKind kind);
std::optional<AttrKind> parseAttrKindName(std::string_view name);

/// Appends `s` as a double-quoted string literal with C-style escapes (quote,
/// backslash, \n \t \r, \xNN for control bytes and bytes that are not valid UTF-8).
void appendQuoted(std::string &out, std::string_view s);

} // namespace textsyntax
} // namespace onnxslim
