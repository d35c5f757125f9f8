//===- tests/fuzz/FuzzSupport.cpp - What the fuzzers share ----------------===//
//
// See FuzzSupport.h. Pass warnings and debug lines go to a null stream: a
// fuzzer runs the pipeline thousands of times a second.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzSupport.h"

#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Validate.h"
#include "transforms/PassManager.h"
#include "transforms/PassRegistry.h"
#include "transforms/Passes.h"
#include "transforms/ShapeInferencePass.h"

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <streambuf>

namespace onnxslim::fuzz {

namespace {

/// A stream that discards everything.
class NullBuffer : public std::streambuf {
protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char *, std::streamsize n) override { return n; }
};

std::ostream &nullStream() {
  static NullBuffer buffer;
  static std::ostream stream(&buffer);
  return stream;
}

const PassRegistry &registry() {
  static const PassRegistry r = PassRegistry::withBuiltinPasses();
  return r;
}

} // namespace

bool runDefaultPipeline(Model &model, std::string &error) {
  PassManagerOptions options;
  options.verifyEach = true;
  options.log = &nullStream();
  PassManager pm(registry(), options);
  pm.context().setDebugStream(nullStream());
  if (!pm.parsePipeline(targetPipeline("onnx"), error)) {
    error = "the default pipeline does not parse: " + error;
    return false;
  }
  // As tools/onnxslim.cpp: the default pipeline runs to a fixed point (10 rounds),
  // then the inferred types are recorded as value_info.
  pm.setMaxRounds(10);
  if (!pm.run(model, error))
    return false;
  inferAndRecordValueInfo(model);
  dropUnrecordedTypes(model);
  return true;
}

// ===== VALIDATION (ir/Validate.h, issue 10 item 1) ==========================
// validateInput filters what the optimizer would refuse (fuzz_load_pipeline
// then skips the input); validateOutput runs on every optimized model before
// it is serialized, and a failure there is a finding: a valid input must give
// a valid output, as `onnxslim IN OUT` requires before writing.
namespace {
bool validateModel(const Model &model, bool forWriting, std::string &error) {
  ValidateOptions options;
  options.forWriting = forWriting;
  options.file = "fuzz";
  options.maxDiagnostics = 1;
  std::vector<std::string> problems = validate(model, options);
  if (problems.empty())
    return true;
  error = problems.front();
  return false;
}
} // namespace

bool validateInput(const Model &model, std::string &error) { return validateModel(model, false, error); }

bool validateOutput(const Model &model, std::string &error) { return validateModel(model, true, error); }
// ===== END VALIDATION HOOK ===================================================

void finding(const std::string &what, const std::string &inputText, const std::string &outputText) {
  std::fprintf(stderr, "\n==== onnxslim fuzz finding: %s\n", what.c_str());
  if (!inputText.empty())
    std::fprintf(stderr, "==== input model:\n%s\n", inputText.c_str());
  if (!outputText.empty())
    std::fprintf(stderr, "==== output model:\n%s\n", outputText.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string modelText(const Model &model) {
  PrintOptions options;
  options.printLargeConstants = true;
  return toText(model, options);
}

} // namespace onnxslim::fuzz
