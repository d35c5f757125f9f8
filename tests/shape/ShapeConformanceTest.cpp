//===- tests/shape/ShapeConformanceTest.cpp - Inference against reality ---===//
//
// Cross-checks shape inference against the ONNX conformance suite and the
// real models. For every conformance model.onnx: intermediate types (node
// results and subgraph inputs) are stripped, types are inferred, and each
// main-graph output's inferred type is compared with the output's declared
// type and with the shape and dtype of test_data_set_0/output_N.pb. A known
// inferred dim must equal the real one and a known dtype must match: any
// contradiction fails the test. Counts of fully / partially / not inferred
// outputs are printed. For the real models the fraction of node results
// that end fully typed is printed, and inferred types must agree with the
// model's own value_info.
//
//===----------------------------------------------------------------------===//
#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/ShapeInference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

namespace onnxslim {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> conformanceModels() {
  std::vector<std::string> out;
  for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path dir = fs::path(ONNXSLIM_TESTDATA_DIR) / suite;
    if (!fs::is_directory(dir))
      continue;
    for (const auto &entry : fs::directory_iterator(dir))
      if (fs::exists(entry.path() / "model.onnx"))
        out.push_back((entry.path() / "model.onnx").string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Drops the type of every node result and subgraph input, in every graph.
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

std::string shapeText(const std::optional<Shape> &s) {
  if (!s)
    return "[*]";
  std::string out = "[";
  for (size_t i = 0; i < s->size(); ++i) {
    const Dim &d = (*s)[i];
    out += (i ? "," : "") + (d.isValue()    ? std::to_string(d.getValue())
                             : d.isSymbol() ? d.getSymbol()
                                            : "?");
  }
  return out + "]";
}

std::string typeText(const Type &t) {
  switch (t.kind()) {
  case Type::Kind::Tensor: return dataTypeName(t.elemType()) + shapeText(t.shape());
  case Type::Kind::Sequence: return "seq(" + (t.inner() ? typeText(*t.inner()) : "?") + ")";
  case Type::Kind::Optional: return "optional(" + (t.inner() ? typeText(*t.inner()) : "?") + ")";
  default: return "?";
  }
}

enum class Knowledge { Full, Partial, None };

Knowledge classify(const std::optional<Type> &t) {
  if (!t || t->kind() == Type::Kind::Empty)
    return Knowledge::None;
  if ((t->kind() == Type::Kind::Sequence || t->kind() == Type::Kind::Optional) && t->inner())
    return classify(*t->inner()) == Knowledge::Full ? Knowledge::Full : Knowledge::Partial;
  if (!t->isTensor())
    return Knowledge::Partial;
  if (!t->shape() || t->elemType() == DataType::Undefined)
    return Knowledge::Partial;
  for (const Dim &d : *t->shape())
    if (!d.isValue())
      return Knowledge::Partial;
  return Knowledge::Full;
}

/// Why `inferred` contradicts `actual` (dims and dtype of a real tensor), or "".
std::string contradiction(const Type &inferred, const Tensor &actual) {
  if (!inferred.isTensor())
    return "inferred a non-tensor type for a tensor output";
  // ONNX 1.12's test data stores bfloat16 outputs as uint16 tensors.
  bool bf16Quirk = inferred.elemType() == DataType::BFloat16 && actual.dtype() == DataType::UInt16;
  if (inferred.elemType() != DataType::Undefined && inferred.elemType() != actual.dtype() &&
      !bf16Quirk)
    return "dtype " + dataTypeName(inferred.elemType()) + " vs actual " +
           dataTypeName(actual.dtype());
  if (!inferred.shape())
    return "";
  const Shape &s = *inferred.shape();
  std::string actualText = "[";
  for (size_t i = 0; i < actual.dims().size(); ++i)
    actualText += (i ? "," : "") + std::to_string(actual.dims()[i]);
  actualText += "]";
  if (s.size() != actual.dims().size())
    return "shape " + shapeText(s) + " vs actual " + actualText;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i].isValue() && s[i].getValue() != actual.dims()[i])
      return "shape " + shapeText(s) + " vs actual " + actualText;
  return "";
}

/// Why `inferred` contradicts the declared type, or "".
std::string contradictsDeclared(const Type &inferred, const Type &declared) {
  if (inferred.kind() != declared.kind())
    return "kind differs from the declared type";
  if (!inferred.isTensor())
    return "";
  if (declared.hasElemType && declared.elemType() != DataType::Undefined &&
      inferred.elemType() != DataType::Undefined && declared.elemType() != inferred.elemType())
    return "dtype " + dataTypeName(inferred.elemType()) + " vs declared " +
           dataTypeName(declared.elemType());
  if (inferred.shape() && declared.shape()) {
    if (inferred.shape()->size() != declared.shape()->size())
      return "shape " + shapeText(inferred.shape()) + " vs declared " + shapeText(declared.shape());
    for (size_t i = 0; i < inferred.shape()->size(); ++i) {
      const Dim &a = (*inferred.shape())[i], &b = (*declared.shape())[i];
      if (a.isValue() && b.isValue() && a.getValue() != b.getValue())
        return "shape " + shapeText(inferred.shape()) + " vs declared " +
               shapeText(declared.shape());
    }
  }
  return "";
}

TEST(ShapeConformance, InferredOutputsMatchRealOutputs) {
  std::vector<std::string> models = conformanceModels();
  if (models.empty())
    FAIL() << "no conformance data under " << ONNXSLIM_TESTDATA_DIR << ": run scripts/setup.sh (installs libonnx-testdata)";
  size_t loaded = 0, outputs = 0, full = 0, partial = 0, none = 0, contradictions = 0;
  size_t withWarnings = 0, fullyInferredModels = 0;
  std::map<std::string, size_t> untypedByOp;
  for (const std::string &path : models) {
    std::string error;
    std::unique_ptr<Model> model = loadModel(path, error);
    if (!model) {
      ADD_FAILURE() << path << ": " << error;
      continue;
    }
    ++loaded;
    Graph &g = *model->graph();
    stripIntermediateTypes(g);
    ShapeInferenceResult r = inferShapes(*model);
    if (!r.warnings.empty()) {
      ++withWarnings;
      for (const std::string &w : r.warnings)
        std::cout << "warning: " << path << ": " << w << "\n";
    }
    fs::path dataDir = fs::path(path).parent_path() / "test_data_set_0";
    bool allFull = true;
    for (size_t i = 0; i < g.numOutputs(); ++i) {
      ++outputs;
      const Value *v = g.output(i);
      const std::optional<Type> &inferred = v->type();
      Knowledge k = classify(inferred);
      full += k == Knowledge::Full;
      partial += k == Knowledge::Partial;
      none += k == Knowledge::None;
      allFull = allFull && k == Knowledge::Full;
      if (k != Knowledge::Full && v->definingNode())
        ++untypedByOp[v->definingNode()->opType()];
      if (k != Knowledge::Full && std::getenv("SHAPE_VERBOSE"))
        std::cout << "not fully known: " << path << ": '" << v->name() << "' "
                  << (inferred ? typeText(*inferred) : "none") << "\n";
      if (!inferred)
        continue;
      if (const auto &declared = g.outputSlots()[i].type) {
        std::string why = contradictsDeclared(*inferred, *declared);
        if (!why.empty()) {
          ++contradictions;
          ADD_FAILURE() << path << ": output '" << v->name() << "': " << why;
        }
      }
      fs::path expected = dataDir / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(expected) || !inferred->isTensor())
        continue;
      std::string terr;
      TensorPtr actual = loadTensorFile(expected.string(), terr);
      if (!actual)
        continue; // a sequence or optional output: not a TensorProto
      std::string why = contradiction(*inferred, *actual);
      if (!why.empty()) {
        ++contradictions;
        ADD_FAILURE() << path << ": output '" << v->name() << "': " << why;
      }
    }
    fullyInferredModels += allFull;
  }
  std::cout << "conformance shape inference: " << loaded << " models, " << outputs
            << " outputs: " << full << " fully known, " << partial << " partially, " << none
            << " unknown; " << contradictions << " contradictions; " << fullyInferredModels
            << " models with every output fully known; " << withWarnings
            << " models with warnings\n";
  std::cout << "outputs not fully known, by producing op:";
  for (const auto &[op, n] : untypedByOp)
    std::cout << " " << op << "=" << n;
  std::cout << "\n";
  EXPECT_EQ(contradictions, 0u);
  EXPECT_EQ(loaded, models.size());
}

