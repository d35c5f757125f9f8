//===- tests/shape/ShapeTestUtil.h - Helpers for shape inference tests ----===//
//
// Parse a model from ONNX text, run inference, and read a value's type back
// as text (`float[batch,3,?]`, `none` when untyped) for compact assertions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/TextParser.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/ShapeInference.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace onnxslim::testing {

/// Parses `text` (a whole model); fails the test on a parse error.
inline std::unique_ptr<Model> parseModel(const std::string &text) {
  std::string error;
  std::unique_ptr<Model> m = parseModelText(text, error, "test");
  EXPECT_TRUE(m) << error;
  return m;
}

/// The value named `name` in `g` or any subgraph (node results and inputs).
inline Value *findValue(const Graph &g, const std::string &name) {
  for (Value *v : g.inputs())
    if (v->name() == name)
      return v;
  for (Value *v : g.initializers())
    if (v->name() == name)
      return v;
  for (Node *n : g.nodes()) {
    for (Value *v : n->results())
      if (v && v->name() == name)
        return v;
    for (Graph *sub : n->subgraphs())
      if (Value *v = findValue(*sub, name))
        return v;
  }
  return nullptr;
}

/// The node producing `name`.
inline Node *findNode(const Graph &g, const std::string &name) {
  Value *v = findValue(g, name);
  return v ? v->definingNode() : nullptr;
}

inline std::string typeText(const std::optional<Type> &t) { return t ? typeToText(*t) : "none"; }

/// The type of value `name` as text, or `missing` when no such value.
inline std::string typeOf(const Model &m, const std::string &name) {
  Value *v = findValue(*m.graph(), name);
  return v ? typeText(v->type()) : "missing";
}

/// A parsed model plus the result of inferring it.
struct Inferred {
  std::unique_ptr<Model> model;
  ShapeInferenceResult result;
  std::string type(const std::string &name) const {
    return model ? typeOf(*model, name) : "no model";
  }
  bool warned(const std::string &needle) const {
    for (const std::string &w : result.warnings)
      if (w.find(needle) != std::string::npos)
        return true;
    return false;
  }
  std::string warnings() const {
    std::string s;
    for (const std::string &w : result.warnings)
      s += w + "\n";
    return s;
  }
};

inline Inferred infer(const std::string &text, const ShapeInferenceOptions &options = {}) {
  Inferred r;
  r.model = parseModel(text);
  if (r.model)
    r.result = inferShapes(*r.model, options);
  return r;
}

/// `<ir_version: 8, opset_import: ["" : N]>` followed by the graph text.
inline std::string withOpset(int opset, const std::string &graph) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + graph;
}

} // namespace onnxslim::testing
