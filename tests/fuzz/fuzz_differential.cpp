//===- tests/fuzz/fuzz_differential.cpp - Random graphs, checked numerically ===//
//
// libFuzzer entry point, structure-aware: the input bytes drive
// GraphGenerator, which writes a random valid model as ONNX text. The model
// is parsed, verified and validated; the interpreter runs it on seeded random
// inputs (transforms/ModelCheck, the --model-check machinery: NaN equal to
// NaN, |a - b| <= 1e-5 + 1e-4 * |b|); the default pipeline optimizes it with
// the IR verifier after every pass (--verify-each); the optimized model is
// validated, must compute the same outputs, and must survive serialization
// (backend) and loading (frontend) computing them still.
//
// Findings (abort, both models printed): a crash or sanitizer report, a
// generated model the parser, verifier or validator refuses (a generator or
// validator bug), the pass manager stopping, an invalid optimized model, or
// different outputs. A generated model the interpreter cannot run is
// skipped and counted by reason. At exit (and at every power of two) the
// counts of generated and checked graphs are printed. ONNXSLIM_FUZZ_PRINT=1
// prints each generated model before it is used.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "frontend/TextParser.h"
#include "ir/IR.h"
#include "ir/Verifier.h"
#include "tests/fuzz/FuzzSupport.h"
#include "tests/fuzz/GraphGenerator.h"
#include "transforms/ModelCheck.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace onnxslim;

namespace {

uint64_t generated = 0;
uint64_t checked = 0;
uint64_t skipped = 0;
std::map<std::string, uint64_t> skipReasons;

void printSummary() {
  std::fprintf(stderr,
               "fuzz_differential: %llu random graphs generated, %llu checked (optimized, validated and "
               "compared in the interpreter), %llu skipped (the interpreter cannot run the input)\n",
               static_cast<unsigned long long>(generated), static_cast<unsigned long long>(checked),
               static_cast<unsigned long long>(skipped));
  std::vector<std::pair<uint64_t, std::string>> top;
  for (const auto &[reason, n] : skipReasons)
    top.emplace_back(n, reason);
  std::sort(top.rbegin(), top.rend());
  for (size_t i = 0; i < top.size() && i < 5; ++i)
    std::fprintf(stderr, "  skipped %llu x: %s\n", static_cast<unsigned long long>(top[i].first),
                 top[i].second.c_str());
}

/// A finding: the counts so far, then the report (aborts).
[[noreturn]] void fail(const std::string &what, const std::string &input, const std::string &output = {}) {
  printSummary();
  fuzz::finding(what, input, output);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::atexit(printSummary);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text = fuzz::generateModelText(data, size);
  ++generated;
  // ONNXSLIM_FUZZ_PRINT=1: show the model first (to see what a sanitizer report was about).
  static const bool print = std::getenv("ONNXSLIM_FUZZ_PRINT") != nullptr;
  if (print)
    std::fprintf(stderr, "%s", text.c_str());
  std::string error;
  std::unique_ptr<Model> model = parseModelText(text, error, "generated.onnxtxt");
  if (!model)
    fail("the generated model does not parse: " + error, text);
  std::vector<std::string> problems = verify(*model, 1);
  if (!problems.empty())
    fail("the generated model fails the IR verifier: " + problems.front(), text);
  if (!fuzz::validateInput(*model, error))
    fail("the validator refuses a generated (valid) model: " + error, text);

  ModelCheckOptions options;
  options.seed = size ? data[size - 1] : 0;
  std::unique_ptr<OutputChecker> checker = createRuntimeOutputChecker(options);
  if (!checker->recordReference(*model, error)) {
    ++skipped;
    ++skipReasons[error.substr(0, 120)];
    return 0;
  }

  if (!fuzz::runDefaultPipeline(*model, error))
    fail("default pipeline: " + error, text, fuzz::modelText(*model));
  if (!fuzz::validateOutput(*model, error))
    fail("the optimized model is invalid: " + error, text, fuzz::modelText(*model));
  std::string report;
  if (!checker->matchesReference(*model, report))
    fail("the optimized model computes something else:\n" + report, text, fuzz::modelText(*model));

  std::string bytes = serializeModel(*model, error);
  if (bytes.empty())
    fail("the optimized model cannot be serialized: " + error, text, fuzz::modelText(*model));
  std::unique_ptr<Model> again = loadModelFromString(std::move(bytes), "optimized.onnx", "", error);
  if (!again || !verify(*again, 1).empty())
    fail("the optimized model does not load back: " + error, text, fuzz::modelText(*model));
  if (!checker->matchesReference(*again, report))
    fail("the optimized model, written and read back, computes something else:\n" + report, text,
                  fuzz::modelText(*again));

  ++checked;
  if ((checked & (checked - 1)) == 0)
    std::fprintf(stderr, "fuzz_differential: checked %llu random graphs\n", static_cast<unsigned long long>(checked));
  return 0;
}
