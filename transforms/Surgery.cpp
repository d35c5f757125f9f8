//===- transforms/Surgery.cpp - Cutting a model at named values -----------===//
//
// Before (cutInputs {"h"}):               After:
//   graph (x) => (y) {                      graph (h) => (y) {
//     h = Relu(x)                             y = Sigmoid(h)
//     y = Sigmoid(h)                        }
//   }
//
// The new input takes the value's name and type; uses of the old value
// (graph outputs included) move to it; the producers left without uses are
// swept by eliminate-dead-nodes, after which an old input still in use is an
// error naming the node that reads it.
//
//===----------------------------------------------------------------------===//
#include "transforms/Surgery.h"

#include "ir/IR.h"
#include "ir/ShapeInference.h"
#include "transforms/Pass.h"
#include "transforms/Passes.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace onnxslim {

namespace {

struct ValueSpec {
  std::string name;
  std::optional<DataType> dtype;
};

std::optional<DataType> parseDtype(std::string_view text) {
  if (text == "fp32" || text == "float32")
    return DataType::Float;
  if (text == "fp16")
    return DataType::Float16;
  if (text == "fp64" || text == "float64")
    return DataType::Double;
  if (text == "bf16")
    return DataType::BFloat16;
  return parseDataTypeName(text);
}

/// Given "NAME" or "NAME:dtype" (the dtype after the last ':'; resolveSpecs
/// first tries the whole text as a name, for TensorFlow's "x:0"), Result:
/// the spec, or false with `error`.
bool parseSpec(const std::string &text, ValueSpec &spec, std::string &error) {
  size_t colon = text.rfind(':');
  spec.name = text.substr(0, colon);
  if (colon != std::string::npos) {
    spec.dtype = parseDtype(text.substr(colon + 1));
    if (!spec.dtype) {
      error = "'" + text + "': unknown dtype '" + text.substr(colon + 1) +
              "' (float32, float16, int64, ... as ONNX names them; fp32, fp16)";
      return false;
    }
  }
  if (spec.name.empty()) {
    error = "'" + text + "': empty value name";
    return false;
  }
  return true;
}

/// The main-graph value named `name`, or null.
Value *findValue(Graph &graph, const std::string &name) {
  for (Value *v : graph.inputs())
    if (v->name() == name)
      return v;
  for (Value *v : graph.initializers())
    if (v->name() == name)
      return v;
  for (Node *n : graph.nodes())
    for (Value *r : n->results())
      if (r && r->name() == name)
        return r;
  return nullptr;
}

std::string describe(const Node &n) {
  return "node '" + n.name() + "' (" + (n.isDefaultDomain() ? "" : n.domain() + ".") + n.opType() + ")";
}

/// The type a cut value gets: the model's, checked against the given dtype.
bool typeFor(const Value &v, const ValueSpec &spec, std::optional<Type> &type, std::string &error) {
  type = v.type();
  if (type && type->isTensor() && type->elemType() != DataType::Undefined) {
    if (spec.dtype && *spec.dtype != type->elemType()) {
      error = "'" + spec.name + "' is " + dataTypeName(type->elemType()) + ", not " + dataTypeName(*spec.dtype) +
              " (a dtype here must be the value's own; OnnxSlim relabels it without a Cast, which leaves declared "
              "types that contradict the computation: convert types with --dtype / dtype= instead)";
      return false;
    }
    return true;
  }
  if (!spec.dtype) {
    error = "the type of '" + spec.name + "' is unknown: give it as " + spec.name + ":dtype";
    return false;
  }
  type = Type::tensor(*spec.dtype, std::nullopt);
  return true;
}

/// A named value and the type it is cut with.
struct Resolved {
  ValueSpec spec;
  Value *value = nullptr;
  std::optional<Type> type;
};

/// Given specs and the option they came from (for messages), Result: each
/// spec's main-graph value and type, or false with `error` (a bad spec, a
/// name given twice or not found, a dtype that does not match).
bool resolveSpecs(Graph &graph, const std::vector<std::string> &specs, const std::string &option,
                  std::vector<Resolved> &out, std::string &error) {
  std::set<std::string> seen;
  bool inferred = false;
  for (const std::string &text : specs) {
    Resolved r;
    if (findValue(graph, text))
      r.spec.name = text; // "x:0" names a value: no dtype
    else if (!parseSpec(text, r.spec, error))
      return false;
    if (!seen.insert(r.spec.name).second) {
      error = option + ": '" + r.spec.name + "' is named twice";
      return false;
    }
    r.value = findValue(graph, r.spec.name);
    if (!r.value) {
      error = option + ": the main graph has no value named '" + r.spec.name + "'";
      return false;
    }
    if (!r.value->type() && !inferred && graph.model()) {
      // The model does not say: infer types once, in memory only (nothing
      // extra is written).
      ShapeInferenceOptions options;
      options.addValueInfo = false;
      inferShapes(*graph.model(), options);
      inferred = true;
    }
    if (!typeFor(*r.value, r.spec, r.type, error)) {
      error = option + ": " + error;
      return false;
    }
    out.push_back(std::move(r));
  }
  return true;
}

bool sweepDeadNodes(Model &model) {
  PassContext context;
  std::ostringstream quiet;
  context.setDebugStream(quiet);
  return createEliminateDeadNodesPass()->run(model, context);
}

} // namespace

