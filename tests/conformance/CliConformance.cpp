//===- tests/conformance/CliConformance.cpp - Conformance through the CLI -===//
//
// The ONNX conformance suite run through the command line: for every case
// and test_data_set_*, runs the real binary as a process,
//
//   onnxslim run <case>/model.onnx --input NAME=input_0.pb ...
//                --output-dir TMP -q
//
// (NAME as the in-process runner feeds that file; --no-input-shape-check
// for the few cases whose data contradicts the declared shapes), then reads
// every output's file back (TMP/<output name>.pb, named by backend/Writer.h
// dataFileNames) with the library's data-file reader, as the kind the
// output declares, checks that it carries the output's name,
// and compares it with output_N.pb under the in-process runner's
// tolerances. Cases, tolerances, comparison and the report are shared with
// that runner (ConformanceSuite.h), and the result is judged against the
// same expected_failures.txt: the command line must pass exactly the cases
// the interpreter passes in process.
//
// Usage: cli_conformance_tests --binary PATH [--data DIR] [--expected FILE]
//          [--suite NAME] [--filter SUBSTR] [--jobs N] [--verbose]
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/DataFile.h"
#include "frontend/Loader.h"
#include "runtime/Inputs.h"
#include "tests/conformance/ConformanceSuite.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

using namespace onnxslim;
using namespace onnxslim::conformance;

namespace {

std::string firstLine(const fs::path &p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

/// Given argv and a file for the child's stdout and stderr, Execute: runs
/// it and waits, Result: its exit status (-1 if it did not exit normally or
/// could not start).
int runProcess(const std::vector<std::string> &args, const fs::path &log) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Given a graph and the directory `onnxslim run` wrote to, Execute: reads
/// each output back as the kind it declares, Result: "" and the values in
/// graph order, or why not.
std::string readWrittenOutputs(const Graph &g, const fs::path &dir, std::vector<rt::RtValue> &out) {
  // The files `onnxslim run` writes the outputs to (backend/Writer.h).
  std::vector<std::string> names;
  for (size_t k = 0; k < g.numOutputs(); ++k)
    names.push_back(g.output(k) ? g.output(k)->name() : "");
  std::vector<std::string> files = dataFileNames(names);
  for (size_t k = 0; k < g.numOutputs(); ++k) {
    const GraphOutput &slot = g.outputSlots()[k];
    std::string name = g.output(k) ? g.output(k)->name() : "";
    std::optional<Type> ty = slot.type;
    if (!ty && slot.use.get())
      ty = slot.use.get()->type();
    fs::path file = dir / files[k];
    std::optional<DataValue::Kind> kind = dataKindOf(ty);
    DataValue v;
    std::string error;
    bool ok = kind ? loadDataFile(file.string(), *kind, v, error) : loadDataFileAnyKind(file.string(), v, error);
    if (!ok)
      return "reading what `onnxslim run` wrote: " + error;
    if (v.name != name)
      return file.string() + " is named '" + v.name + "', not '" + name + "'";
    out.push_back(rt::fromDataValue(v));
  }
  return "";
}

CaseResult runCase(const std::string &binary, const Case &c, const fs::path &scratch) {
  CaseResult r;
  r.name = c.name;
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](bool ok, std::string reason) {
    r.passed = ok;
    r.reason = shorten(std::move(reason));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::error_code ec;
    fs::remove_all(scratch, ec);
    return r;
  };
  std::string error;
  fs::path modelPath = c.dir / "model.onnx";
  std::unique_ptr<Model> model = loadModel(modelPath.string(), error);
  if (!model)
    return finish(false, "load: " + error);
  const Graph *g = model->graph();
  if (!g)
    return finish(false, "model has no graph");
  double rtol, atol;
  toleranceFor(c.name, rtol, atol);
  std::vector<fs::path> sets = testDataSets(c.dir);
  if (sets.empty())
    return finish(false, "no test_data_set_* directory");
  for (const fs::path &set : sets) {
    std::string setName = set.filename().string();
    std::error_code ec;
    fs::remove_all(scratch, ec);
    fs::create_directories(scratch, ec);
    fs::path outDir = scratch / "out";
    std::vector<std::string> args = {binary, "run", modelPath.string()};
    std::vector<fs::path> inFiles = numbered(set, "input_");
    for (size_t i = 0; i < inFiles.size(); ++i) {
      std::string input = inputNameFor(*g, i, inFiles[i]);
      if (input.empty())
        return finish(false, setName + ": more input files than graph inputs");
      args.push_back("--input");
      args.push_back(input + "=" + inFiles[i].string());
    }
    for (const char *a : {"--output-dir", outDir.c_str(), "-q"})
      args.emplace_back(a);
    if (!checksInputShapes(c.name))
      args.emplace_back("--no-input-shape-check");
    fs::path log = scratch / "log.txt";
    int status = runProcess(args, log);
    if (status != 0)
      return finish(false, setName + ": onnxslim run exited with " + std::to_string(status) + ": " + firstLine(log));
    std::vector<rt::RtValue> outputs;
    std::string problem = readWrittenOutputs(*g, outDir, outputs);
    if (problem.empty())
      problem = compareOutputs(*g, numbered(set, "output_"), outputs, rtol, atol);
    if (!problem.empty())
      return finish(false, setName + ": " + problem);
  }
  return finish(true, "");
}

} // namespace

