//===- tests/conformance/ConformanceRunner.cpp - ONNX conformance suite ---===//
//
// Runs every case of the ONNX conformance suites that Debian's
// libonnx-testdata installs (node, pytorch-converted, pytorch-operator,
// simple) in process: loads <case>/model.onnx, runs each test_data_set_* on
// its input_*.pb files and compares with output_*.pb (rtol 1e-3, atol 1e-5
// for floats unless the case has a justified tolerance; exact otherwise).
// Tensors, sequences and optionals are read by the library's data-file
// reader (frontend/DataFile), as the kind of value the graph declares; the
// case list, tolerances, comparison and report are shared with the
// command-line runner (tests/conformance/ConformanceSuite.h).
//
// The checked-in expected_failures.txt lists known failures as
// `suite/case  # reason`. The run fails on any unlisted failure (a
// regression) and on any listed case that now passes (update the list).
//
// Usage: conformance_tests [--data DIR] [--expected FILE] [--suite NAME]
//          [--filter SUBSTR] [--jobs N] [--write-expected FILE] [--verbose]
//
//===----------------------------------------------------------------------===//
#include "frontend/DataFile.h"
#include "frontend/Loader.h"
#include "runtime/Inputs.h"
#include "runtime/Interpreter.h"
#include "tests/conformance/ConformanceSuite.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace onnxslim;
using namespace onnxslim::rt;
using namespace onnxslim::conformance;

namespace {

CaseResult runCase(const fs::path &dir, const std::string &name) {
  CaseResult r;
  r.name = name;
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](bool ok, std::string reason) {
    r.passed = ok;
    r.reason = shorten(std::move(reason));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  std::string error;
  std::unique_ptr<Model> model = loadModel((dir / "model.onnx").string(), error);
  if (!model)
    return finish(false, "load: " + error);
  const Graph *g = model->graph();
  if (!g)
    return finish(false, "model has no graph");
  double rtol, atol;
  toleranceFor(name, rtol, atol);
  std::vector<fs::path> sets = testDataSets(dir);
  if (sets.empty())
    return finish(false, "no test_data_set_* directory");
  RunOptions opts;
  opts.checkInputShapes = checksInputShapes(name);
  Interpreter interp(*model, OpRegistry::builtin(), opts);
  for (const fs::path &set : sets) {
    std::string setName = set.filename().string();
    std::vector<RtValue> inputs(g->inputs().size());
    std::vector<fs::path> inFiles = numbered(set, "input_");
    for (size_t i = 0; i < inFiles.size(); ++i) {
      std::string input = inputNameFor(*g, i, inFiles[i]);
      if (input.empty())
        return finish(false, setName + ": more input files than graph inputs");
      size_t slot = 0;
      DataValue v;
      if (!loadInputFile(*g, input, inFiles[i].string(), slot, v, error))
        return finish(false, setName + ": " + error);
      inputs[slot] = fromDataValue(v);
    }
    std::vector<RtValue> outputs;
    Status s = interp.run(*g, inputs, outputs);
    if (!s.ok())
      return finish(false, setName + ": " + s.message());
    std::string mismatch = compareOutputs(*g, numbered(set, "output_"), outputs, rtol, atol);
    if (!mismatch.empty())
      return finish(false, setName + ": " + mismatch);
  }
  return finish(true, "");
}

} // namespace

int main(int argc, char **argv) {
  std::string dataDir = ONNXSLIM_TESTDATA_DIR;
  std::string expectedPath = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/conformance/expected_failures.txt";
  std::string onlySuite, filter, writeExpected;
  bool verbose = false;
  unsigned jobs = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--data")
      dataDir = next();
    else if (a == "--expected")
      expectedPath = next();
    else if (a == "--suite")
      onlySuite = next();
    else if (a == "--filter")
      filter = next();
    else if (a == "--jobs")
      jobs = static_cast<unsigned>(std::max(1, std::atoi(next().c_str())));
    else if (a == "--write-expected")
      writeExpected = next();
    else if (a == "--verbose")
      verbose = true;
    else {
      std::cerr << "usage: conformance_tests [--data DIR] [--expected FILE] [--suite NAME] "
                   "[--filter SUBSTR] [--jobs N] [--write-expected FILE] [--verbose]\n";
      return 2;
    }
  }
  if (!fs::is_directory(dataDir)) {
    std::cerr << "conformance data not found at " << dataDir
              << " (install Debian package libonnx-testdata)\n";
    return 1;
  }
  std::vector<Case> cases = collectCases(dataDir, onlySuite, filter);
  // Run them on `jobs` threads.
  std::vector<CaseResult> results(cases.size());
  std::atomic<size_t> nextCase{0};
  auto worker = [&]() {
    for (size_t i; (i = nextCase++) < cases.size();) {
      results[i] = runCase(cases[i].dir, cases[i].name);
      if (verbose) {
        static std::mutex mu;
        std::lock_guard<std::mutex> lock(mu);
        std::cout << (results[i].passed ? "PASS " : "FAIL ") << results[i].name << " ("
                  << results[i].seconds << " s)"
                  << (results[i].passed ? "" : ": " + results[i].reason) << "\n";
      }
    }
  };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j)
    threads.emplace_back(worker);
  for (std::thread &t : threads)
    t.join();
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  size_t unexpected = report(results, expectedPath, writeExpected, "conformance", total, jobs);
  return unexpected == 0 || !writeExpected.empty() ? 0 : 1;
}
