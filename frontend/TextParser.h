//===- frontend/TextParser.h - ONNX textual syntax -> IR -------*- C++ -*-===//
//
// Parses ONNX's textual syntax (onnx/docs/Syntax.md), including the
// annotation extensions that ir/Printer writes (docs/TextFormat.md), into
// the IR. Text printed by ir/Printer parses back to an IR that
// ir/Equivalence finds equal to the printed one. Names resolve with the
// binary loader's scoping rules: a node sees the values defined before it in
// its graph and in enclosing graphs (a use from a subgraph is a real use of
// the outer value); a name that names nothing is an error naming the node
// and its op. Errors read `source:line:col: message`; malformed text never
// crashes the parser.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace onnxslim {

class Graph;
class Model;

/// Given text, Execute: parses a whole model (`<header> graph functions...`),
/// Result: the model (with its name table filled), or null with `error` set.
std::unique_ptr<Model> parseModelText(std::string_view text, std::string &error,
                                      const std::string &sourceName = "<text>");

/// Given text, Execute: parses one graph (`name (inputs) => (outputs) {...}`),
/// Result: a free-standing graph (no model), or null with `error` set.
std::unique_ptr<Graph> parseGraphText(std::string_view text, std::string &error,
                                      const std::string &sourceName = "<text>");

} // namespace onnxslim