bool cutInputs(Model &model, const std::vector<std::string> &specs, std::string &error) {
  Graph *graph = model.graph();
  if (!graph) {
    error = "the model has no graph";
    return false;
  }
  std::vector<Resolved> named;
  if (!resolveSpecs(*graph, specs, "{option:inputs}", named, error))
    return false;
  std::vector<Value *> newInputs;
  for (Resolved &r : named) {
    Value *v = r.value;
    if (v->isGraphInput() && !v->isInitializer()) {
      newInputs.push_back(v);
      continue;
    }
    // The producer's result (or the initializer) gives way to a new input
    // of the same name and type.
    v->setName(r.spec.name + ".cut");
    Value *in = graph->addInput(r.spec.name, r.type);
    v->replaceAllUsesWith(in);
    newInputs.push_back(in);
  }
  sweepDeadNodes(model);
  // The old inputs not named must be unused now; then they go.
  std::vector<Value *> old = graph->inputs();
  for (Value *v : old) {
    if (v->isInitializer() || std::find(newInputs.begin(), newInputs.end(), v) != newInputs.end())
      continue;
    if (v->hasUses()) {
      const Use &u = **v->uses().begin();
      error = "{option:inputs}: input '" + v->name() + "' is not among the new inputs but is still read by " +
              (u.owner() ? describe(*u.owner()) : std::string("the graph's outputs")) +
              ", which an output depends on";
      return false;
    }
    graph->eraseInput(v);
  }
  // The named inputs, in the given order, before initializer-backed ones.
  std::vector<Value *> order = newInputs;
  for (Value *v : graph->inputs())
    if (std::find(order.begin(), order.end(), v) == order.end())
      order.push_back(v);
  graph->reorderInputs(order);
  return true;
}

bool setOutputs(Model &model, const std::vector<std::string> &specs, std::string &error) {
  Graph *graph = model.graph();
  if (!graph) {
    error = "the model has no graph";
    return false;
  }
  std::vector<Resolved> outputs;
  if (!resolveSpecs(*graph, specs, "{option:outputs}", outputs, error))
    return false;
  while (graph->numOutputs())
    graph->eraseOutput(graph->numOutputs() - 1);
  for (Resolved &r : outputs)
    graph->addOutput(r.value, std::move(r.type));
  return true;
}

bool dropOutputs(Model &model, const std::vector<std::string> &names, std::string &error) {
  Graph *graph = model.graph();
  if (!graph) {
    error = "the model has no graph";
    return false;
  }
  for (const std::string &name : names) {
    size_t i = 0;
    while (i < graph->numOutputs() && graph->output(i)->name() != name)
      ++i;
    if (i == graph->numOutputs()) {
      error = "{option:dropOutputs}: '" + name + "' is not an output of the model";
      return false;
    }
    if (graph->numOutputs() == 1) {
      error = "{option:dropOutputs}: '" + name + "' is the model's last output";
      return false;
    }
    graph->eraseOutput(i);
  }
  return true;
}

} // namespace onnxslim
