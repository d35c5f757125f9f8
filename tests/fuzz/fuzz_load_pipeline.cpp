//===- tests/fuzz/fuzz_load_pipeline.cpp - Bytes -> load -> pipeline -> save ===//
//
// libFuzzer entry point: the input is a serialized ModelProto. It is loaded
// (frontend, external data resolved only inside an empty directory), checked
// by the IR verifier as `onnxslim` does, run through the default pipeline
// with the verifier after every pass, validated, serialized (backend) and
// loaded again. A model the frontend refuses, or whose IR the verifier
// refuses on load, is not interesting. Findings (abort): a crash or sanitizer
// report anywhere; the pass manager stopping (broken invariant or contract);
// an optimized model that fails validation, cannot be serialized, or whose
// bytes do not load back into a sound IR.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/Loader.h"
#include "ir/IR.h"
#include "ir/Verifier.h"
#include "tests/fuzz/FuzzSupport.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace onnxslim;

namespace {

/// An empty directory to resolve external-data locations in (they all fail).
const std::string &emptyDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/onnxslim-fuzz-XXXXXX";
    const char *d = mkdtemp(tmpl);
    return std::string(d ? d : "/nonexistent-onnxslim-fuzz-dir");
  }();
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::unique_ptr<Model> model =
      loadModelFromString(std::string(reinterpret_cast<const char *>(data), size), "fuzz.onnx", emptyDir(), error);
  if (!model || !verify(*model, 1).empty())
    return 0;
  if (!fuzz::validateInput(*model, error))
    return 0;
  std::string inputText = fuzz::modelText(*model);

  if (!fuzz::runDefaultPipeline(*model, error))
    fuzz::finding("default pipeline: " + error, inputText);
  if (!fuzz::validateOutput(*model, error))
    fuzz::finding("the optimized model is invalid: " + error, inputText, fuzz::modelText(*model));

  std::string bytes = serializeModel(*model, error);
  if (bytes.empty())
    fuzz::finding("the optimized model cannot be serialized: " + error, inputText, fuzz::modelText(*model));
  std::unique_ptr<Model> again = loadModelFromString(std::move(bytes), "optimized.onnx", emptyDir(), error);
  if (!again)
    fuzz::finding("the optimized model does not load back: " + error, inputText, fuzz::modelText(*model));
  std::vector<std::string> problems = verify(*again, 1);
  if (!problems.empty())
    fuzz::finding("the optimized model loads back broken: " + problems.front(), inputText, fuzz::modelText(*model));
  return 0;
}
