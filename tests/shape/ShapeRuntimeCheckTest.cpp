//===- tests/shape/ShapeRuntimeCheckTest.cpp - Intermediates vs execution -===//
//
// A stronger soundness check than comparing graph outputs: every node result
// of the main graph is made a graph output, the model is run by the
// interpreter (conformance models on test_data_set_0's inputs, real models
// on seeded inputs from tests/models/models.json), and each value's inferred
// type is compared with the tensor it actually held. A known dim must equal
// the real one, a known rank and dtype must match. Models the interpreter
// cannot run are skipped (and counted).
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/ShapeInference.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

namespace onnxslim {
namespace {

namespace fs = std::filesystem;

void stripIntermediateTypes(Graph &g) {
  for (Node *n : g.nodes()) {
    for (Value *v : n->results())
      if (v)
        v->setType(std::nullopt);
    for (Graph *sub : n->subgraphs()) {
      for (Value *in : sub->inputs())
        in->setType(std::nullopt);
      stripIntermediateTypes(*sub);
    }
  }
}

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

using Bindings = std::map<std::string, int64_t>;

/// The sizes the model's symbols took in this run, read off the inputs.
Bindings bindSymbols(const Graph &g, const std::vector<rt::RtValue> &inputs) {
  Bindings b;
  for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) {
    const auto &t = g.input(i)->type();
    if (!t || !t->shape() || inputs[i].kind != rt::RtValue::Kind::Tensor || !inputs[i].tensor)
      continue;
    const auto &dims = inputs[i].tensor->dims();
    if (dims.size() != t->shape()->size())
      continue;
    for (size_t d = 0; d < dims.size(); ++d)
      if ((*t->shape())[d].isSymbol())
        b.emplace((*t->shape())[d].getSymbol(), dims[d]);
  }
  return b;
}

/// Why the inferred type of `v` contradicts the tensor it held, or "". A
/// symbol bound by the inputs must have the size it had there.
std::string contradiction(const Type &t, const Tensor &actual, const Bindings &symbols) {
  if (!t.isTensor())
    return "inferred a non-tensor type";
  // ONNX 1.12's test data stores bfloat16 tensors as uint16.
  bool bf16 = t.elemType() == DataType::BFloat16 && actual.dtype() == DataType::UInt16;
  if (t.elemType() != DataType::Undefined && t.elemType() != actual.dtype() && !bf16)
    return "dtype " + dataTypeName(t.elemType()) + " vs actual " + dataTypeName(actual.dtype());
  if (!t.shape())
    return "";
  const Shape &s = *t.shape();
  bool bad = s.size() != actual.dims().size();
  for (size_t i = 0; !bad && i < s.size(); ++i) {
    bad = s[i].isValue() && s[i].getValue() != actual.dims()[i];
    if (s[i].isSymbol()) {
      auto it = symbols.find(s[i].getSymbol());
      bad = it != symbols.end() && it->second != actual.dims()[i];
    }
  }
  return bad ? "shape vs actual " + dimsText(actual.dims()) : "";
}

struct CheckStats {
  size_t models = 0, ran = 0, values = 0, checked = 0, contradictions = 0;
};

/// Infers `model`, runs it with `inputs`, and compares every main-graph
/// node result with its runtime tensor. Returns false when it cannot run.
bool checkModel(Model &model, const std::vector<rt::RtValue> &inputs, const std::string &name,
                CheckStats &stats, bool overrideInputShapes = false) {
  Graph &g = *model.graph();
  stripIntermediateTypes(g);
  ShapeInferenceOptions options;
  if (overrideInputShapes) // as `--input-shapes` would, with the run's sizes
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i)
      if (inputs[i].kind == rt::RtValue::Kind::Tensor && inputs[i].tensor) {
        Shape shape;
        for (int64_t d : inputs[i].tensor->dims())
          shape.push_back(Dim::value(d));
        options.inputShapes[g.input(i)->name()] = shape;
      }
  ShapeInferenceResult inferred = inferShapes(model, options);
  if (overrideInputShapes)
    for (const std::string &w : inferred.warnings)
      std::cout << name << " at the run's input shapes: " << w << "\n";
  std::vector<Value *> probes;
  for (Node *n : g.nodes())
    for (Value *v : n->results())
      if (v && !v->isGraphOutput())
        probes.push_back(v);
  size_t firstProbe = g.numOutputs();
  for (Value *v : probes)
    g.addOutput(v);
  rt::RunOptions opts;
  opts.checkInputShapes = false;
  rt::Interpreter interp(model, rt::OpRegistry::builtin(), opts);
  std::vector<rt::RtValue> outputs;
  if (!interp.run(g, inputs, outputs).ok())
    return false;
  Bindings symbols = bindSymbols(g, inputs);
  ++stats.ran;
  for (size_t i = 0; i < g.numOutputs() && i < outputs.size(); ++i) {
    const Value *v = g.output(i);
    ++stats.values;
    if (!v->type() || outputs[i].kind != rt::RtValue::Kind::Tensor || !outputs[i].tensor)
      continue;
    ++stats.checked;
    std::string why = contradiction(*v->type(), *outputs[i].tensor, symbols);
    if (!why.empty()) {
      ++stats.contradictions;
      ADD_FAILURE() << name << ": " << (i >= firstProbe ? "intermediate" : "output") << " '"
                    << v->name() << "': " << why;
    }
  }
  return true;
}

