//===- tests/transforms/ModelsTest.cpp - Default pipeline on real inputs --===//
//
// Runs the default pipeline (to its fixed point, --verify-each on) over
//  - every conformance model in /usr/share/libonnx-testdata: the IR verifies
//    after each pass, the interface (input/output names and types) is
//    unchanged, the result saves and loads back, and where the interpreter
//    runs the original on test_data_set_0 the optimized model gives the same
//    outputs;
//  - every fetched real model (.cache/models, inputs from
//    tests/models/models.json): the same checks, outputs compared on seeded
//    inputs, and a table of nodes and initializers before -> after.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Compare.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "transforms/Clone.h"
#include "transforms/PassManager.h"
#include "transforms/Passes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace onnxslim {
namespace {

namespace fs = std::filesystem;

std::string interfaceOf(const Model &m) {
  std::string s;
  const Graph &g = *m.graph();
  for (const Value *v : g.inputs())
    s += "in " + v->name() + ":" + (v->type() ? typeToText(*v->type()) : "?") + "\n";
  for (size_t i = 0; i < g.numOutputs(); ++i) {
    const GraphOutput &o = g.outputSlots()[i];
    s += "out " + o.use.get()->name() + ":" + (o.type ? typeToText(*o.type) : "?") + "\n";
  }
  return s;
}

size_t countNodes(const Graph &g) {
  size_t n = 0;
  g.walk([&](Node *) { ++n; });
  return n;
}

size_t countInitializers(const Graph &g) {
  size_t n = g.initializers().size();
  for (const Node *node : g.nodes())
    for (const Graph *sg : node->subgraphs())
      n += countInitializers(*sg);
  return n;
}

/// Whether outputs of two runs may legitimately differ (random ops).
bool isNondeterministic(const Graph &g) {
  bool random = false;
  g.walk([&](Node *n) {
    const std::string &op = n->opType();
    if (op.rfind("Random", 0) == 0 || op == "Multinomial" || op == "Bernoulli" ||
        (op == "Dropout" && n->numOperands() > 2 && n->operand(2)))
      random = true;
  });
  return random;
}

/// Runs the default pipeline; on failure returns the error.
std::optional<std::string> optimize(Model &model, const PassRegistry &registry) {
  PassManagerOptions options;
  options.verifyEach = true;
  PassManager pm(registry, options);
  std::string error;
  if (!pm.parsePipeline(defaultPipeline(), error))
    return error;
  pm.setMaxRounds(10);
  if (!pm.run(model, error))
    return error;
  if (!pm.report().converged)
    return std::string("the default pipeline did not reach a fixed point in 10 rounds");
  return std::nullopt;
}

/// Runs `model`'s main graph on `inputs`.
rt::Status runModel(const Model &model, const std::vector<rt::RtValue> &inputs, std::vector<rt::RtValue> &outputs) {
  rt::Interpreter interpreter(model);
  return interpreter.run(*model.graph(), inputs, outputs);
}

/// Compares the outputs of `optimized` with those of `reference` on `inputs`.
/// Result: "" when equal, "skip" when the reference cannot run, else the problem.
std::string compareRuns(const Model &reference, const Model &optimized, const std::vector<rt::RtValue> &inputs) {
  std::vector<rt::RtValue> expected, actual;
  if (!runModel(reference, inputs, expected).ok())
    return "skip";
  rt::Status s = runModel(optimized, inputs, actual);
  if (!s.ok())
    return "the optimized model does not run: " + s.message();
  if (actual.size() != expected.size())
    return "output count differs";
  for (size_t i = 0; i < actual.size(); ++i) {
    // Fusions (BatchNormalization folded into weights in double, bias Adds
    // moved into Conv/Gemm) reassociate float arithmetic: up to 1.6e-6
    // relative measured (ppocr_rec); near-zero outputs are judged by atol.
    rt::Comparison c = rt::compareValues(actual[i], expected[i], /*rtol=*/1e-5, /*atol=*/1e-6);
    if (!c.ok)
      return "output " + std::to_string(i) + " differs: " + c.message;
  }
  return "";
}

bool saveAndReload(const Model &model, const std::string &name, std::string &error) {
  std::string path = (fs::temp_directory_path() / ("onnxslim_pipeline_" + std::to_string(::getpid()) + "_" + name + ".onnx")).string();
  bool ok = saveModel(model, path, error);
  if (ok) {
    std::unique_ptr<Model> back = loadModel(path, error);
    ok = back && verify(*back).empty();
    if (back && !ok && error.empty())
      error = "reloaded model does not verify";
  }
  std::error_code ec;
  fs::remove(path, ec);
  return ok;
}

TEST(DefaultPipeline, ConformanceModels) {
  fs::path root(ONNXSLIM_TESTDATA_DIR);
  if (!fs::exists(root))
    FAIL() << "no conformance data at " << root << ": run scripts/setup.sh (installs libonnx-testdata)";
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  size_t models = 0, compared = 0, notRunnable = 0, random = 0, changed = 0;
  std::vector<fs::path> dirs;
  for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"})
    if (fs::exists(root / suite))
      for (const auto &entry : fs::directory_iterator(root / suite))
        if (fs::exists(entry.path() / "model.onnx"))
          dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path &dir : dirs) {
    std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
    SCOPED_TRACE(name);
    std::string error;
    std::unique_ptr<Model> model = loadModel((dir / "model.onnx").string(), error);
    ASSERT_TRUE(model) << error;
    ++models;
    std::unique_ptr<Model> reference = cloneModel(*model);
    ASSERT_TRUE(reference);
    std::string before = interfaceOf(*model);
    size_t nodesBefore = countNodes(*model->graph());
    std::optional<std::string> failure = optimize(*model, registry);
    ASSERT_FALSE(failure) << *failure;
    EXPECT_EQ(interfaceOf(*model), before);
    changed += countNodes(*model->graph()) != nodesBefore;
    EXPECT_TRUE(saveAndReload(*model, dir.filename().string(), error)) << error;

    fs::path data = dir / "test_data_set_0";
    if (!fs::exists(data))
      continue;
    if (isNondeterministic(*reference->graph())) {
      ++random;
      continue;
    }
    // input_i.pb feeds the i-th graph input that has no initializer.
    std::vector<rt::RtValue> inputs(model->graph()->inputs().size());
    bool ok = true;
    for (size_t i = 0, k = 0; i < inputs.size() && ok; ++i) {
      const Value *in = model->graph()->input(i);
      if (in->initializer())
        continue;
      if (!in->type() || !in->type()->isTensor()) {
        ok = false; // sequence/optional inputs are not TensorProto files
        break;
      }
      fs::path file = data / ("input_" + std::to_string(k++) + ".pb");
      if (!fs::exists(file))
        break;
      TensorPtr t = loadTensorFile(file.string(), error);
      ok = t != nullptr;
      if (ok)
        inputs[i] = rt::RtValue::fromTensor(t);
    }
    if (!ok)
      continue;
    std::string result = compareRuns(*reference, *model, inputs);
    if (result == "skip") {
      ++notRunnable;
      continue;
    }
    EXPECT_EQ(result, "");
    ++compared;
  }
  std::printf("conformance: %zu models optimized (%zu changed), outputs compared on %zu, "
              "%zu not runnable by the interpreter, %zu random\n",
              models, changed, compared, notRunnable, random);
  EXPECT_GT(models, 1000u);
}

