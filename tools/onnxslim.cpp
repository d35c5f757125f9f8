//===- tools/onnxslim.cpp - The onnxslim command line ---------------------===//
//
//   onnxslim IN OUT [options]      optimize IN, write OUT, print a summary
//   onnxslim dump IN               print the IR as ONNX textual syntax
//
// Errors go to stderr as one line naming the file (and node, op and subgraph
// path where there is one) and the exit status is non-zero. The input is
// never modified and a half-written output never remains.
//
//===----------------------------------------------------------------------===//
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tools/ModelIO.h"
#include "tools/Summary.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

using namespace onnxslim;
using namespace onnxslim::tools;

namespace {

int fail(const std::string &message) {
  std::cerr << "onnxslim: error: " << message << "\n";
  return 1;
}

/// Refuses a model whose IR is broken (the frontend should have said why).
bool checkIR(const Model &model, const std::string &path, std::string &error) {
  std::vector<std::string> problems = verify(model, 1);
  if (problems.empty())
    return true;
  error = path + ": invalid model: " + problems.front();
  return false;
}

struct MainArgs {
  std::string input;
  std::string output;
  std::string emit = "onnx";
  bool externalData = false;
  bool quiet = false;
};

int runMain(const MainArgs &args) {
  auto start = std::chrono::steady_clock::now();
  std::string error;
  std::unique_ptr<Model> model = loadAny(args.input, error);
  if (!model || !checkIR(*model, args.input, error))
    return fail(error);
  ModelStats before = collectStats(*model);
  before.fileBytes = fileSize(args.input);

  // The pass pipeline runs here (transforms/): none exist yet, so the model
  // round-trips unchanged.

  SaveSettings settings;
  settings.emit = args.emit == "text" ? Emit::Text : Emit::Onnx;
  settings.externalData = args.externalData;
  if (!saveAny(*model, args.output, settings, error))
    return fail(error);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ModelStats after = collectStats(*model);
  after.fileBytes = fileSize(args.output);
  if (!args.quiet)
    printSummary(std::cout, args.input, before, args.output, after, seconds);
  return 0;
}

int runDump(const std::string &input, bool largeConstants) {
  std::string error;
  std::unique_ptr<Model> model = loadAny(input, error);
  if (!model || !checkIR(*model, input, error))
    return fail(error);
  PrintOptions opts;
  opts.printLargeConstants = largeConstants;
  printModel(std::cout, *model, opts);
  return std::cout ? 0 : fail("cannot write to standard output");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"onnxslim: an optimizing compiler for ONNX models"};
  app.require_subcommand(0, 1);

  MainArgs mainArgs;
  app.add_option("input", mainArgs.input, "Input model (.onnx, or ONNX textual syntax)");
  app.add_option("output", mainArgs.output, "Output model");
  app.add_option("--emit", mainArgs.emit, "Output form")->check(CLI::IsMember({"onnx", "text"}));
  app.add_flag("--save-as-external-data", mainArgs.externalData,
               "Write tensors of 1 KiB and more to <output>.data beside the output");
  app.add_flag("-q,--quiet", mainArgs.quiet, "Do not print the summary table");

  std::string dumpInput;
  bool largeConstants = false;
  CLI::App *dump = app.add_subcommand("dump", "Print a model as ONNX textual syntax");
  dump->add_option("input", dumpInput, "Input model")->required();
  dump->add_flag("--print-large-constants", largeConstants, "Print every constant in full");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (dump->parsed())
    return runDump(dumpInput, largeConstants);
  if (mainArgs.input.empty() || mainArgs.output.empty()) {
    std::cerr << app.help();
    return 2;
  }
  return runMain(mainArgs);
}