TEST(ShapeRuntimeCheck, ConformanceIntermediates) {
  std::vector<std::string> models;
  for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path dir = fs::path(ONNXSLIM_TESTDATA_DIR) / suite;
    if (fs::is_directory(dir))
      for (const auto &entry : fs::directory_iterator(dir))
        if (fs::exists(entry.path() / "model.onnx"))
          models.push_back(entry.path().string());
  }
  if (models.empty())
    FAIL() << "no conformance data" << ": run scripts/setup.sh (installs libonnx-testdata)";
  std::sort(models.begin(), models.end());
  CheckStats stats;
  for (const std::string &dir : models) {
    std::string error;
    std::unique_ptr<Model> model = loadModel(dir + "/model.onnx", error);
    if (!model)
      continue;
    ++stats.models;
    std::vector<rt::RtValue> inputs;
    // Sequence and optional inputs are not TensorProtos: skip those models.
    bool ok = std::all_of(model->graph()->inputs().begin(), model->graph()->inputs().end(),
                          [](const Value *in) { return !in->type() || in->type()->isTensor(); });
    for (size_t i = 0; ok && i < model->graph()->inputs().size(); ++i) {
      fs::path p = fs::path(dir) / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(p))
        break;
      TensorPtr t = loadTensorFile(p.string(), error);
      if (!t) {
        ok = false; // a sequence or optional input: not a TensorProto
        break;
      }
      inputs.push_back(rt::RtValue::fromTensor(t));
    }
    if (ok)
      checkModel(*model, inputs, dir, stats);
  }
  std::cout << "conformance intermediates: " << stats.models << " models, " << stats.ran
            << " run by the interpreter; " << stats.checked << " typed values checked against "
            << "real tensors; " << stats.contradictions << " contradictions\n";
  EXPECT_EQ(stats.contradictions, 0u);
}

TEST(ShapeRuntimeCheck, RealModelIntermediates) {
  fs::path dir = ONNXSLIM_MODEL_CACHE;
  if (!fs::is_directory(dir))
    FAIL() << "no real models in " << dir << ": run scripts/fetch-models.sh";
  std::string specs = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/models/models.json";
  CheckStats stats;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx")
      continue;
    std::string error;
    std::unique_ptr<Model> model = loadModel(entry.path().string(), error);
    ASSERT_TRUE(model) << error;
    ++stats.models;
    // With the shapes models.json lists, and with every symbolic dim at
    // other sizes (so a symbol inferred in the wrong place shows); each
    // inferred symbolically and with the run's sizes as input shapes.
    for (int pass = 0; pass < 4; ++pass) {
      std::unique_ptr<Model> copy =
          pass == 0 ? std::move(model) : loadModel(entry.path().string(), error);
      ASSERT_TRUE(copy) << error;
      rt::InputOptions opts;
      opts.seed = 7;
      if (pass % 2 == 0) {
        if (!rt::loadInputSpecs(specs, entry.path().stem().string(), opts.specs).ok())
          opts.specs.clear();
      } else {
        opts.defaultDim = 96;
        opts.dims["batch"] = 3;
        opts.dims["sequence"] = 1024;
      }
      std::vector<rt::RtValue> inputs;
      if (!rt::makeInputs(*copy->graph(), opts, inputs).ok())
        continue;
      if (!checkModel(*copy, inputs, entry.path().filename().string(), stats, pass >= 2))
        std::cout << entry.path().filename().string() << ": not run by the interpreter (pass "
                  << pass << ")\n";
    }
  }
  std::cout << "real-model intermediates: " << stats.models << " models, " << stats.ran << " run; "
            << stats.checked << " typed values checked; " << stats.contradictions
            << " contradictions\n";
  EXPECT_EQ(stats.contradictions, 0u);
}

} // namespace
} // namespace onnxslim