int main(int argc, char **argv) {
  std::string binary;
  std::string dataDir = ONNXSLIM_TESTDATA_DIR;
  std::string expectedPath = std::string(ONNXSLIM_SOURCE_DIR) + "/tests/conformance/expected_failures.txt";
  std::string onlySuite, filter;
  bool verbose = false;
  unsigned jobs = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--binary")
      binary = next();
    else if (a == "--data")
      dataDir = next();
    else if (a == "--expected")
      expectedPath = next();
    else if (a == "--suite")
      onlySuite = next();
    else if (a == "--filter")
      filter = next();
    else if (a == "--jobs")
      jobs = static_cast<unsigned>(std::max(1, std::atoi(next().c_str())));
    else if (a == "--verbose")
      verbose = true;
    else {
      std::cerr << "usage: cli_conformance_tests --binary PATH [--data DIR] [--expected FILE] [--suite NAME] "
                   "[--filter SUBSTR] [--jobs N] [--verbose]\n";
      return 2;
    }
  }
  if (binary.empty() || !fs::exists(binary)) {
    std::cerr << "the onnxslim binary '" << binary << "' does not exist (build target onnxslim_cli)\n";
    return 1;
  }
  if (!fs::is_directory(dataDir)) {
    std::cerr << "conformance data not found at " << dataDir << " (install Debian package libonnx-testdata)\n";
    return 1;
  }
  std::vector<Case> cases = collectCases(dataDir, onlySuite, filter);
  if (cases.empty()) {
    std::cerr << "no conformance case found under " << dataDir << "\n";
    return 1;
  }
  fs::path scratchRoot = fs::temp_directory_path() / ("onnxslim-cli-conformance-" + std::to_string(::getpid()));
  std::vector<CaseResult> results(cases.size());
  std::atomic<size_t> nextCase{0};
  std::mutex mu;
  auto worker = [&](unsigned id) {
    fs::path scratch = scratchRoot / std::to_string(id);
    for (size_t i; (i = nextCase++) < cases.size();) {
      results[i] = runCase(binary, cases[i], scratch);
      if (verbose) {
        std::lock_guard<std::mutex> lock(mu);
        std::cout << (results[i].passed ? "PASS " : "FAIL ") << results[i].name << " (" << results[i].seconds
                  << " s)" << (results[i].passed ? "" : ": " + results[i].reason) << "\n";
      }
    }
  };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j)
    threads.emplace_back(worker, j);
  for (std::thread &t : threads)
    t.join();
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  fs::remove_all(scratchRoot, ec);
  size_t unexpected = report(results, expectedPath, "", "cli conformance", total, jobs);
  return unexpected == 0 ? 0 : 1;
}