bool fullyTyped(const std::optional<Type> &t) { return classify(t) == Knowledge::Full; }

/// Fully typed, counting the model's own symbols (batch, sequence) as known.
bool typedUpToSymbols(const std::optional<Type> &t) {
  if (!t || !t->isTensor() || !t->shape() || t->elemType() == DataType::Undefined)
    return false;
  for (const Dim &d : *t->shape())
    if (d.isUnknown())
      return false;
  return true;
}

void collectResults(const Graph &g, std::vector<Value *> &out) {
  for (Node *n : g.nodes()) {
    for (Value *v : n->results())
      if (v)
        out.push_back(v);
    for (Graph *sub : n->subgraphs())
      collectResults(*sub, out);
  }
}

TEST(ShapeConformance, RealModels) {
  fs::path dir = ONNXSLIM_MODEL_CACHE;
  if (!fs::is_directory(dir))
    FAIL() << "no real models in " << dir << ": run scripts/fetch-models.sh";
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".onnx")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty())
    FAIL() << "no real models in " << dir << ": run scripts/fetch-models.sh";
  for (const fs::path &file : files) {
    std::string error;
    std::unique_ptr<Model> model = loadModel(file.string(), error);
    ASSERT_TRUE(model) << error;
    // The model's own value_info, to check agreement after stripping.
    std::vector<Value *> values;
    collectResults(*model->graph(), values);
    std::map<const Value *, Type> declared;
    for (Value *v : values)
      if (v->type())
        declared.emplace(v, *v->type());
    stripIntermediateTypes(*model->graph());
    ShapeInferenceResult r = inferShapes(*model);
    size_t full = 0, symbolic = 0, typed = 0, ranked = 0, disagree = 0;
    for (Value *v : values) {
      full += fullyTyped(v->type());
      ranked += v->type() && (!v->type()->isTensor() || v->type()->shape().has_value());
      symbolic += typedUpToSymbols(v->type());
      typed += v->type().has_value();
      auto it = declared.find(v);
      if (it != declared.end() && v->type()) {
        std::string why = contradictsDeclared(*v->type(), it->second);
        if (!why.empty()) {
          ++disagree;
          ADD_FAILURE() << file.filename() << ": '" << v->name() << "': " << why;
        }
      }
    }
    for (const std::string &w : r.warnings)
      std::cout << "warning: " << file.filename().string() << ": " << w << "\n";
    std::cout << file.filename().string() << ": " << values.size() << " node results, " << typed
              << " typed, " << ranked << " with known rank, " << full << " fully static ("
              << (values.empty() ? 0 : 100.0 * full / values.size()) << "%), " << symbolic
              << " fully known up to model symbols ("
              << (values.empty() ? 0 : 100.0 * symbolic / values.size()) << "%); "
              << declared.size() << " had value_info, " << disagree << " disagreements; "
              << r.warnings.size() << " warnings\n";
    EXPECT_EQ(disagree, 0u);
    EXPECT_TRUE(r.warnings.empty());
  }
}

} // namespace
} // namespace onnxslim
