//===- transforms/ShapeInferencePass.cpp - Shapes in the pipeline ---------===//
//
// infer-shapes: runs ir/ShapeInference over the whole model (every
// subgraph) and writes the inferred types into the values. Existing types
// are only refined, never replaced, user symbol names are kept and no name
// is invented. With `value-info=true` every newly typed node result also
// (inferred now or earlier) gets a value_info entry, so the written model
// carries the types.
// Warnings (malformed nodes) print under --debug-only=infer-shapes and are
// counted. The pass reports a change when some value's type changed.
//
//===----------------------------------------------------------------------===//
#include "transforms/ShapeInferencePass.h"

#include "ir/IR.h"
#include "ir/ShapeInference.h"
#include "transforms/Pass.h"
#include "transforms/Passes.h"

#include <charconv>

namespace onnxslim {

bool parseInputShapeFlag(std::string_view text, std::string &name, Shape &shape, std::string &error) {
  size_t colon = text.find_last_of(":="); // NAME:dims or NAME=dims (the dims hold neither)
  if (colon == std::string_view::npos || colon == 0) {
    error = "expected NAME:d0,d1,... (got '" + std::string(text) + "')";
    return false;
  }
  name = std::string(text.substr(0, colon));
  shape.clear();
  std::string_view dims = text.substr(colon + 1);
  if (dims.empty())
    return true; // a scalar
  while (true) {
    size_t comma = dims.find(',');
    std::string_view d = dims.substr(0, comma);
    if (d.empty()) {
      error = "empty dim in '" + std::string(text) + "'";
      return false;
    }
    if (d == "?") {
      shape.push_back(Dim::unknown());
    } else if (d[0] >= '0' && d[0] <= '9') {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
      if (ec != std::errc() || ptr != d.data() + d.size()) {
        error = "bad dim '" + std::string(d) + "' in '" + std::string(text) + "'";
        return false;
      }
      shape.push_back(Dim::value(v));
    } else {
      shape.push_back(Dim::symbol(std::string(d)));
    }
    if (comma == std::string_view::npos)
      break;
    dims = dims.substr(comma + 1);
  }
  return true;
}

bool applyInputShapes(Model &model, const std::map<std::string, Shape> &shapes, std::string &error) {
  Graph *g = model.graph();
  std::vector<std::pair<Value *, const Shape *>> todo;
  for (const auto &[name, shape] : shapes) {
    Value *input = nullptr;
    if (g)
      for (Value *v : g->inputs())
        if (v->name() == name)
          input = v;
    if (!input) {
      std::string names;
      if (g)
        for (Value *v : g->inputs())
          if (!v->isInitializer())
            names += (names.empty() ? "" : ", ") + v->name();
      error = "{option:inputShapes}: no input '" + name + "' (inputs: " + names + ")";
      return false;
    }
    if (input->type() && !input->type()->isTensor()) {
      error = "{option:inputShapes}: input '" + name + "' is not a tensor";
      return false;
    }
    todo.emplace_back(input, &shape);
  }
  for (auto [input, shape] : todo) {
    Type t = input->type() ? *input->type() : Type::tensor(DataType::Undefined);
    if (!input->type())
      t.hasElemType = false;
    t.shape() = *shape;
    input->setType(std::move(t));
  }
  return true;
}

namespace {

/// Whether `t` says something worth a value_info entry.
bool informative(const Type &t) {
  if (t.kind() == Type::Kind::Empty)
    return false;
  if (t.isTensor())
    return t.hasElemType && t.elemType() != DataType::Undefined;
  return true;
}

bool isOutputOf(const Value &v, const Graph &g) {
  for (Use *u : v.uses())
    if (u->isGraphOutput() && u->ownerGraph() == &g)
      return true;
  return false;
}

size_t recordGraph(Graph &g) {
  size_t added = 0;
  for (Node *n : g.nodes()) {
    for (size_t i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      if (r && r->type() && r->valueInfoOrder == Value::kNoValueInfo && informative(*r->type()) &&
          !isOutputOf(*r, g)) {
        r->valueInfoOrder = g.nextValueInfoOrder();
        ++added;
      }
    }
    for (Graph *sg : n->subgraphs())
      added += recordGraph(*sg);
  }
  return added;
}

size_t dropGraph(Graph &g) {
  size_t dropped = 0;
  for (Node *n : g.nodes()) {
    for (size_t i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      if (r && r->type() && r->valueInfoOrder == Value::kNoValueInfo) {
        r->setType(std::nullopt);
        ++dropped;
      }
    }
    for (Graph *sg : n->subgraphs())
      dropped += dropGraph(*sg);
  }
  return dropped;
}

} // namespace

size_t dropUnrecordedTypes(Model &model) { return model.graph() ? dropGraph(*model.graph()) : 0; }

size_t recordValueInfo(Model &model) { return model.graph() ? recordGraph(*model.graph()) : 0; }

size_t inferAndRecordValueInfo(Model &model) {
  ShapeInferenceOptions opts;
  opts.addValueInfo = true;
  inferShapes(model, opts);
  return recordValueInfo(model);
}

namespace {

class InferShapesPass : public Pass {
public:
  /// Types only: no value changes.
  bool isExactByConstruction() const override { return true; }
  std::string_view name() const override { return "infer-shapes"; }
  std::string_view description() const override {
    return "Infer element types and (symbolic) shapes of every value; value-info=true also records them";
  }

  bool setOption(std::string_view key, std::string_view value, std::string &error) override {
    if (key != "value-info")
      return Pass::setOption(key, value, error);
    if (value != "true" && value != "false") {
      error = "value-info: expected true or false";
      return false;
    }
    valueInfo_ = value == "true";
    return true;
  }
  std::string optionsText() const override { return valueInfo_ ? "value-info=true" : ""; }

  bool run(Model &model, PassContext &context) override {
    if (!model.graph())
      return false;
    ShapeInferenceOptions opts;
    opts.addValueInfo = valueInfo_;
    ShapeInferenceResult r = inferShapes(model, opts);
    context.counter("values-typed", "Values whose type was set or refined") += r.valuesTyped;
    size_t recorded = valueInfo_ ? recordValueInfo(model) : 0;
    context.counter("value-info", "value_info entries added") += recorded;
    context.counter("warnings", "Nodes inference could not type (malformed)") += r.warnings.size();
    if (context.isDebugEnabled())
      for (const std::string &w : r.warnings)
        context.debugStream() << "[infer-shapes] " << w << "\n";
    return r.valuesTyped != 0 || recorded != 0;
  }

private:
  bool valueInfo_ = false;
};

} // namespace

std::unique_ptr<Pass> createInferShapesPass() { return std::make_unique<InferShapesPass>(); }

} // namespace onnxslim