TEST(DefaultPipeline, RealModels) {
  fs::path cache(ONNXSLIM_MODEL_CACHE);
  std::string specs = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/models/models.json";
  const char *names[] = {"ppocr_det", "ppocr_rec", "ppocr_cls", "vad_legacy", "vad_v5",
                         "face_front", "face_back", "mlsd_tiny", "mlsd_large", "hello_deepa"};
  PassRegistry registry = PassRegistry::withBuiltinPasses();
  size_t found = 0;
  std::printf("%-12s %16s %16s %9s %8s\n", "model", "nodes", "initializers", "time(ms)", "outputs");
  for (const char *name : names) {
    fs::path path = cache / (std::string(name) + ".onnx");
    if (!fs::exists(path))
      continue;
    ++found;
    SCOPED_TRACE(name);
    std::string error;
    std::unique_ptr<Model> model = loadModel(path.string(), error);
    ASSERT_TRUE(model) << error;
    std::unique_ptr<Model> reference = cloneModel(*model);
    std::string before = interfaceOf(*model);
    size_t nodes0 = countNodes(*model->graph()), inits0 = countInitializers(*model->graph());
    auto start = std::chrono::steady_clock::now();
    std::optional<std::string> failure = optimize(*model, registry);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(failure) << *failure;
    EXPECT_EQ(interfaceOf(*model), before);
    EXPECT_TRUE(saveAndReload(*model, name, error)) << error;

    std::vector<rt::InputSpec> inputSpecs;
    rt::InputOptions io;
    io.seed = 7;
    if (rt::loadInputSpecs(specs, name, inputSpecs).ok())
      io.specs = inputSpecs;
    std::vector<rt::RtValue> inputs;
    ASSERT_TRUE(rt::makeInputs(*reference->graph(), io, inputs).ok());
    std::string result = compareRuns(*reference, *model, inputs);
    EXPECT_TRUE(result.empty() || result == "skip") << result;
    char nodes[32], inits[32];
    std::snprintf(nodes, sizeof nodes, "%zu -> %zu", nodes0, countNodes(*model->graph()));
    std::snprintf(inits, sizeof inits, "%zu -> %zu", inits0, countInitializers(*model->graph()));
    std::printf("%-12s %16s %16s %9.1f %8s\n", name, nodes, inits, ms,
                result.empty() ? "equal" : result == "skip" ? "not run" : "DIFFER");
  }
  if (!found)
    FAIL() << "no real models in " << cache << ": run scripts/fetch-models.sh";
}

} // namespace
} // namespace onnxslim
